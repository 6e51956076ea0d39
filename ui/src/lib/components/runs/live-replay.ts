// Live replay from the Runs view: the server plays a stored run's events
// again into a replay stream of its own (`POST /api/hitl/replays`), at 1x,
// 2x or 10x its original pace, with pause, step and stop; this module starts
// and controls one and reads its stream (fetch, so the token stays in the
// Authorization header). Replayed events arrive as frames marked
// `replay: true` and never touch the page's live event stream.

import { attempt, type Answer, type Api } from "../../api/client";
import type { ReplayFrame, ReplayStatus } from "../../api/types";
import { SseParser } from "../../stores/sse";

/** The speeds the controls offer. */
export const SPEEDS = [1, 2, 10] as const;

export type ReplayControl = "pause" | "resume" | "step" | "stop";

/** Starts replaying the stored run `runId` at `speed` (held at its start when `paused`). */
export function startReplay(api: Api, runId: string, speed: number, paused = false): Promise<Answer<ReplayStatus>> {
  return attempt("start the replay", () => api.POST("/api/hitl/replays", { body: { run_id: runId, speed, paused } }));
}

/** Pauses, resumes, steps or stops a replay, or sets its speed. */
export function controlReplay(api: Api, id: string, action: ReplayControl | null, speed?: number): Promise<Answer<ReplayStatus>> {
  const body = { ...(action ? { action } : {}), ...(speed ? { speed } : {}) };
  return attempt(`${action ?? "change"} the replay`, () =>
    api.POST("/api/hitl/replays/{replay_id}/control", { params: { path: { replay_id: id } }, body }),
  );
}

export interface ReplayHandlers {
  onFrame(frame: ReplayFrame): void;
  onStatus(status: ReplayStatus): void;
}

/** Reads a replay's stream until it ends or `signal` aborts; frames are handed over once each, in order. */
export async function followReplay(api: Api, id: string, handlers: ReplayHandlers, signal: AbortSignal): Promise<void> {
  const { data } = await api.GET("/api/hitl/replays/{replay_id}/events", {
    params: { path: { replay_id: id } },
    parseAs: "stream",
    signal,
  });
  if (!data) return;
  let next = 0;
  const parser = new SseParser((message) => {
    const value = parse(message.data);
    if (value === null) return;
    if (message.event === "replay_state") handlers.onStatus(value as ReplayStatus);
    else if (message.event === "replay") {
      const frame = value as ReplayFrame;
      if (frame.replay !== true || frame.index < next) return;
      next = frame.index + 1;
      handlers.onFrame(frame);
    }
  });
  const reader = (data as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) return;
      parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The later of two states of a replay: an answer to a control may arrive
 * after the stream already told of events sent since, or of the end.
 */
export function fresher(current: ReplayStatus | null, incoming: ReplayStatus): ReplayStatus {
  if (!current || current.id !== incoming.id) return incoming;
  const ended = (s: ReplayStatus) => s.state === "finished" || s.state === "stopped";
  if (current.sent > incoming.sent || (ended(current) && !ended(incoming))) return current;
  return incoming;
}

/** "+1.5 s" from the recording's start, as the frame list shows it. */
export function offsetLabel(ms: number): string {
  if (ms < 1000) return `+${ms} ms`;
  const s = ms / 1000;
  return s < 60 ? `+${Number(s.toFixed(1))} s` : `+${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

import { describe, expect, it } from "vitest";
import type { Api } from "../../api/client";
import type { ReplayFrame, ReplayStatus } from "../../api/types";
import { followReplay, fresher, offsetLabel } from "./live-replay";

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      // In two pieces, split inside a message.
      controller.enqueue(bytes.slice(0, 40));
      controller.enqueue(bytes.slice(40));
      controller.close();
    },
  });
}

const frame = (index: number, replay = true) => JSON.stringify({ replay, replay_id: "r", index, total: 3, offset_ms: index * 1000, event: { type: "turn_added" } });

describe("following a replay", () => {
  it("hands over each frame marked as replay once, in order, and the states", async () => {
    const text =
      `event: replay_state\ndata: {"id":"r","state":"playing"}\n\n` +
      `event: replay\nid: 0\ndata: ${frame(0)}\n\n` +
      `event: replay\nid: 0\ndata: ${frame(0)}\n\n` +
      `event: replay\nid: 1\ndata: ${frame(1, false)}\n\n` +
      `event: replay\nid: 2\ndata: ${frame(2)}\n\n` +
      `event: replay_state\ndata: {"id":"r","state":"finished"}\n\n`;
    const api = { GET: async () => ({ data: streamOf(text) }) } as unknown as Api;
    const frames: ReplayFrame[] = [];
    const states: ReplayStatus[] = [];
    await followReplay(api, "r", { onFrame: (f) => frames.push(f), onStatus: (s) => states.push(s) }, new AbortController().signal);
    expect(frames.map((f) => f.index)).toEqual([0, 2]);
    expect(states.map((s) => s.state)).toEqual(["playing", "finished"]);
  });
});

describe("offsets", () => {
  it("read as time from the recording's start", () => {
    expect([offsetLabel(250), offsetLabel(1500), offsetLabel(95_000)]).toEqual(["+250 ms", "+1.5 s", "+1 min 35 s"]);
  });
});

describe("the replay's state", () => {
  const at = (state: ReplayStatus["state"], sent: number) => ({ id: "r", state, sent, total: 6, speed: 10, run_ids: [], started_by: "alice" }) as ReplayStatus;
  it("keeps what the stream told when a control's answer comes later", () => {
    expect(fresher(at("finished", 6), at("playing", 2)).state).toBe("finished");
    expect(fresher(at("playing", 4), at("playing", 2)).sent).toBe(4);
    expect(fresher(at("playing", 2), at("paused", 2)).state).toBe("paused");
    expect(fresher(null, at("paused", 0)).state).toBe("paused");
  });
});

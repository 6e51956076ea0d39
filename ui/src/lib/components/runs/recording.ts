// Recordings from the runs view: the file name an export is saved under,
// and a chosen file read back as a recording to import (the server checks
// it in full; this only refuses what is plainly not a recording, with a
// message a reviewer understands).

import type { ApiError } from "../../api/client";
import type { Recording } from "../../api/types";

/**
 * `gatehouse-run-<title>-<yyyymmdd-hhmm>.json` (`gatehouse-session-…` for a
 * session's), safe on every file system; the id's tail without a title.
 */
export function recordingFileName(title: string, id: string, now: Date, of: "run" | "session" = "run"): string {
  const slug =
    title
      .normalize("NFKD")
      .replace(/[^\w\s-]/g, "")
      .trim()
      .toLowerCase()
      .replace(/[\s_]+/g, "-")
      .replace(/-+/g, "-")
      .slice(0, 40)
      .replace(/-$/, "") || id.slice(-12);
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}`;
  return `gatehouse-${of}-${slug}-${stamp}.json`;
}

/** A file's text as a recording, or why it is not one. */
export function parseRecording(text: string): { recording: Recording } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `This file is not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  const r = value as Partial<Recording> | null;
  if (r === null || typeof r !== "object" || Array.isArray(r)) return { problem: "This file is not a recording (not a JSON object)." };
  if (typeof r.format !== "string" || !Array.isArray(r.runs) || !Array.isArray(r.events)) {
    return { problem: "This file is not a Gatehouse recording (it lacks format, runs or events)." };
  }
  return { recording: r as Recording };
}

/**
 * The run a refused import already finds in this database, or null when the
 * refusal is something else: a 409 `conflict` whose `field` points at the
 * run's id in the recording sent (`runs[0].run.id`).
 */
export function alreadyImported(error: ApiError, recording: Recording): string | null {
  if (error.status !== 409 || error.code !== "conflict") return null;
  const at = /^runs\[(\d+)\]\.run\.id$/.exec(error.field ?? "");
  if (!at) return null;
  return recording.runs[Number(at[1])]?.run?.id ?? null;
}

/** What an import brought in, in a sentence. */
export function importSentence(summary: { runs: string[]; gates: number; events: number }): string {
  const n = summary.runs.length;
  return `Imported ${n} run${n === 1 ? "" : "s"}, ${summary.gates} gate${summary.gates === 1 ? "" : "s"} and ${summary.events} event${summary.events === 1 ? "" : "s"}.`;
}

/**
 * Saves a recording as a file: a download in a browser; in the desktop app
 * the same download ends in the system's save dialog.
 */
export function saveRecording(name: string, recording: Recording, doc: Document = document): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(recording, null, 2)], { type: "application/json" }));
  const a = doc.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// Browser notifications, as the desktop app gives them: while the page is
// in the background, each new sync gate (its agent stopped, waiting) raises
// one notification, "AGENT is waiting for you" over the gate's preview;
// clicking it brings the page forward and opens the gate. Each alert the
// server raises (a threshold crossed) raises one too, over its message;
// clicking it brings the page forward on the Metrics view, where alerts
// and their thresholds are. Permission is
// asked only when the reviewer presses the header's button, never on load.
// Inside the desktop app its own notifications serve, so none is offered.

import type { LogEvent } from "./api/types";
import { plainText } from "./plain-text";
import { previewOf } from "./format";

export type Permission = NotificationPermission | "unsupported";

/** What one notification says, and the gate its click opens (none for an alert). */
export interface Note {
  title: string;
  body: string;
  gateId: string;
  /** Set for an alert: its key, so a repeated event is not told twice. */
  alertKey?: string;
}

/** The notifications a batch of events calls for: one per sync gate opened and per alert raised, in order. */
export function notesFor(events: readonly LogEvent[]): Note[] {
  const notes: Note[] = [];
  for (const e of events) {
    if (e.type === "alert_raised") {
      notes.push({ title: "Gatehouse alert", body: plainText(e.alert.message), gateId: "", alertKey: `alert-${e.seq}` });
      continue;
    }
    if (e.type !== "gate_opened" || e.gate.mode !== "sync") continue;
    notes.push({ title: `${e.gate.agent} is waiting for you`, body: previewOf(plainText(e.gate.text)), gateId: e.gate.id });
  }
  return notes;
}

/** The window as far as notifications go (a test hands in its own). */
export type NotifyingWindow = Pick<Window, "focus" | "document"> & { Notification?: typeof Notification };

export class GateNotifier {
  permission = $state<Permission>("unsupported");
  #win: NotifyingWindow;
  #onopen: (gateId: string) => void;
  #onalert: () => void;
  /** Gates already notified: the stream may repeat an event after a reconnection. */
  #told = new Set<string>();

  /** `onopen` opens a gate a notification names; `onalert` shows the alerts. */
  constructor(win: NotifyingWindow, onopen: (gateId: string) => void, onalert: () => void = () => {}) {
    this.#win = win;
    this.#onopen = onopen;
    this.#onalert = onalert;
    this.permission = win.Notification ? win.Notification.permission : "unsupported";
  }

  /** Asks for permission: call it from a click or a key press only. */
  async ask(): Promise<void> {
    const api = this.#win.Notification;
    if (!api) return;
    this.permission = await api.requestPermission();
  }

  /** Raises the notifications `events` call for, when permitted and the page is out of sight. */
  notify(events: readonly LogEvent[]): void {
    const api = this.#win.Notification;
    if (!api || this.permission !== "granted" || this.#win.document.visibilityState !== "hidden") return;
    for (const note of notesFor(events)) {
      const key = note.alertKey ?? note.gateId;
      if (this.#told.has(key)) continue;
      this.#told.add(key);
      const shown = new api(note.title, { body: note.body, tag: note.alertKey ?? `gate-${note.gateId}` });
      shown.onclick = () => {
        this.#win.focus();
        shown.close();
        if (note.alertKey) this.#onalert();
        else this.#onopen(note.gateId);
      };
    }
  }
}

// Browser notifications: one per new sync gate, only while the page is hidden and permitted; a click opens the gate.

import { describe, expect, it } from "vitest";
import type { LogEvent } from "./api/types";
import { GateNotifier, notesFor } from "./notifications.svelte";

const opened = (id: string, mode: string, text = "**Deploy** `v2`?") =>
  ({ type: "gate_opened", at: "2026-01-01T00:00:00Z", actor: "deployer", gate: { id, mode, agent: "deployer", text } }) as unknown as LogEvent;

function fakeWindow(visibility: "hidden" | "visible", permission: NotificationPermission = "granted") {
  const shown: { title: string; body: string; onclick: (() => void) | null; closed: boolean }[] = [];
  const state = { focused: 0 };
  class FakeNotification {
    static permission = permission;
    static requestPermission = async () => "granted" as NotificationPermission;
    onclick: (() => void) | null = null;
    closed = false;
    constructor(
      public title: string,
      options: { body: string },
    ) {
      shown.push(Object.assign(this, { body: options.body }) as never);
    }
    close() {
      this.closed = true;
    }
  }
  const win = { Notification: FakeNotification, document: { visibilityState: visibility }, focus: () => state.focused++ } as unknown as Window;
  return { win, shown, state };
}

describe("notifications", () => {
  it("names the agent over the gate's preview as plain text, for sync gates only", () => {
    expect(notesFor([opened("g1", "sync"), opened("g2", "async"), opened("g3", "advisory")])).toEqual([
      { title: "deployer is waiting for you", body: "Deploy v2?", gateId: "g1" },
    ]);
  });

  it("raises one per sync gate while the page is hidden; a click focuses the page and opens the gate", () => {
    const { win, shown, state } = fakeWindow("hidden");
    const opens: string[] = [];
    const notifier = new GateNotifier(win, (id) => opens.push(id));
    notifier.notify([opened("g1", "sync"), opened("g2", "async")]);
    notifier.notify([opened("g1", "sync")]);
    expect(shown.map((n) => n.title)).toEqual(["deployer is waiting for you"]);
    shown[0]!.onclick!();
    expect(state.focused).toBe(1);
    expect(opens).toEqual(["g1"]);
  });

  it("raises one per alert raised, over its message, once however often the event comes; a click shows the alerts", () => {
    const { win, shown, state } = fakeWindow("hidden");
    const opens: string[] = [];
    let alertsShown = 0;
    const notifier = new GateNotifier(win, (id) => opens.push(id), () => alertsShown++);
    const raised = { type: "alert_raised", seq: 7, alert: { kind: "pending_queue", message: "12 gates pending (alert over 10)" } } as unknown as LogEvent;
    const cleared = { type: "alert_cleared", seq: 8, alert: { kind: "pending_queue", message: "cleared" } } as unknown as LogEvent;
    notifier.notify([raised, cleared]);
    notifier.notify([raised]);
    expect(shown.map((n) => [n.title, n.body])).toEqual([["Gatehouse alert", "12 gates pending (alert over 10)"]]);
    shown[0]!.onclick!();
    expect(opens).toEqual([]);
    expect(alertsShown).toBe(1);
    expect(state.focused).toBe(1);
  });

  it("stays quiet while the page is in sight, or without permission", () => {
    const visible = fakeWindow("visible");
    new GateNotifier(visible.win, () => {}).notify([opened("g1", "sync")]);
    expect(visible.shown).toHaveLength(0);
    const refused = fakeWindow("hidden", "default");
    new GateNotifier(refused.win, () => {}).notify([opened("g1", "sync")]);
    expect(refused.shown).toHaveLength(0);
  });

  it("asks for permission only when told to", async () => {
    const { win } = fakeWindow("hidden", "default");
    const notifier = new GateNotifier(win, () => {});
    expect(notifier.permission).toBe("default");
    await notifier.ask();
    expect(notifier.permission).toBe("granted");
  });
});

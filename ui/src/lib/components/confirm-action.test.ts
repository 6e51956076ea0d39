import { describe, expect, it } from "vitest";
import type { Answer, ApiError } from "../api/client";
import { ConfirmAction } from "./confirm-action.svelte";

const ENDED: ApiError = { status: 409, code: "conflict", field: null, message: "the run has ended", resolvedBy: null, resolvedAt: null };

describe("a two-step action", () => {
  it("asks first, unless disabled, and a cancel keeps things as they are", () => {
    const step = new ConfirmAction();
    step.ask(true);
    expect(step.asking).toBe(false);
    step.ask();
    expect(step.asking).toBe(true);
    step.cancel();
    expect(step.asking).toBe(false);
  });

  it("gives the answer once confirmed and closes the confirmation", async () => {
    const step = new ConfirmAction();
    step.ask();
    const sent = step.confirm(async (): Promise<Answer<string>> => ({ ok: true, value: "done" }));
    expect(step.busy).toBe(true);
    expect(await sent).toEqual({ value: "done" });
    expect([step.asking, step.busy, step.problem]).toEqual([false, false, null]);
  });

  it("keeps what the server refused, and clears it after a success", async () => {
    const step = new ConfirmAction();
    step.ask();
    expect(await step.confirm(async (): Promise<Answer<string>> => ({ ok: false, message: "the run has ended", error: ENDED }))).toBeNull();
    expect([step.asking, step.problem]).toEqual([false, "the run has ended"]);
    step.ask();
    await step.confirm(async (): Promise<Answer<number>> => ({ ok: true, value: 1 }));
    expect(step.problem).toBeNull();
  });

  it("never sends a second one while the first is on its way", async () => {
    const step = new ConfirmAction();
    let sent = 0;
    let finish: (a: Answer<string>) => void = () => {};
    const first = step.confirm(() => {
      sent += 1;
      return new Promise<Answer<string>>((resolve) => (finish = resolve));
    });
    expect(await step.confirm(async () => ({ ok: true, value: "again" }))).toBeNull();
    finish({ ok: true, value: "once" });
    expect(await first).toEqual({ value: "once" });
    expect(sent).toBe(1);
  });
});

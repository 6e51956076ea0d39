import { describe, expect, it } from "vitest";
import type { LogEvent, SlaCompliance } from "../../api/types";
import { slaRows, thresholdLines, touchesAlerts } from "./alerts";

const row = (priority: SlaCompliance["priority"], gates: number, within: number, target_ms: number): SlaCompliance => ({
  priority,
  gates,
  within_target: within,
  target_ms,
  compliance: gates === 0 ? null : within / gates,
});

describe("the SLA table", () => {
  it("lists the most urgent first and flags a priority under 90 %", () => {
    const rows = slaRows([row("low", 0, 0, 86_400_000), row("normal", 4, 4, 14_400_000), row("high", 1, 1, 3_600_000), row("urgent", 4, 3, 900_000)]);
    expect(rows.map((r) => r.priority)).toEqual(["urgent", "high", "normal", "low"]);
    expect(rows[0]).toMatchObject({ share: "75 %", detail: "3 of 4 within target", behind: true });
    expect(rows[3]).toMatchObject({ share: "–", detail: "no gates yet", behind: false });
  });
});

describe("the thresholds", () => {
  it("words only the ones set", () => {
    const lines = thresholdLines({ pending_queue: 10, auto_pass_rate_percent: 80, window_minutes: 30, sla: { low_ms: 1, normal_ms: 1, high_ms: 1, urgent_ms: 1 } });
    expect(lines).toEqual(["More than 10 gates pending", "Auto-pass rate over 80 % in 30 min"]);
  });
});

describe("alert events", () => {
  it("are told apart from gate events", () => {
    expect(touchesAlerts([{ type: "alert_raised" } as LogEvent])).toBe(true);
    expect(touchesAlerts([{ type: "gate_opened" } as LogEvent])).toBe(false);
  });
});

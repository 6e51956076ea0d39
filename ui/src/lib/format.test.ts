import { describe, expect, it } from "vitest";
import { formatAge, formatClock, formatUntil, outcomeLabel, previewOf, shortId, timeKey, truncate } from "./format";

const NOW = Date.parse("2026-01-01T12:00:00Z");
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

describe("formatAge", () => {
  it("reads as the blocker panel shows it: 5m ago, 2h ago", () => {
    expect(formatAge(ago(5 * 60), NOW)).toBe("5m ago");
    expect(formatAge(ago(2 * 3600), NOW)).toBe("2h ago");
  });

  it("counts whole units, rounding down", () => {
    expect(formatAge(ago(59), NOW)).toBe("59s ago");
    expect(formatAge(ago(60), NOW)).toBe("1m ago");
    expect(formatAge(ago(3599), NOW)).toBe("59m ago");
    expect(formatAge(ago(3600), NOW)).toBe("1h ago");
    expect(formatAge(ago(24 * 3600 - 1), NOW)).toBe("23h ago");
    expect(formatAge(ago(3 * 24 * 3600 + 5), NOW)).toBe("3d ago");
  });

  it("says just now for the first seconds and for times ahead of this clock", () => {
    expect(formatAge(ago(3), NOW)).toBe("just now");
    expect(formatAge(ago(-30), NOW)).toBe("just now");
  });

  it("accepts the server's microsecond timestamps, dates and numbers", () => {
    expect(formatAge("2026-01-01T11:54:59.876543Z", NOW)).toBe("5m ago");
    expect(formatAge(new Date(NOW - 7200_000), NOW)).toBe("2h ago");
    expect(formatAge(NOW - 600_000, NOW)).toBe("10m ago");
    expect(formatAge("not a time", NOW)).toBe("");
  });
});

describe("formatUntil", () => {
  const ahead = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();

  it("counts down in whole units, hours with their minutes", () => {
    expect(formatUntil(ahead(4 * 60 + 59), NOW)).toBe("in 4m");
    expect(formatUntil(ahead(60), NOW)).toBe("in 1m");
    expect(formatUntil(ahead(80 * 60), NOW)).toBe("in 1h 20m");
    expect(formatUntil(ahead(2 * 3600), NOW)).toBe("in 2h");
    expect(formatUntil(ahead(3 * 24 * 3600 + 5), NOW)).toBe("in 3d");
  });

  it("does not count the last seconds, and says now once the time has passed", () => {
    expect(formatUntil(ahead(59), NOW)).toBe("in under a minute");
    expect(formatUntil(ahead(0), NOW)).toBe("now");
    expect(formatUntil(ahead(-30), NOW)).toBe("now");
    expect(formatUntil("not a time", NOW)).toBe("");
  });
});

describe("formatClock", () => {
  it("gives the time alone today and the date with it on another day", () => {
    const today = formatClock(new Date(NOW + 60_000).toISOString(), NOW);
    const later = formatClock(new Date(NOW + 3 * 24 * 3600_000).toISOString(), NOW);
    expect(today).toMatch(/^\d{1,2}[:.]\d{2}( ?[AP]M)?$/i);
    expect(later.length).toBeGreaterThan(today.length);
    expect(formatClock("not a time", NOW)).toBe("not a time");
  });
});

describe("previewOf", () => {
  it("keeps a short first line whole", () => {
    expect(previewOf("Short?")).toBe("Short?");
  });

  it("cuts the first non-blank line to 50 characters with an ellipsis, like the server", () => {
    const text = `\n   \n${"x".repeat(60)}\nsecond line`;
    expect(previewOf(text)).toBe(`${"x".repeat(50)}…`);
    expect(previewOf("y".repeat(50))).toBe("y".repeat(50));
  });

  it("counts code points, so an emoji is never cut in half", () => {
    const text = "🚀".repeat(60);
    const preview = previewOf(text);
    expect(Array.from(preview)).toHaveLength(51);
    expect(preview.endsWith("🚀…")).toBe(true);
  });

  it("is empty for blank text", () => {
    expect(previewOf("\n \n")).toBe("");
  });
});

describe("small formatters", () => {
  it("truncates to a limit", () => {
    expect(truncate("abcdef", 3)).toBe("abc…");
    expect(truncate("abc", 3)).toBe("abc");
  });

  it("shortens long ids to their distinguishing tail", () => {
    expect(shortId("run_0193a1b2c3d4e5f6")).toBe("…c3d4e5f6");
    expect(shortId("run_1")).toBe("run_1");
  });

  it("orders microsecond timestamps whatever their number of digits", () => {
    expect(timeKey("2026-01-01T00:00:01.5Z")).toBeLessThan(timeKey("2026-01-01T00:00:01.573Z"));
    expect(timeKey("2026-01-01T00:00:01.000001Z")).toBeGreaterThan(timeKey("2026-01-01T00:00:01Z"));
    expect(timeKey("2026-01-01T00:00:01.000002Z") - timeKey("2026-01-01T00:00:01.000001Z")).toBe(1);
  });
});

describe("outcomeLabel", () => {
  it("names the decision and who took it, else the status", () => {
    expect(outcomeLabel({ status: "resolved", decision: "reject", decided_by: "alice" })).toBe("rejected by alice");
    expect(outcomeLabel({ status: "resolved", decision: "respond", decided_by: "bob" })).toBe("answered by bob");
    expect(outcomeLabel({ status: "resolved", decision: "approve" })).toBe("approved");
    expect(outcomeLabel({ status: "pending" })).toBe("pending");
    expect(outcomeLabel({ status: "expired" })).toBe("expired");
  });
});

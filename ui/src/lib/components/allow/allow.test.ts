import { describe, expect, it } from "vitest";
import type { AllowRule, LogEvent } from "../../api/types";
import { gate } from "../../test-fixtures";
import {
  approvedArgs,
  argsLabel,
  argsMatch,
  buildAllowRule,
  canAllow,
  DEFAULT_DURATION,
  DURATIONS,
  globMatch,
  literalPattern,
  patternTextOf,
  remaining,
  secondsOf,
  statusNow,
  untilLabel,
  usesLabel,
  type AllowDraft,
} from "./allow";
import { touchesRules } from "../../stores/rules-logic";

const approval = gate({
  spec: { kind: "approval", action: "deploy" },
  allowed_actions: ["approve", "edit", "reject"],
  payload: { env: "staging", version: "1.4.2" },
});

function draft(overrides: Partial<AllowDraft> = {}): AllowDraft {
  return { on: true, duration: DEFAULT_DURATION, anyArgs: false, patternText: patternTextOf(approval.payload as never), ...overrides };
}

function rule(overrides: Partial<AllowRule> = {}): AllowRule {
  return {
    id: "allow_1",
    agent: "deployer",
    action: "deploy",
    args: { env: "staging" },
    created_by: "alice",
    created_at: "2026-01-01T00:00:00Z",
    expires_at: "2026-01-01T01:00:00Z",
    status: "live",
    uses: 0,
    ...overrides,
  };
}

describe("which gates may come with “always allow”", () => {
  it("offers it on a pending approval of one named action that nobody else must decide", () => {
    expect(canAllow(approval)).toBe(true);
    expect(canAllow(gate())).toBe(false);
    expect(canAllow({ ...approval, spec: { kind: "approval", action: "" } })).toBe(false);
    expect(canAllow({ ...approval, requires_human: true })).toBe(false);
    expect(canAllow({ ...approval, quorum: { required: 2, rejections_to_reject: 1 } })).toBe(false);
    expect(canAllow({ ...approval, deciders: ["role:sre"] })).toBe(false);
    expect(canAllow({ ...approval, status: "resolved" })).toBe(false);
    expect(canAllow({ ...approval, actions: [{ id: "a", name: "x", args: {} }] })).toBe(false);
  });
});

describe("durations", () => {
  it("offers 15 minutes, 1, 8 and 24 hours, and until revoked, 1 hour by default", () => {
    expect(DURATIONS.map((d) => d.label)).toEqual(["15 minutes", "1 hour", "8 hours", "24 hours", "Until revoked"]);
    expect(DURATIONS.map((d) => secondsOf(d.id))).toEqual([900, 3600, 28800, 86400, null]);
    expect(DEFAULT_DURATION).toBe("1h");
  });
});

describe("argument patterns", () => {
  it("match like the engine: exact keys, equal values, stars in strings", () => {
    const pattern = { env: "staging", version: "1.*" };
    expect(argsMatch(pattern, { version: "1.9", env: "staging" })).toBe(true);
    expect(argsMatch(pattern, { env: "prod", version: "1.9" })).toBe(false);
    expect(argsMatch(pattern, { env: "staging" })).toBe(false);
    expect(argsMatch(pattern, { env: "staging", version: "1.9", force: true })).toBe(false);
    expect(argsMatch({ n: "*" }, { n: 3 })).toBe(false);
    expect(argsMatch({ hosts: ["a-*", "b"] }, { hosts: ["a-1", "b"] })).toBe(true);
    expect(argsMatch({ hosts: ["a-*", "b"] }, { hosts: ["a-1", "b", "c"] })).toBe(false);
    expect(argsMatch({ n: 3, ok: false, x: null }, { n: 3, ok: false, x: null })).toBe(true);
  });

  it("glob with `*` only; escaped stars and backslashes are literal", () => {
    expect(globMatch("a*b*c", "axxbyyc")).toBe(true);
    expect(globMatch("a*b*c", "axxbyy")).toBe(false);
    expect(globMatch("*", "")).toBe(true);
    expect(globMatch("SELECT \\* FROM t", "SELECT * FROM t")).toBe(true);
    expect(globMatch("SELECT \\* FROM t", "SELECT id FROM t")).toBe(false);
    expect(globMatch("C:\\\\dir", "C:\\dir")).toBe(true);
  });

  it("are prefilled from the arguments with their stars escaped, so they allow exactly those", () => {
    const args = { sql: "SELECT * FROM users", path: "C:\\tmp" };
    expect(literalPattern(args)).toEqual({ sql: "SELECT \\* FROM users", path: "C:\\\\tmp" });
    expect(argsMatch(literalPattern(args), args)).toBe(true);
    expect(argsMatch(literalPattern(args), { ...args, sql: "SELECT password FROM users" })).toBe(false);
    expect(JSON.parse(patternTextOf(args))).toEqual(literalPattern(args));
  });

  it("check against the edited payload when there is one, and `{}` without a payload", () => {
    expect(approvedArgs({ a: 1 })).toEqual({ a: 1 });
    expect(approvedArgs({ a: 1 }, { a: 2 })).toEqual({ a: 2 });
    expect(approvedArgs(null)).toEqual({});
  });
});

describe("building the rule sent with the approval", () => {
  const approved = approval.payload as never;

  it("sends nothing unless asked", () => {
    expect(buildAllowRule(draft({ on: false }), approved)).toBeNull();
  });

  it("sends the duration and the pattern", () => {
    expect(buildAllowRule(draft(), approved)).toEqual({ rule: { for_secs: 3600, args: { env: "staging", version: "1.4.2" } } });
    const widened = draft({ duration: "revoked", patternText: '{"env": "staging", "version": "1.*"}' });
    expect(buildAllowRule(widened, approved)).toEqual({ rule: { for_secs: null, args: { env: "staging", version: "1.*" } } });
    expect(buildAllowRule(draft({ anyArgs: true, duration: "15m", patternText: "garbage" }), approved)).toEqual({
      rule: { for_secs: 900, any_args: true },
    });
  });

  it("sends the approved arguments' own pattern until one is typed, their stars escaped", () => {
    const args = { path: "/tmp/*.log", nested: [{ glob: "a\\*" }] };
    expect(buildAllowRule(draft({ patternText: null }), args)).toEqual({
      rule: { for_secs: 3600, args: { path: "/tmp/\\*.log", nested: [{ glob: "a\\\\\\*" }] } },
    });
  });

  it("refuses bad JSON, null, and a pattern that would not allow what is approved", () => {
    expect(buildAllowRule(draft({ patternText: '{"env": ' }), approved)).toHaveProperty("problem", expect.stringMatching(/not valid JSON/));
    expect(buildAllowRule(draft({ patternText: "null" }), approved)).toHaveProperty("problem", expect.stringMatching(/Any arguments/));
    expect(buildAllowRule(draft({ patternText: '{"env": "prod", "version": "*"}' }), approved)).toHaveProperty(
      "problem",
      expect.stringMatching(/does not match/),
    );
  });
});

describe("the rules list", () => {
  const now = Date.parse("2026-01-01T00:15:00Z");
  const time = (iso: string) => iso.slice(11, 16);

  it("says how long each rule lasts, and a live rule past its time reads as expired", () => {
    expect(untilLabel(rule(), now, time)).toBe("until 01:00 (45m left)");
    expect(untilLabel(rule({ expires_at: null }), now, time)).toBe("until revoked");
    expect(statusNow(rule(), Date.parse("2026-01-01T01:00:00Z"))).toBe("expired");
    expect(untilLabel(rule(), Date.parse("2026-01-01T02:00:00Z"), time)).toBe("expired at 01:00");
    const revoked = rule({ status: "revoked", revoked_by: "bob", revoked_at: "2026-01-01T00:10:00Z" });
    expect(untilLabel(revoked, now, time)).toBe("revoked by bob at 00:10");
    expect(remaining(8 * 3600_000)).toBe("8h");
    expect(remaining(26 * 3600_000 + 60_000)).toBe("1d 2h");
    expect(remaining(5_000)).toBe("1m");
  });

  it("shows the arguments and how many gates each rule passed", () => {
    expect(argsLabel(rule())).toBe('{"env":"staging"}');
    expect(argsLabel(rule({ args: null }))).toBe("any arguments");
    expect([0, 1, 7].map(usesLabel)).toEqual(["no gates passed yet", "1 gate passed", "7 gates passed"]);
  });

  it("reloads on rules made or revoked, and on gates a rule passed", () => {
    const event = (e: object) => ({ seq: 1, hash: "", at: "", actor: "x", ...e }) as LogEvent;
    const passed = (by: string) => event({ type: "gate_auto_passed", gate: approval, decision: { decided_by: by } });
    expect(touchesRules([event({ type: "allow_rule_revoked", rule: rule() })])).toBe(true);
    expect(touchesRules([passed("rule:allow_1")])).toBe(true);
    expect(touchesRules([passed("policy")])).toBe(false);
    expect(touchesRules([event({ type: "turn_added" })])).toBe(false);
  });
});

// Which events change the allow-rules list: the page's one stream listens
// for rules made and revoked (`RULE_EVENTS`), and the rules view loads
// again on those and on gates a rule passed (pure).

import type { EventType, LogEvent } from "../api/types";

/** Events that change the rules list: made, revoked, or used. */
export const RULE_EVENTS = ["allow_rule_created", "allow_rule_revoked"] as const satisfies readonly EventType[];

/** Whether a batch of events changes the rules list (a gate passed by a rule counts a use). */
export function touchesRules(events: readonly LogEvent[]): boolean {
  return events.some(
    (e) =>
      e.type === "allow_rule_created" ||
      e.type === "allow_rule_revoked" ||
      (e.type === "gate_auto_passed" && e.decision.decided_by.startsWith("rule:")),
  );
}

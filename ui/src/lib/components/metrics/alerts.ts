// Alerts and SLAs as the Metrics view shows them: the thresholds the server
// runs with and the alerts up now (`GET /api/hitl/alerts`), and SLA
// compliance per priority (the metrics' `sla`). This module only loads and
// words them; the server decides what is raised.

import { attempt, type Answer, type Api } from "../../api/client";
import type { AlertsResponse, LogEvent, SlaCompliance } from "../../api/types";
import { duration, percent } from "./metrics";

/** Loads the alert configuration and the alerts up now. */
export function loadAlerts(api: Api): Promise<Answer<AlertsResponse>> {
  return attempt("load the alerts", () => api.GET("/api/hitl/alerts"));
}

/** Whether `events` raised or cleared an alert. */
export function touchesAlerts(events: readonly LogEvent[]): boolean {
  return events.some((e) => e.type === "alert_raised" || e.type === "alert_cleared");
}

/** One row of the SLA table. */
export interface SlaRow {
  priority: SlaCompliance["priority"];
  target: string;
  share: string;
  detail: string;
  /** Below 90 % of gates within target. */
  behind: boolean;
}

/** The SLA table's rows, most urgent first. */
export function slaRows(sla: readonly SlaCompliance[]): SlaRow[] {
  return [...sla].reverse().map((r) => ({
    priority: r.priority,
    target: duration(r.target_ms),
    share: percent(r.compliance),
    detail: r.gates === 0 ? "no gates yet" : `${r.within_target} of ${r.gates} within target`,
    behind: r.compliance != null && r.compliance < 0.9,
  }));
}

/** The thresholds in words, the ones set only. */
export function thresholdLines(config: AlertsResponse["config"]): string[] {
  const lines: string[] = [];
  const window = `${config.window_minutes} min`;
  if (config.sync_gate_waiting_minutes != null) lines.push(`A sync gate waiting over ${config.sync_gate_waiting_minutes} min`);
  if (config.pending_queue != null) lines.push(`More than ${config.pending_queue} gates pending`);
  if (config.auto_pass_rate_percent != null) lines.push(`Auto-pass rate over ${config.auto_pass_rate_percent} % in ${window}`);
  if (config.webhook_failures != null) lines.push(`More than ${config.webhook_failures} webhook failures in ${window}`);
  return lines;
}

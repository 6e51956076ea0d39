// A run's event log as the runs view holds it: every event of the run,
// oldest first, read page by page over the API, and the shape the
// timeline reads (the log's events, or a recording's without their place).

import { attempt, type Answer, type Api } from "../api/client";
import type { EventBody, LogEvent } from "../api/types";

/** An event as the timeline reads it: the log's own (with `seq`) or a recording's. */
export type TimelineEvent = EventBody & { seq?: number };

/** Every event of a run, oldest first, read page by page (`GET /runs/{id}/events`). */
export async function runEvents(api: Api, runId: string, pageSize = 5000): Promise<Answer<LogEvent[]>> {
  const all: LogEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await attempt("read the run's events", () =>
      api.GET("/api/hitl/runs/{run_id}/events", { params: { path: { run_id: runId }, query: { after, limit: pageSize } } }),
    );
    if (!page.ok) return page;
    all.push(...page.value.events);
    if (page.value.events.length < pageSize || page.value.next_after <= after) return { ok: true, value: all };
    after = page.value.next_after;
  }
}

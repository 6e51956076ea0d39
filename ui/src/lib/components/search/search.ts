// The search view's logic, apart from the page: the form as the API's
// query (blank fields left out, the reviewer's local days as instants),
// fetching a page without letting a slow answer overwrite a newer one, and
// how a hit reads (its snippet as plain-text parts, how many there are),
// the form kept between visits, and which events call for a new search.

import { errorMessage, type Api } from "../../api/client";
import type { GateHit, GateKind, GateStatus, LogEvent, SnippetPart } from "../../api/types";
import { truncate } from "../../format";
import type { paths } from "../../api/schema";

/** The query `GET /api/hitl/gates/search` takes. */
export type SearchQuery = NonNullable<paths["/api/hitl/gates/search"]["get"]["parameters"]["query"]>;

/** What the reviewer filled in; empty strings are "any". */
export interface SearchForm {
  text: string;
  status: "" | GateStatus;
  kind: "" | GateKind;
  agent: string;
  runId: string;
  decidedBy: string;
  /** `YYYY-MM-DD` from a date field, a day in the reviewer's time zone. */
  from: string;
  /** `YYYY-MM-DD`, included whole. */
  to: string;
}

export const EMPTY_SEARCH: Readonly<SearchForm> = {
  text: "",
  status: "",
  kind: "",
  agent: "",
  runId: "",
  decidedBy: "",
  from: "",
  to: "",
};

/** The form and the selected hit as the reviewer left them. */
export interface SearchMemory {
  form: SearchForm;
  selectedId: string | null;
}

const memories = new WeakMap<object, SearchMemory>();

/**
 * What the search view keeps between visits (it is unmounted while
 * hidden), one per signed-in client: signing out and in again starts
 * with an empty form.
 */
export function memoryFor(client: object): SearchMemory {
  let memory = memories.get(client);
  if (memory === undefined) {
    memory = { form: { ...EMPTY_SEARCH }, selectedId: null };
    memories.set(client, memory);
  }
  return memory;
}

/** Events that change what a search finds or how a hit reads: gates opened and closed, votes, actions decided. */
const GATE_EVENTS: ReadonlySet<LogEvent["type"]> = new Set([
  "gate_opened",
  "gate_auto_passed",
  "gate_resolved",
  "actions_decided",
  "gate_escalated",
  "gate_released",
  "vote_recorded",
  "gate_expired",
  "gate_cancelled",
]);

/** Whether `event` may change the hits. */
export function movesHits(event: LogEvent): boolean {
  return GATE_EVENTS.has(event.type);
}

/** Hits fetched per page. */
export const PAGE_SIZE = 50;

/** The start of a local day, as an RFC 3339 instant; `next` for the day after. */
export function localDayStart(day: string, next = false): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const at = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (next ? 1 : 0));
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/**
 * The API query for a form. The text is sent as typed (a trailing space
 * says the last word is finished, so it is not matched as a prefix); other
 * fields are trimmed and left out when blank. Days are the reviewer's own:
 * `from` is the start of its day, `to` the start of the day after.
 */
export function searchQuery(form: SearchForm, offset = 0, limit = PAGE_SIZE): SearchQuery {
  const query: SearchQuery = { limit, offset };
  if (form.text.trim() !== "") query.q = form.text;
  if (form.status !== "") query.status = form.status;
  if (form.kind !== "") query.kind = form.kind;
  const text = { agent: form.agent, run_id: form.runId, decided_by: form.decidedBy } as const;
  for (const [name, value] of Object.entries(text) as [keyof typeof text, string][]) {
    if (value.trim() !== "") query[name] = value.trim();
  }
  const from = localDayStart(form.from);
  const to = localDayStart(form.to, true);
  if (from !== undefined) query.from = from;
  if (to !== undefined) query.to = to;
  return query;
}

/** Whether two forms ask the same question of the server. */
export function sameSearch(a: SearchForm, b: SearchForm): boolean {
  return JSON.stringify(searchQuery(a)) === JSON.stringify(searchQuery(b));
}

/** A page of hits, or why there is none. */
export type PageAnswer = { ok: true; hits: GateHit[]; more: boolean } | { ok: false; message: string };

/** Fetches one page; never throws. */
export async function fetchPage(api: Api, query: SearchQuery): Promise<PageAnswer> {
  try {
    const { data, error, response } = await api.GET("/api/hitl/gates/search", { params: { query } });
    if (data !== undefined) return { ok: true, hits: data.hits, more: data.more };
    return { ok: false, message: `Search refused (${response.status}): ${errorMessage(error)}` };
  } catch (e) {
    return { ok: false, message: `Cannot reach the server: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Numbers requests so only the newest one's answer is shown: typing sends
 * a search per pause, and an earlier, slower answer must not replace a
 * later one.
 */
export class Latest {
  private current = 0;
  /** A ticket for a new request; it makes every older ticket stale. */
  next(): number {
    return ++this.current;
  }
  /** Whether `ticket` is still the newest request. */
  isCurrent(ticket: number): boolean {
    return ticket === this.current;
  }
}

/** Longest snippet shown when a hit has none of its own (a search with no text). */
const PREVIEW_FALLBACK = 120;

/**
 * What a hit shows as its snippet: the server's parts (matched ones are the
 * reviewer's words), with empty parts dropped and neighbours of the same
 * kind joined; a search without text has none, so the preview stands in.
 * Always plain text: the page renders each part as text, never as HTML.
 */
export function snippetOf(hit: Pick<GateHit, "snippet" | "preview">): SnippetPart[] {
  const parts: SnippetPart[] = [];
  for (const part of hit.snippet) {
    if (part.text === "") continue;
    const last = parts[parts.length - 1];
    if (last && last.matched === part.matched) last.text += part.text;
    else parts.push({ text: part.text, matched: part.matched });
  }
  if (parts.length > 0) return parts;
  return [{ text: truncate(hit.preview || "(no text)", PREVIEW_FALLBACK), matched: false }];
}

/** The status line above the hits. */
export function countLabel(shown: number, more: boolean): string {
  if (shown === 0) return "No gate matches.";
  return `${shown}${more ? "+" : ""} gate${shown === 1 && !more ? "" : "s"}, newest first`;
}

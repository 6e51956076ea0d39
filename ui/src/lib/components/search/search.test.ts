import { describe, expect, it } from "vitest";
import type { GateHit } from "../../api/types";
import { countLabel, EMPTY_SEARCH, Latest, localDayStart, memoryFor, movesHits, sameSearch, searchQuery, snippetOf } from "./search";

function hit(overrides: Partial<GateHit> = {}): GateHit {
  return {
    id: "gate_1",
    run_id: "run_1",
    run_title: "Release 1.4",
    kind: "approval",
    mode: "sync",
    priority: "normal",
    agent: "builder-bot",
    preview: "Deploy release 1.4?",
    status: "pending",
    created_at: "2026-03-01T09:00:00.000000Z",
    closed_at: null,
    decided_by: null,
    decision: null,
    snippet: [],
    ...overrides,
  };
}

describe("the search query", () => {
  it("asks for the newest gates when the form is empty", () => {
    expect(searchQuery(EMPTY_SEARCH)).toEqual({ limit: 50, offset: 0 });
  });

  it("sends the text as typed, and leaves blank fields out", () => {
    const query = searchQuery({ ...EMPTY_SEARCH, text: "deploy bill", agent: "  ", runId: "", decidedBy: " alice " });
    expect(query).toEqual({ q: "deploy bill", decided_by: "alice", limit: 50, offset: 0 });
    // A trailing space finishes the last word: it must reach the server.
    expect(searchQuery({ ...EMPTY_SEARCH, text: "deploy " }).q).toBe("deploy ");
    expect(searchQuery({ ...EMPTY_SEARCH, text: "   " }).q).toBeUndefined();
  });

  it("passes FTS5-looking text through untouched: the server quotes it", () => {
    expect(searchQuery({ ...EMPTY_SEARCH, text: '"AND( x* -y' }).q).toBe('"AND( x* -y');
  });

  it("sends status, kind, run and paging", () => {
    const query = searchQuery({ ...EMPTY_SEARCH, status: "resolved", kind: "question", runId: "run_9" }, 100, 25);
    expect(query).toEqual({ status: "resolved", kind: "question", run_id: "run_9", limit: 25, offset: 100 });
  });

  it("turns the reviewer's days into instants: from the start of `from` to the end of `to`", () => {
    const query = searchQuery({ ...EMPTY_SEARCH, from: "2026-03-01", to: "2026-03-31" });
    expect(query.from).toBe(new Date(2026, 2, 1).toISOString());
    expect(query.to).toBe(new Date(2026, 3, 1).toISOString());
    expect(localDayStart("2026-12-31", true)).toBe(new Date(2027, 0, 1).toISOString());
    expect(localDayStart("yesterday")).toBeUndefined();
    expect(searchQuery({ ...EMPTY_SEARCH, from: "not a day" }).from).toBeUndefined();
  });

  it("knows when two forms ask the same thing", () => {
    expect(sameSearch({ ...EMPTY_SEARCH, agent: "bot " }, { ...EMPTY_SEARCH, agent: "bot" })).toBe(true);
    expect(sameSearch({ ...EMPTY_SEARCH, text: "a" }, { ...EMPTY_SEARCH, text: "a " })).toBe(false);
  });
});

describe("answers in order", () => {
  it("keeps only the newest request current", () => {
    const latest = new Latest();
    const first = latest.next();
    const second = latest.next();
    expect(latest.isCurrent(first)).toBe(false);
    expect(latest.isCurrent(second)).toBe(true);
  });
});

describe("a hit's snippet", () => {
  it("keeps the server's parts as plain text, marking the matches", () => {
    const parts = snippetOf(
      hit({
        snippet: [
          { text: "…run ", matched: false },
          { text: "deploy", matched: true },
          { text: "", matched: false },
          { text: " <b>to</b> ", matched: false },
          { text: "prod", matched: true },
        ],
      }),
    );
    expect(parts).toEqual([
      { text: "…run ", matched: false },
      { text: "deploy", matched: true },
      { text: " <b>to</b> ", matched: false },
      { text: "prod", matched: true },
    ]);
  });

  it("joins neighbouring parts of the same kind", () => {
    const parts = snippetOf(hit({ snippet: [{ text: "a", matched: true }, { text: "b", matched: true }] }));
    expect(parts).toEqual([{ text: "ab", matched: true }]);
  });

  it("shows the preview when the search had no text", () => {
    expect(snippetOf(hit())).toEqual([{ text: "Deploy release 1.4?", matched: false }]);
    expect(snippetOf(hit({ preview: "" }))).toEqual([{ text: "(no text)", matched: false }]);
  });
});

describe("the status line", () => {
  it("counts what is shown", () => {
    expect(countLabel(0, false)).toBe("No gate matches.");
    expect(countLabel(1, false)).toBe("1 gate, newest first");
    expect(countLabel(50, true)).toBe("50+ gates, newest first");
  });
});

describe("the search's memory between visits", () => {
  it("is kept per signed-in client, so a new sign-in starts empty", () => {
    const alice = {};
    memoryFor(alice).form.text = "deploy";
    memoryFor(alice).selectedId = "g1";
    expect(memoryFor(alice)).toEqual({ form: { ...EMPTY_SEARCH, text: "deploy" }, selectedId: "g1" });
    expect(memoryFor({})).toEqual({ form: EMPTY_SEARCH, selectedId: null });
  });

  it("searches again on the events that change hits", () => {
    expect(movesHits({ type: "gate_resolved" } as never)).toBe(true);
    expect(movesHits({ type: "turn_added" } as never)).toBe(false);
  });
});

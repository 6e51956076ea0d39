// Differences between two texts, for reviews that compare a raw response
// with its audited version, or one round of a goal with the next. Lines are
// compared first (Myers' O(ND) algorithm); inside a changed block of lines,
// words are compared. Work is bounded, so a megabyte of very different text
// degrades to "this block was replaced" instead of freezing the page.

/** One run of text: the same on both sides, only before, or only after. */
export interface Segment {
  op: "same" | "del" | "ins";
  text: string;
}

/** How much comparing one pair of token lists may cost before giving up. */
const MAX_EDIT_COST = 1_000;
/** Changed blocks larger than this (in words, both sides) are not compared word by word. */
const MAX_WORD_BLOCK = 20_000;

/**
 * The shortest edit script between two token lists, as segments of tokens.
 * `null` when more than `maxCost` insertions and deletions would be needed.
 */
export function diffTokens(a: readonly string[], b: readonly string[], maxCost = MAX_EDIT_COST): Segment[] | null {
  // Common prefix and suffix cost nothing and are usually most of it.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middle = myers(a.slice(start, endA), b.slice(start, endB), maxCost);
  if (middle === null) return null;
  const out: Segment[] = [];
  push(out, "same", a.slice(0, start).join(""));
  for (const s of middle) push(out, s.op, s.text);
  push(out, "same", a.slice(endA).join(""));
  return out;
}

function push(out: Segment[], op: Segment["op"], text: string): void {
  if (text === "") return;
  const last = out[out.length - 1];
  if (last && last.op === op) last.text += text;
  else out.push({ op, text });
}

/** Myers' greedy algorithm with a trace, for the middle that differs. */
function myers(a: readonly string[], b: readonly string[], maxCost: number): Segment[] | null {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) {
    const out: Segment[] = [];
    push(out, "del", a.join(""));
    push(out, "ins", b.join(""));
    return out;
  }
  const max = Math.min(n + m, maxCost);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // Round d only reads diagonals -d-1..d+1 of the previous round: keep just those.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, d);
    }
  }
  return null;
}

function backtrack(trace: Int32Array[], a: readonly string[], b: readonly string[], dEnd: number): Segment[] {
  const reversed: Segment[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    // trace[d] holds diagonals -d-1..d+1 of round d-1, at index k + d + 1.
    const v = trace[d]!;
    const offset = d + 1;
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      reversed.push({ op: "same", text: a[x - 1]! });
      x--;
      y--;
    }
    if (down) reversed.push({ op: "ins", text: b[prevY]! });
    else reversed.push({ op: "del", text: a[prevX]! });
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    reversed.push({ op: "same", text: a[x - 1]! });
    x--;
    y--;
  }
  const out: Segment[] = [];
  for (let i = reversed.length - 1; i >= 0; i--) push(out, reversed[i]!.op, reversed[i]!.text);
  return out;
}

/** Lines with their line endings kept, so joining them gives the text back. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Words and the spaces between them, kept apart, so joining gives the text back. */
export function splitWords(text: string): string[] {
  return text.match(/\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? [];
}

/**
 * What changed from `before` to `after`: lines first, then words inside
 * each changed block of lines. Joining the `same` and `del` segments gives
 * `before`; joining `same` and `ins` gives `after`.
 */
export function diffText(before: string, after: string): Segment[] {
  if (before === after) return before === "" ? [] : [{ op: "same", text: before }];
  const lines = diffTokens(splitLines(before), splitLines(after)) ?? [
    { op: "del", text: before },
    { op: "ins", text: after },
  ];
  const out: Segment[] = [];
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i]!;
    const next = lines[i + 1];
    if (s.op === "del" && next?.op === "ins") {
      for (const w of wordsOf(s.text, next.text)) push(out, w.op, w.text);
      i++;
    } else {
      push(out, s.op, s.text);
    }
  }
  return out;
}

function wordsOf(before: string, after: string): Segment[] {
  const a = splitWords(before);
  const b = splitWords(after);
  const words = a.length + b.length <= MAX_WORD_BLOCK ? diffTokens(a, b) : null;
  return (
    words ?? [
      { op: "del", text: before },
      { op: "ins", text: after },
    ]
  );
}

/** The segments one side shows: `before` keeps deletions, `after` keeps insertions. */
export function side(segments: readonly Segment[], which: "before" | "after"): Segment[] {
  const drop = which === "before" ? "ins" : "del";
  return segments.filter((s) => s.op !== drop);
}

/** Counts of changed words, for a one-line summary. */
export function changeSummary(segments: readonly Segment[]): { removed: number; added: number } {
  const count = (op: Segment["op"]) =>
    segments.filter((s) => s.op === op).reduce((n, s) => n + (s.text.match(/[\p{L}\p{N}_]+/gu)?.length ?? 0), 0);
  return { removed: count("del"), added: count("ins") };
}

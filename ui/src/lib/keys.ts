// Every keyboard shortcut, in one map: action → keys, per platform. The
// panel, the modal, the buttons' `aria-keyshortcuts` and the shortcuts
// dialog all read it, so a key is changed here and nowhere else. A reviewer
// may override bindings (`createKeymap(platform, overrides)`).
//
// A key is written as modifiers and a key joined by "+": "Mod" is Ctrl, or
// ⌘ (Meta) on macOS; "Ctrl", "Meta", "Alt" are literal; the key is
// `KeyboardEvent.key` ("j", "Enter", "ArrowDown", "/", "?"). Shift is implied
// by printable characters ("?" is Shift+/ on most layouts) and not written.
//
// A key may serve two actions only in scopes that are never active together
// (the runs list's j/k and the panel's, say): see `CONTEXTS`.

export type Platform = "mac" | "other";

/**
 * Where an action applies: "anywhere" is every view and an open gate;
 * "global" is every view but not an open gate, whose single keys (digits
 * score and choose options there) are its own.
 */
export type Scope = "anywhere" | "global" | "panel" | "runs" | "search" | "modal";

/**
 * The scopes active together: the desk (panel), the runs view, the search
 * view, or an open gate. Keys must be unique within each.
 */
export const CONTEXTS: readonly (readonly Scope[])[] = [
  ["anywhere", "global", "panel"],
  ["anywhere", "global", "runs"],
  ["anywhere", "global", "search"],
  ["anywhere", "modal"],
];

export type Action =
  | "panel.next"
  | "panel.previous"
  | "panel.open"
  | "panel.filter"
  | "panel.mark"
  | "panel.approve-marked"
  | "panel.reject-marked"
  | "panel.edit"
  | "panel.clear-marks"
  | "gate.approve"
  | "gate.edit"
  | "gate.reject"
  | "gate.submit"
  | "gate.close"
  | "gate.retry"
  | "gate.revise"
  | "review.prompt"
  | "review.model"
  | "review.score"
  | "review.add-task"
  | "view.desk"
  | "view.runs"
  | "view.search"
  | "view.rules"
  | "view.metrics"
  | "search.focus"
  | "search.next"
  | "search.previous"
  | "search.open"
  | "runs.next"
  | "runs.previous"
  | "runs.pause"
  | "runs.resume"
  | "runs.cancel"
  | "runs.step"
  | "runs.instruct"
  | "runs.next-agent"
  | "runs.plan"
  | "runs.send"
  | "runs.export"
  | "runs.export-session"
  | "runs.import"
  | "runs.new"
  | "runs.replay"
  | "runs.replay-next"
  | "runs.replay-back"
  | "help.shortcuts";

export interface Binding {
  /** What the shortcut does, for the shortcuts dialog. */
  label: string;
  scope: Scope;
  /** Keys on every platform. */
  keys: string[];
  /** Keys on macOS, when they differ. */
  mac?: string[];
  /** Whether it also works while typing in a text field or the editor. */
  whileTyping?: boolean;
}

/** The default bindings. */
export const BINDINGS: Readonly<Record<Action, Binding>> = {
  "panel.next": { label: "Next gate", scope: "panel", keys: ["j", "ArrowDown"] },
  "panel.previous": { label: "Previous gate", scope: "panel", keys: ["k", "ArrowUp"] },
  "panel.open": { label: "Open the selected gate", scope: "panel", keys: ["Enter"] },
  "panel.filter": { label: "Filter the panel", scope: "global", keys: ["/"] },
  "panel.mark": { label: "Mark or unmark the gate for bulk review (also Ctrl-click; Shift-click marks a range)", scope: "panel", keys: ["x"] },
  "panel.approve-marked": {
    label: "Arm the approval of every marked gate that allows it (the others named with why; Enter confirms); with none marked, open the selected gate ready to approve",
    scope: "panel",
    keys: ["a"],
  },
  "panel.reject-marked": {
    label: "Reject every marked gate (type a reason, then Enter); with none marked, open the selected gate to reject it",
    scope: "panel",
    keys: ["r"],
  },
  "panel.edit": { label: "Open the selected gate in its editor (payload, response, plan)", scope: "panel", keys: ["e"] },
  "panel.clear-marks": { label: "Unmark every gate", scope: "panel", keys: ["Escape"] },
  "gate.approve": { label: "Arm approval as proposed (then confirm; Alt+a from a field)", scope: "modal", keys: ["a"] },
  "gate.edit": { label: "Edit the payload (Alt+e from a field)", scope: "modal", keys: ["e"] },
  "gate.reject": { label: "Arm rejection: type a reason, then confirm (Alt+r from a field)", scope: "modal", keys: ["r"] },
  "gate.submit": { label: "Submit the decision: confirm the armed one", scope: "modal", keys: ["Mod+Enter"], whileTyping: true },
  "gate.close": { label: "Close without deciding", scope: "modal", keys: ["Escape"], whileTyping: true },
  "gate.retry": { label: "Arm a retry with changes: type them, then confirm (Alt+t from a field)", scope: "modal", keys: ["t"] },
  "gate.revise": { label: "Arm a refinement or revision: type what to change, then confirm (Alt+v from a field)", scope: "modal", keys: ["v"] },
  "review.prompt": { label: "Information review: modify the prompt (Alt+p from a field)", scope: "modal", keys: ["p"] },
  "review.model": { label: "Information review: change the model (Alt+m from a field)", scope: "modal", keys: ["m"] },
  "review.score": {
    label: "Arm preset option 1 to 9 (then confirm), or score the current criterion 1 to 5 (quality gates)",
    scope: "modal",
    keys: ["1", "2", "3", "4", "5", "6", "7", "8", "9"],
  },
  "review.add-task": { label: "Plan review: add a task (Alt+n from a field)", scope: "modal", keys: ["n"] },
  "view.desk": { label: "Show the desk", scope: "global", keys: ["1"] },
  "view.runs": { label: "Show the runs", scope: "global", keys: ["2"] },
  "view.search": { label: "Show the search", scope: "global", keys: ["3"] },
  "view.rules": { label: "Show the allow-rules (live and past; revoke one)", scope: "global", keys: ["4"] },
  "view.metrics": { label: "Show the metrics (HITL and auto-pass rates, latency, expiry, agent ratings)", scope: "global", keys: ["5"] },
  "search.focus": { label: "Search every gate, pending and past", scope: "global", keys: ["Mod+k"], whileTyping: true },
  "search.next": { label: "Next result (↓ in the search field)", scope: "search", keys: ["j", "ArrowDown"] },
  "search.previous": { label: "Previous result (↑ in the search field)", scope: "search", keys: ["k", "ArrowUp"] },
  "search.open": {
    label: "Open the result (Enter in the search field too): a pending gate to decide, a past one to read",
    scope: "search",
    keys: ["Enter"],
  },
  "runs.next": { label: "Next run", scope: "runs", keys: ["j", "ArrowDown"] },
  "runs.previous": { label: "Previous run", scope: "runs", keys: ["k", "ArrowUp"] },
  "runs.pause": { label: "Pause the run", scope: "runs", keys: ["p"] },
  "runs.resume": { label: "Resume the run (start one created without starting; retry a failed or cancelled one, pressed twice)", scope: "runs", keys: ["r"] },
  "runs.cancel": { label: "Cancel the run (press twice)", scope: "runs", keys: ["c"] },
  "runs.step": { label: "Let a paused run take one step", scope: "runs", keys: ["s"] },
  "runs.instruct": { label: "Write an instruction to the run's agents", scope: "runs", keys: ["i"] },
  "runs.next-agent": { label: "Choose the next agent", scope: "runs", keys: ["n"] },
  "runs.plan": { label: "Edit the run's plan", scope: "runs", keys: ["t"] },
  "runs.send": { label: "Send the instruction or agent being typed, or save the plan", scope: "runs", keys: ["Mod+Enter"], whileTyping: true },
  "runs.export": { label: "Export the run's recording", scope: "runs", keys: ["e"] },
  "runs.export-session": { label: "Export the recording of the run's whole session (every run in it)", scope: "runs", keys: ["x"] },
  "runs.import": { label: "Import a recording", scope: "runs", keys: ["o"] },
  "runs.new": { label: "Start a supervised model run (Gatehouse calls the model)", scope: "runs", keys: ["g"] },
  "runs.replay": { label: "Replay the run step by step (or stop)", scope: "runs", keys: ["v"] },
  "runs.replay-next": { label: "Replay: next step", scope: "runs", keys: ["."] },
  "runs.replay-back": { label: "Replay: one step back", scope: "runs", keys: [","] },
  "help.shortcuts": { label: "Show every shortcut", scope: "anywhere", keys: ["?"] },
};

export const ACTIONS = Object.keys(BINDINGS) as Action[];

/** The platform this page runs on. */
export function detectPlatform(nav: { platform?: string; userAgent?: string } = globalThis.navigator ?? {}): Platform {
  const name = `${nav.platform ?? ""} ${nav.userAgent ?? ""}`;
  return /Mac|iPhone|iPad|iPod/i.test(name) ? "mac" : "other";
}

/** A key written as in the map, with "Mod" resolved for the platform and modifiers in one order. */
export function normalizeKey(key: string, platform: Platform): string {
  const parts = key.split("+");
  // "+" itself as the key: "Ctrl++" splits into [..., "", ""].
  const last = key.endsWith("++") || key === "+" ? "+" : (parts.pop() ?? "");
  const mods = new Set(
    parts.filter(Boolean).map((m) => (m === "Mod" ? (platform === "mac" ? "Meta" : "Ctrl") : m)),
  );
  const ordered = ["Ctrl", "Alt", "Meta"].filter((m) => mods.has(m));
  return [...ordered, last.length === 1 ? last.toLowerCase() : last].join("+");
}

/** A key event written the same way. */
export function keyOfEvent(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "altKey" | "metaKey">): string {
  const mods = [e.ctrlKey && "Ctrl", e.altKey && "Alt", e.metaKey && "Meta"].filter(Boolean);
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  return [...mods, key].join("+");
}

/** How a key is shown to people: "Ctrl+Enter", "⌘Enter", "/". */
export function displayKey(key: string, platform: Platform): string {
  const normal = normalizeKey(key, platform);
  const names: Record<string, string> =
    platform === "mac"
      ? { Meta: "⌘", Ctrl: "⌃", Alt: "⌥", ArrowUp: "↑", ArrowDown: "↓", Escape: "Esc", Enter: "↩" }
      : { ArrowUp: "↑", ArrowDown: "↓", Escape: "Esc" };
  const parts = normal.split("+").map((p) => names[p] ?? p);
  return platform === "mac" ? parts.join("") : parts.join("+");
}

/** The bindings for one platform, after a reviewer's overrides. */
export interface Keymap {
  platform: Platform;
  /** The keys of an action, normalised for the platform. */
  keysOf(action: Action): string[];
  /** The action a key event triggers in `scopes`, if any. */
  match(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "altKey" | "metaKey">, scopes: Scope[]): Action | null;
  /** The `aria-keyshortcuts` value of an action. */
  aria(action: Action): string;
  /** Every action with its keys as shown to people. */
  describe(): { action: Action; label: string; scope: Scope; keys: string[] }[];
}

/** Keys bound to more than one action active at once on `platform`: empty when the map is sound. */
export function duplicateKeys(
  platform: Platform,
  overrides: Partial<Record<Action, string[]>> = {},
): { key: string; actions: Action[] }[] {
  const clashes = new Map<string, Set<Action>>();
  for (const context of CONTEXTS) {
    const seen = new Map<string, Action[]>();
    for (const action of ACTIONS.filter((a) => context.includes(BINDINGS[a].scope))) {
      for (const key of keysFor(action, platform, overrides)) seen.set(key, [...(seen.get(key) ?? []), action]);
    }
    for (const [key, actions] of seen) {
      if (actions.length > 1) clashes.set(key, new Set([...(clashes.get(key) ?? []), ...actions]));
    }
  }
  return [...clashes].map(([key, actions]) => ({ key, actions: [...actions] }));
}

function keysFor(action: Action, platform: Platform, overrides: Partial<Record<Action, string[]>>): string[] {
  const binding = BINDINGS[action];
  const keys = overrides[action] ?? (platform === "mac" && binding.mac ? binding.mac : binding.keys);
  return keys.map((k) => normalizeKey(k, platform));
}

/** The keymap for `platform`; refuses overrides that bind one key twice. */
export function createKeymap(platform: Platform, overrides: Partial<Record<Action, string[]>> = {}): Keymap {
  const clashes = duplicateKeys(platform, overrides);
  if (clashes.length > 0) {
    const list = clashes.map((c) => `${c.key} (${c.actions.join(", ")})`).join("; ");
    throw new Error(`keyboard shortcuts bound twice: ${list}`);
  }
  const byKey = new Map<string, Action[]>();
  for (const action of ACTIONS) {
    for (const key of keysFor(action, platform, overrides)) byKey.set(key, [...(byKey.get(key) ?? []), action]);
  }
  return {
    platform,
    keysOf: (action) => keysFor(action, platform, overrides),
    match(e, scopes) {
      return byKey.get(keyOfEvent(e))?.find((action) => scopes.includes(BINDINGS[action].scope)) ?? null;
    },
    aria: (action) =>
      keysFor(action, platform, overrides)
        .map((k) => k.replace("Ctrl", "Control"))
        .join(" "),
    describe: () =>
      ACTIONS.map((action) => ({
        action,
        label: BINDINGS[action].label,
        scope: BINDINGS[action].scope,
        keys: keysFor(action, platform, overrides).map((k) => displayKey(k, platform)),
      })),
  };
}

/** Whether a key event comes from somewhere the reviewer types. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || typeof el.tagName !== "string") return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  if (tag !== "input") return false;
  const type = (el as HTMLInputElement).type;
  return !["button", "checkbox", "radio", "submit", "reset"].includes(type);
}

/** Whether `action` may fire while the reviewer is typing. */
export function worksWhileTyping(action: Action): boolean {
  return BINDINGS[action].whileTyping === true;
}

/**
 * The gate's letters that Alt brings into a field: a gate opens with the
 * cursor in its note, where `r` is a letter, so Alt+r arms the rejection
 * from there. Each only arms or moves the cursor; none decides.
 */
const GATE_CHORDS: readonly Action[] = [
  "gate.approve",
  "gate.edit",
  "gate.reject",
  "gate.retry",
  "gate.revise",
  "review.prompt",
  "review.model",
  "review.add-task",
];

/**
 * The action a key event triggers where it happened, if any. A single key
 * typed into a field is the field's: only actions marked `whileTyping`
 * (Ctrl+Enter, Esc) fire there, and in an open gate Alt with one of the
 * gate's letters (Alt+r, which works outside a field too). `typing` says
 * whether the event comes from a field.
 */
export function actionFor(
  keymap: Keymap,
  e: Pick<KeyboardEvent, "key" | "ctrlKey" | "altKey" | "metaKey"> & { code?: string },
  scopes: Scope[],
  typing: boolean,
): Action | null {
  const action = keymap.match(e, scopes);
  if (action !== null && (!typing || worksWhileTyping(action))) return action;
  if (!scopes.includes("modal") || !e.altKey || e.ctrlKey || e.metaKey) return null;
  // On macOS Option turns letters into other characters (⌥r is "®"): read the key's place instead.
  const letter = /^Key[A-Z]$/.test(e.code ?? "") ? e.code!.slice(3).toLowerCase() : e.key;
  const bare = keymap.match({ key: letter, ctrlKey: false, altKey: false, metaKey: false }, ["modal"]);
  return bare !== null && GATE_CHORDS.includes(bare) ? bare : null;
}

/**
 * Whether a shortcut matches what was typed in the shortcuts list's
 * filter: every word of `query` in its label or among its keys (case
 * ignored); an empty query matches everything.
 */
export function matchesShortcut(row: { label: string; keys: readonly string[] }, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const label = row.label.toLowerCase();
  const keys = row.keys.map((k) => k.toLowerCase());
  return words.every((w) => label.includes(w) || keys.some((k) => k === w || k.includes(w)));
}

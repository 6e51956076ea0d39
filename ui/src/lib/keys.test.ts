import { describe, expect, it } from "vitest";
import {
  actionFor,
  ACTIONS,
  BINDINGS,
  createKeymap,
  detectPlatform,
  displayKey,
  duplicateKeys,
  isTyping,
  keyOfEvent,
  matchesShortcut,
  normalizeKey,
  worksWhileTyping,
  type Scope,
} from "./keys";

const key = (k: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe("the hotkey registry", () => {
  it("binds no key twice, on either platform", () => {
    expect(duplicateKeys("other")).toEqual([]);
    expect(duplicateKeys("mac")).toEqual([]);
  });

  it("gives every action a label and at least one key", () => {
    for (const action of ACTIONS) {
      expect(BINDINGS[action].label.length).toBeGreaterThan(0);
      expect(createKeymap("other").keysOf(action).length).toBeGreaterThan(0);
    }
  });

  it("submits with Ctrl+Enter, and with Cmd+Enter on macOS", () => {
    expect(createKeymap("other").keysOf("gate.submit")).toEqual(["Ctrl+Enter"]);
    expect(createKeymap("mac").keysOf("gate.submit")).toEqual(["Meta+Enter"]);
    expect(createKeymap("other").match(key("Enter", { ctrlKey: true }), ["modal"])).toBe("gate.submit");
    expect(createKeymap("mac").match(key("Enter", { metaKey: true }), ["modal"])).toBe("gate.submit");
    expect(createKeymap("mac").match(key("Enter", { ctrlKey: true }), ["modal"])).toBeNull();
  });

  it("matches the panel, modal and global keys in their scopes only", () => {
    const keymap = createKeymap("other");
    expect(keymap.match(key("j"), ["panel"])).toBe("panel.next");
    expect(keymap.match(key("ArrowDown"), ["panel"])).toBe("panel.next");
    expect(keymap.match(key("k"), ["panel"])).toBe("panel.previous");
    expect(keymap.match(key("Enter"), ["panel"])).toBe("panel.open");
    expect(keymap.match(key("a"), ["modal"])).toBe("gate.approve");
    expect(keymap.match(key("e"), ["modal"])).toBe("gate.edit");
    expect(keymap.match(key("r"), ["modal"])).toBe("gate.reject");
    expect(keymap.match(key("Escape"), ["modal"])).toBe("gate.close");
    expect(keymap.match(key("/"), ["global"])).toBe("panel.filter");
    expect(keymap.match(key("?"), ["anywhere"])).toBe("help.shortcuts");
    // In the panel, a and r decide the gates marked for bulk review, x marks one.
    expect(keymap.match(key("a"), ["panel", "global"])).toBe("panel.approve-marked");
    expect(keymap.match(key("r"), ["panel"])).toBe("panel.reject-marked");
    expect(keymap.match(key("x"), ["panel"])).toBe("panel.mark");
    expect(keymap.match(key("x"), ["modal"])).toBeNull();
    expect(keymap.match(key("e"), ["panel", "global"])).toBe("panel.edit");
    expect(keymap.match(key("e"), ["global"])).toBeNull();
    expect(keymap.match(key("j"), ["modal"])).toBeNull();
  });

  it("shares a key between scopes never active together, and only those", () => {
    const keymap = createKeymap("other");
    expect(keymap.match(key("j"), ["global", "panel"])).toBe("panel.next");
    expect(keymap.match(key("j"), ["global", "runs"])).toBe("runs.next");
    expect(keymap.match(key("r"), ["modal"])).toBe("gate.reject");
    expect(keymap.match(key("r"), ["global", "runs"])).toBe("runs.resume");
    expect(keymap.match(key("2"), ["global", "panel"])).toBe("view.runs");
    expect(keymap.match(key("2"), ["modal"])).toBe("review.score");
    // "?" works anywhere, so the runs view may not take it; nor may one scope take a key twice.
    expect(() => createKeymap("other", { "runs.pause": ["?"] })).toThrow(/\? \((runs.pause, help.shortcuts|help.shortcuts, runs.pause)\)/);
    expect(() => createKeymap("other", { "runs.pause": ["j"] })).toThrow(/j \(runs.next, runs.pause\)/);
    expect(() => createKeymap("other", { "gate.retry": ["1"] })).toThrow(/1 \(gate.retry, review.score\)/);
  });

  it("opens the shortcuts with ? from an open gate too, where digits still score rather than switch views", () => {
    const keymap = createKeymap("other");
    expect(keymap.match(key("?"), ["anywhere", "modal"])).toBe("help.shortcuts");
    expect(keymap.match(key("?"), ["anywhere", "global", "panel"])).toBe("help.shortcuts");
    expect(keymap.match(key("2"), ["anywhere", "modal"])).toBe("review.score");
    expect(keymap.match(key("/"), ["anywhere", "modal"])).toBeNull();
    // So no key of an open gate may take "?".
    expect(() => createKeymap("other", { "gate.retry": ["?"] })).toThrow(/\? \((gate.retry, help.shortcuts|help.shortcuts, gate.retry)\)/);
    expect(worksWhileTyping("help.shortcuts")).toBe(false);
  });

  it("treats a shifted letter as the letter, and Ctrl+j as something else", () => {
    const keymap = createKeymap("other");
    expect(keymap.match(key("J"), ["panel"])).toBe("panel.next");
    expect(keymap.match(key("j", { ctrlKey: true }), ["panel"])).toBeNull();
  });

  it("accepts a reviewer's overrides and refuses ones that clash", () => {
    const keymap = createKeymap("other", { "panel.next": ["n"] });
    expect(keymap.match(key("n"), ["panel"])).toBe("panel.next");
    expect(keymap.match(key("j"), ["panel"])).toBeNull();
    expect(() => createKeymap("other", { "gate.approve": ["r"] })).toThrow(/r \(gate.approve, gate.reject\)/);
  });

  it("writes keys for people and for aria-keyshortcuts", () => {
    expect(displayKey("Mod+Enter", "other")).toBe("Ctrl+Enter");
    expect(displayKey("Mod+Enter", "mac")).toBe("⌘↩");
    expect(displayKey("Escape", "other")).toBe("Esc");
    expect(createKeymap("other").aria("gate.submit")).toBe("Control+Enter");
    expect(createKeymap("other").aria("panel.next")).toBe("j ArrowDown");
  });

  it("normalises modifier order and Mod", () => {
    expect(normalizeKey("Alt+Mod+x", "other")).toBe("Ctrl+Alt+x");
    expect(normalizeKey("Mod+Alt+x", "mac")).toBe("Alt+Meta+x");
    expect(keyOfEvent(key("X", { altKey: true, ctrlKey: true }))).toBe("Ctrl+Alt+x");
  });

  it("brings up the search with Ctrl+K (⌘K on macOS) or 3, and moves through its results with j/k", () => {
    const keymap = createKeymap("other");
    expect(keymap.match(key("k", { ctrlKey: true }), ["global", "panel"])).toBe("search.focus");
    expect(createKeymap("mac").match(key("k", { metaKey: true }), ["global", "runs"])).toBe("search.focus");
    expect(keymap.match(key("3"), ["global", "panel"])).toBe("view.search");
    expect(keymap.match(key("j"), ["global", "search"])).toBe("search.next");
    expect(keymap.match(key("k"), ["global", "search"])).toBe("search.previous");
    expect(keymap.match(key("Enter"), ["global", "search"])).toBe("search.open");
    // The panel keeps `/` for its own filter, even from the search view.
    expect(keymap.match(key("/"), ["global", "search"])).toBe("panel.filter");
    expect(keymap.match(key("k", { ctrlKey: true }), ["modal"])).toBeNull();
  });

  it("detects macOS", () => {
    expect(detectPlatform({ platform: "MacIntel" })).toBe("mac");
    expect(detectPlatform({ platform: "Linux x86_64", userAgent: "X11" })).toBe("other");
  });

  it("lets only submit, close, send and the search through while the reviewer types", () => {
    expect(ACTIONS.filter(worksWhileTyping).sort()).toEqual(["gate.close", "gate.submit", "runs.send", "search.focus"]);
    expect(isTyping({ tagName: "TEXTAREA", isContentEditable: false } as unknown as EventTarget)).toBe(true);
    expect(isTyping({ tagName: "INPUT", type: "search", isContentEditable: false } as unknown as EventTarget)).toBe(true);
    expect(isTyping({ tagName: "INPUT", type: "checkbox", isContentEditable: false } as unknown as EventTarget)).toBe(false);
    expect(isTyping({ tagName: "DIV", isContentEditable: true } as unknown as EventTarget)).toBe(true);
    expect(isTyping({ tagName: "DIV", isContentEditable: false } as unknown as EventTarget)).toBe(false);
    expect(isTyping(null)).toBe(false);
  });
});

describe("what a key does where it is pressed", () => {
  const keymap = createKeymap("other");
  const press = (key: string, mods: { alt?: boolean; ctrl?: boolean; code?: string } = {}) => ({
    key,
    ctrlKey: mods.ctrl ?? false,
    altKey: mods.alt ?? false,
    metaKey: false,
    ...(mods.code ? { code: mods.code } : {}),
  });
  const gate: Scope[] = ["anywhere", "modal"];

  it("a letter typed into a field is the field's, in an open gate and outside it", () => {
    for (const key of ["a", "r", "e", "v", "2", "?"]) {
      expect(actionFor(keymap, press(key), gate, true)).toBeNull();
      expect(actionFor(keymap, press(key), ["anywhere", "global", "panel"], true)).toBeNull();
    }
  });

  it("outside a field the gate's letters choose and arm, digits pick", () => {
    expect(actionFor(keymap, press("a"), gate, false)).toBe("gate.approve");
    expect(actionFor(keymap, press("r"), gate, false)).toBe("gate.reject");
    expect(actionFor(keymap, press("2"), gate, false)).toBe("review.score");
  });

  it("Ctrl+Enter and Esc work from a field: the confirmation and the way out", () => {
    expect(actionFor(keymap, press("Enter", { ctrl: true }), gate, true)).toBe("gate.submit");
    expect(actionFor(keymap, press("Escape"), gate, true)).toBe("gate.close");
  });

  it("Alt with a gate's letter arms from a field, even where Option changes the character", () => {
    expect(actionFor(keymap, press("r", { alt: true }), gate, true)).toBe("gate.reject");
    expect(actionFor(keymap, press("®", { alt: true, code: "KeyR" }), gate, true)).toBe("gate.reject");
    expect(actionFor(keymap, press("n", { alt: true }), gate, true)).toBe("review.add-task");
    expect(actionFor(keymap, press("r", { alt: true }), gate, false)).toBe("gate.reject");
    // Never digits (they are text in a field), never outside a gate.
    expect(actionFor(keymap, press("2", { alt: true }), gate, true)).toBeNull();
    expect(actionFor(keymap, press("a", { alt: true }), ["anywhere", "global", "panel"], true)).toBeNull();
  });
});

describe("the shortcuts list's filter", () => {
  const row = { label: "Arm approval as proposed (then confirm)", keys: ["a"] };
  it("matches every word of the query in the label or the keys, case ignored", () => {
    expect(matchesShortcut(row, "")).toBe(true);
    expect(matchesShortcut(row, "APPROVAL confirm")).toBe(true);
    expect(matchesShortcut(row, "a")).toBe(true);
    expect(matchesShortcut(row, "approval reject")).toBe(false);
    expect(matchesShortcut({ label: "Submit", keys: ["Ctrl+Enter"] }, "ctrl+enter")).toBe(true);
  });
});

// CodeMirror 6 for JSON: syntax colours (the design system's, light or
// dark as the page is), inline lint marks for invalid
// JSON, undo, and highlighted fields. It is most of the page's JavaScript,
// so `JsonEditor.svelte` loads this module on first use (and when the page
// is idle) instead of with the panel: the panel's first render does not
// wait for an editor it does not show.
//
// Ctrl/Cmd+Enter and Esc are left to the modal (submit, close); Tab is not
// captured, so keyboard users can move on.

import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { json, jsonParseLinter } from "@codemirror/lang-json";
import { bracketMatching, HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { linter } from "@codemirror/lint";
import { EditorState, StateEffect, StateField, type Range } from "@codemirror/state";
import { Decoration, EditorView, keymap, lineNumbers, type DecorationSet } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { adoptEditorStyles } from "./csp-styles";
import type { FieldHighlight as Highlight } from "./payload";

export interface JsonEditorOptions {
  text: string;
  label: string;
  testid: string;
  readonly: boolean;
  highlights: Highlight[];
  onchange?: ((text: string) => void) | undefined;
}

/** A mounted editor. */
export interface JsonEditorView {
  setHighlights(list: Highlight[]): void;
  focus(): void;
  /** Replaces the whole text (reset to the proposal). */
  replace(next: string): void;
  destroy(): void;
}

const setHighlights = StateEffect.define<Highlight[]>();
const highlightField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const effect of tr.effects) if (effect.is(setHighlights)) return decorate(effect.value, tr.state.doc.length);
    return marks.map(tr.changes);
  },
  provide: (field) => EditorView.decorations.from(field),
});

function decorate(list: Highlight[], length: number): DecorationSet {
  const ranges: Range<Decoration>[] = list
    .filter((h) => h.from < h.to && h.to <= length)
    .map((h) => Decoration.mark({ class: h.className }).range(h.from, h.to));
  return Decoration.set(ranges, true);
}

// The editor in the design system's colours (app.css tokens), so it follows
// the light and dark themes as the page does, with no reconfiguring.
export const designTheme = EditorView.theme({
  "&": { color: "var(--text)", backgroundColor: "transparent" },
  ".cm-content": { caretColor: "var(--text)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--text)" },
  ".cm-gutters": { backgroundColor: "var(--surface-sunken)", color: "var(--text-muted)", borderRight: "1px solid var(--border)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection": { backgroundColor: "var(--selected)" },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: "var(--hover)", outline: "1px solid var(--border-strong)" },
  ".cm-tooltip": { backgroundColor: "var(--surface-raised)", color: "var(--text)", border: "1px solid var(--border)" },
});

// JSON's colours, from the same tokens (readable on either theme's surface).
export const designHighlight = HighlightStyle.define([
  { tag: tags.propertyName, color: "var(--code-property)" },
  { tag: tags.string, color: "var(--code-string)" },
  { tag: [tags.number, tags.bool, tags.null], color: "var(--code-literal)" },
  { tag: tags.invalid, color: "var(--danger)" },
]);

// The modal owns these keys.
const editorKeys = defaultKeymap.filter((b) => b.key !== "Mod-Enter" && b.key !== "Escape");

/** Mounts an editor in `parent`. */
export function mountJsonEditor(parent: HTMLElement, options: JsonEditorOptions): JsonEditorView {
  adoptEditorStyles();
  const { text, label, testid, readonly, onchange } = options;
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(),
        history(),
        bracketMatching(),
        designTheme,
        syntaxHighlighting(designHighlight),
        json(),
        readonly ? [] : linter(jsonParseLinter(), { delay: 250 }),
        keymap.of([...editorKeys, ...historyKeymap]),
        highlightField,
        // Read-only, but still editable in CodeMirror's sense (focusable, with
        // a caret): a long example is then reached by Tab and scrolled, read
        // and selected with the keys, which a non-editable view refuses.
        EditorState.readOnly.of(readonly),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ "aria-label": label, "data-testid": testid }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) onchange?.(u.state.doc.toString());
        }),
      ],
    }),
  });
  view.dispatch({ effects: setHighlights.of(options.highlights) });
  return {
    setHighlights: (list) => view.dispatch({ effects: setHighlights.of(list) }),
    focus: () => view.focus(),
    replace: (next) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: next } }),
    destroy: () => view.destroy(),
  };
}

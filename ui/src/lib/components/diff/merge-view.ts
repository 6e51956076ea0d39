// A payload's difference from another, read-only, in CodeMirror's merge
// view (`@codemirror/merge`): side by side (the proposal left, the other
// right, scrolled together) or inline (one text, what was removed shown
// above what replaced it). Red marks what the left side lost, green what
// the right side gained, in the design system's colours. Nothing can be
// edited or accepted here: the views are not editable and have no merge
// controls. Loaded with the JSON editor's code, on first use.

import { json } from "@codemirror/lang-json";
import { syntaxHighlighting } from "@codemirror/language";
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { adoptEditorStyles } from "../csp-styles";
import { designHighlight, designTheme } from "../json-editor-view";
import type { DiffLayout } from "./layout";

export interface MergeDiffOptions {
  before: string;
  after: string;
  layout: DiffLayout;
  /** Names of the two sides, for screen readers. */
  beforeLabel: string;
  afterLabel: string;
}

/** A mounted diff. */
export interface MergeDiffView {
  destroy(): void;
}

// Removed text red, added text green, from the tokens both themes define.
const diffTheme = EditorView.theme({
  "&.cm-merge-a .cm-changedLine, .cm-deletedChunk": { backgroundColor: "var(--danger-bg)" },
  "&.cm-merge-b .cm-changedLine, .cm-inlineChangedLine": { backgroundColor: "var(--ok-bg)" },
  "&.cm-merge-a .cm-changedText, .cm-deletedChunk .cm-deletedText": { background: "var(--field-removed)" },
  "&.cm-merge-b .cm-changedText, .cm-inlineChangedLine .cm-changedText": { background: "var(--field-added)" },
  "del, ins": { textDecoration: "none" },
});

/** What both sides share: JSON colours, wrapped lines, and no way to change anything. */
function readOnly(label: string): Extension {
  return [
    designTheme,
    diffTheme,
    syntaxHighlighting(designHighlight),
    json(),
    EditorView.lineWrapping,
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.contentAttributes.of({ "aria-label": label }),
  ];
}

/** Mounts the diff in `parent`, in `layout`. */
export function mountMergeDiff(parent: HTMLElement, options: MergeDiffOptions): MergeDiffView {
  adoptEditorStyles();
  const { before, after, beforeLabel, afterLabel } = options;
  if (options.layout === "split") {
    const view = new MergeView({
      parent,
      a: { doc: before, extensions: readOnly(beforeLabel) },
      b: { doc: after, extensions: readOnly(afterLabel) },
      highlightChanges: true,
      gutter: true,
    });
    return { destroy: () => view.destroy() };
  }
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: after,
      extensions: [
        readOnly(`${afterLabel}, with what ${beforeLabel.toLowerCase()} had removed shown inline`),
        unifiedMergeView({ original: before, mergeControls: false, highlightChanges: true, gutter: true }),
      ],
    }),
  });
  return { destroy: () => view.destroy() };
}

// Where the cursor starts when a gate opens: where the reviewer starts
// work, so what they type lands there and never decides. The panel's a, r
// or e open it with that decision armed or the editor focused; else a
// form's first field, a quality gate's first score, or the note. A gate
// this reviewer cannot decide keeps focus on the dialog.

export type StartWith = "approve" | "reject" | "edit" | null;

/** What the gate opens with: a decision to arm, the editor, an element to focus, or the dialog itself. */
export type Start = { arm: "approve" | "reject" } | { edit: true } | { focus: HTMLElement } | { note: true } | { dialog: true };

export function startOf(
  dialog: HTMLElement | undefined,
  startWith: StartWith,
  decidable: boolean,
  allowed: readonly string[],
  hasNote: boolean,
): Start {
  if (!decidable) return { dialog: true };
  if ((startWith === "approve" || startWith === "reject") && allowed.includes(startWith)) return { arm: startWith };
  if (startWith === "edit" && allowed.includes("edit")) return { edit: true };
  const field =
    dialog?.querySelector<HTMLElement>("[data-testid=response-form] :is(input, select)") ??
    dialog?.querySelector<HTMLElement>("[data-testid=quality-review] input[type=radio]");
  if (field) return { focus: field };
  return hasNote ? { note: true } : { dialog: true };
}

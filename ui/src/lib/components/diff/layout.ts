// How a reviewer likes payload diffs laid out, inline or side by side,
// remembered in this browser (localStorage) across gates and visits. Pure
// parsing here; the shared, reactive choice is `layout.svelte.ts`.

export type DiffLayout = "inline" | "split";

/** Where the choice is kept. */
export const LAYOUT_KEY = "gatehouse.diff-layout";

/** A stored value as a layout; anything else (nothing stored, an old or foreign value) is side by side. */
export function parseLayout(raw: string | null | undefined): DiffLayout {
  return raw === "inline" ? "inline" : "split";
}

/** The words on each choice. */
export const LAYOUT_LABELS: Record<DiffLayout, string> = { inline: "Inline", split: "Side by side" };

// Links into the desk: `#gate=ID` opens one gate, `#view=metrics` one view.
// The desktop app navigates there when the reviewer clicks a notification
// (a gate's, or an alert's); the desk follows the link and removes its
// parameters, so the same link works again later.

/** The views a `#view=...` link may name. */
export const LINKED_VIEWS = ["desk", "runs", "search", "rules", "metrics"] as const;
export type LinkedView = (typeof LINKED_VIEWS)[number];

/** The gate a `#gate=...` fragment names, if any. */
export function gateFromHash(hash: string): string | null {
  const id = new URLSearchParams(hash.replace(/^#/, "")).get("gate")?.trim();
  return id ? id : null;
}

/** The view a `#view=...` fragment names, if it is one of the desk's. */
export function viewFromHash(hash: string): LinkedView | null {
  const view = new URLSearchParams(hash.replace(/^#/, "")).get("view")?.trim();
  return LINKED_VIEWS.find((v) => v === view) ?? null;
}

/** The fragment without its `gate` and `view` parameters ("" when nothing is left). */
export function withoutGate(hash: string): string {
  const rest = new URLSearchParams(hash.replace(/^#/, ""));
  rest.delete("gate");
  rest.delete("view");
  const fragment = rest.toString();
  return fragment ? `#${fragment}` : "";
}

// A link to one gate: `#gate=ID` in the address. The desktop app navigates
// there when the reviewer clicks a gate's notification; the desk opens that
// gate and removes the parameter, so the same link works again later.

/** The gate a `#gate=...` fragment names, if any. */
export function gateFromHash(hash: string): string | null {
  const id = new URLSearchParams(hash.replace(/^#/, "")).get("gate")?.trim();
  return id ? id : null;
}

/** The fragment without its `gate` parameter ("" when nothing is left). */
export function withoutGate(hash: string): string {
  const rest = new URLSearchParams(hash.replace(/^#/, ""));
  rest.delete("gate");
  const fragment = rest.toString();
  return fragment ? `#${fragment}` : "";
}

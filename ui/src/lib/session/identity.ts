// Who the page is signed in as (`GET /api/hitl/whoami`), and whether that
// reviewer may decide a gate: the engine's rule, mirrored so the modal can
// show a restricted gate read-only instead of offering buttons the server
// would refuse with 403. A gate naming no deciders is anyone's; otherwise
// its deciders are reviewers by name or `role:NAME` (a token role or team).

import type { Api } from "../api/client";
import type { Gate, Identity } from "../api/types";

export type { Identity };

/** Whether `me` may decide `gate` (unknown identity: assume so and let the server judge). */
export function mayDecide(gate: Pick<Gate, "deciders">, me: Pick<Identity, "name" | "roles"> | null): boolean {
  const deciders = gate.deciders ?? [];
  if (deciders.length === 0 || me === null) return true;
  return deciders.some((d) => (d.startsWith("role:") ? me.roles.includes(d.slice(5)) : d === me.name));
}

/** "alice, or the security team", for the read-only notice. */
export function decidersSentence(deciders: readonly string[]): string {
  const named = deciders.map((d) => (d.startsWith("role:") ? `anyone with the role ${d.slice(5)}` : d));
  if (named.length <= 1) return named.join("");
  return `${named.slice(0, -1).join(", ")} or ${named[named.length - 1]}`;
}

/** The signed-in identity, or null when the server cannot say (the page still works). */
export async function whoAmI(api: Api): Promise<Identity | null> {
  try {
    const { data } = await api.GET("/api/hitl/whoami");
    return data ?? null;
  } catch {
    return null;
  }
}

// Why the operator's team tools were left out, as the server tells a
// person (`GET /api/hitl/providers`, `team_tools.not_loaded`): the desktop
// app starts without a bad `--team-tools` file's tools, and its window is
// the only place a person who started it from a menu can read why.

import type { Api } from "../api/client";

/** The banner's sentence for what the server said is wrong with the file. */
export function teamToolsNotice(notLoaded: string | null | undefined): string | null {
  const why = notLoaded?.trim();
  return why ? `Team tools not loaded: ${why}` : null;
}

/** The banner's sentence, asked of the server once; none when all is well or the server cannot say. */
export async function loadTeamToolsNotice(api: Api): Promise<string | null> {
  try {
    const { data } = await api.GET("/api/hitl/providers");
    return teamToolsNotice(data?.team_tools?.not_loaded);
  } catch {
    return null;
  }
}

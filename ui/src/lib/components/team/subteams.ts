// A reviewer's sub-team changes as the team panel builds them: the new
// agents typed one a line (`name, role, provider, model, tool, tool`), read
// into the request of `POST /runs/{id}/team` (`create_team`, `modify_team`,
// `dissolve_team`), or the line and what is wrong with it. Nothing throws.

import type { components } from "../../api/schema";
import type { TeamChange } from "./team";

export type SubTeam = components["schemas"]["TeamSubTeam"];
export type SubTeamAction = "create_team" | "modify_team" | "dissolve_team";

export interface NewAgent {
  name: string;
  role: string;
  provider: string;
  model: string;
  tools: string[];
}

/** The agents typed one a line; a blank line is skipped. */
export function parseAgentLines(text: string): { agents: NewAgent[] } | { error: string } {
  const agents: NewAgent[] = [];
  const lines = text.split("\n").map((l) => l.trim());
  for (const [i, line] of lines.entries()) {
    if (line === "") continue;
    const parts = line.split(",").map((p) => p.trim());
    const [name = "", role = "", provider = "scripted", model = "chat", ...tools] = parts;
    if (name === "" || role === "" || provider === "" || model === "") {
      return { error: `line ${i + 1}: give name, role, provider, model (then tools)` };
    }
    agents.push({ name, role, provider, model, tools: tools.filter((t) => t !== "") });
  }
  return { agents };
}

export interface SubTeamForm {
  action: SubTeamAction;
  teamName: string;
  /** New agents, one a line. */
  agents: string;
  purpose: string;
  /** Names of the sub-team's agents to remove. */
  remove: readonly string[];
  reason: string;
}

/** The request for `form`, or what is missing from it. */
export function subTeamChange(form: SubTeamForm): TeamChange | string {
  const team_name = form.teamName.trim();
  if (team_name === "") return "Name the sub-team.";
  if (form.action === "dissolve_team") {
    return { action: "dissolve_team", team_name, ...(form.reason.trim() ? { reason: form.reason.trim() } : {}) };
  }
  const parsed = parseAgentLines(form.agents);
  if ("error" in parsed) return `Agents, ${parsed.error}.`;
  if (form.action === "create_team") {
    if (parsed.agents.length === 0) return "List at least one new agent.";
    return { action: "create_team", team_name, agents: parsed.agents, ...(form.purpose.trim() ? { purpose: form.purpose.trim() } : {}) };
  }
  if (parsed.agents.length === 0 && form.remove.length === 0) return "Add an agent or pick one to remove.";
  return { action: "modify_team", team_name, add_agents: parsed.agents, remove_agents: [...form.remove] };
}

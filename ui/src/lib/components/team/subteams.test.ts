// The sub-team changes a reviewer types: agents read one a line, the
// request for each action, and what is missing named before anything is sent.
import { describe, expect, it } from "vitest";
import { parseAgentLines, subTeamChange, type SubTeamForm } from "./subteams";

const form = (over: Partial<SubTeamForm>): SubTeamForm => ({
  action: "create_team",
  teamName: "audit",
  agents: "",
  purpose: "",
  remove: [],
  reason: "",
  ...over,
});

describe("sub-team changes", () => {
  it("reads agents one a line, with the scripted chat model unless told", () => {
    expect(parseAgentLines("ann, auditor\n\nbob, auditor, openai, gpt-4o-mini, store_memory")).toEqual({
      agents: [
        { name: "ann", role: "auditor", provider: "scripted", model: "chat", tools: [] },
        { name: "bob", role: "auditor", provider: "openai", model: "gpt-4o-mini", tools: ["store_memory"] },
      ],
    });
    expect(parseAgentLines("ann")).toEqual({ error: "line 1: give name, role, provider, model (then tools)" });
  });

  it("builds each action's request and names what is missing", () => {
    expect(subTeamChange(form({ agents: "ann, auditor", purpose: " check " }))).toEqual({
      action: "create_team",
      team_name: "audit",
      agents: [{ name: "ann", role: "auditor", provider: "scripted", model: "chat", tools: [] }],
      purpose: "check",
    });
    expect(subTeamChange(form({}))).toBe("List at least one new agent.");
    expect(subTeamChange(form({ teamName: " " }))).toBe("Name the sub-team.");
    expect(subTeamChange(form({ action: "modify_team", remove: ["ann"] }))).toEqual({
      action: "modify_team",
      team_name: "audit",
      add_agents: [],
      remove_agents: ["ann"],
    });
    expect(subTeamChange(form({ action: "modify_team" }))).toBe("Add an agent or pick one to remove.");
    expect(subTeamChange(form({ action: "dissolve_team", reason: "done" }))).toEqual({
      action: "dissolve_team",
      team_name: "audit",
      reason: "done",
    });
    expect(subTeamChange(form({ agents: "ann" }))).toBe("Agents, line 1: give name, role, provider, model (then tools).");
  });
});

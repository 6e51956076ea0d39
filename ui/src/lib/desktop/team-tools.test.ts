import { describe, expect, it } from "vitest";
import { createApi } from "../api/client";
import { loadTeamToolsNotice, teamToolsNotice } from "./team-tools";

function apiAnswering(status: number, body: unknown) {
  const asked: string[] = [];
  const api = createApi("t0ken", {
    baseUrl: "http://127.0.0.1:1",
    fetch: async (request) => {
      asked.push(new URL(request.url).pathname);
      return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    },
  });
  return { api, asked };
}

describe("the team tools notice", () => {
  it("names the file and what is wrong with it", () => {
    expect(teamToolsNotice("/etc/tools.yaml is not a toolbox file: unknown field `shell` at line 2 column 35")).toBe(
      "Team tools not loaded: /etc/tools.yaml is not a toolbox file: unknown field `shell` at line 2 column 35",
    );
  });

  it("is not shown when nothing is wrong", () => {
    expect(teamToolsNotice(null)).toBeNull();
    expect(teamToolsNotice(undefined)).toBeNull();
    expect(teamToolsNotice("  ")).toBeNull();
  });

  it("is read from the providers listing", async () => {
    const { api, asked } = apiAnswering(200, {
      providers: [],
      team_tools: { tools: [], not_loaded: "tools.yaml: MCP server `docs` did not answer within 20 s" },
    });
    expect(await loadTeamToolsNotice(api)).toBe("Team tools not loaded: tools.yaml: MCP server `docs` did not answer within 20 s");
    expect(asked).toEqual(["/api/hitl/providers"]);
  });

  it("says nothing when the server has no team tools, or cannot answer", async () => {
    expect(await loadTeamToolsNotice(apiAnswering(200, { providers: [], team_tools: null }).api)).toBeNull();
    expect(await loadTeamToolsNotice(apiAnswering(200, { providers: [], team_tools: { tools: ["lint"] } }).api)).toBeNull();
    expect(await loadTeamToolsNotice(apiAnswering(500, { code: "internal", message: "x" }).api)).toBeNull();
    const broken = createApi("t", { baseUrl: "http://127.0.0.1:1", fetch: () => Promise.reject(new Error("down")) });
    expect(await loadTeamToolsNotice(broken)).toBeNull();
  });
});

// A live run's breakpoints: built from a kind and a name, described in
// words, kept once each, and saved with the run's step mode.
import { describe, expect, it } from "vitest";
import { createApi } from "../../api/client";
import { jsonResponse, run } from "../../test-fixtures";
import { breakpointOf, describeBreakpoint, setBreakpoints, withBreakpoint, type Breakpoint } from "./breakpoints";

describe("breakpoints", () => {
  it("builds each kind, a name optional for tool calls and handoffs and required for agents and steps", () => {
    expect(breakpointOf("tool_call", " ")).toEqual({ on: "tool_call" });
    expect(breakpointOf("tool_call", "deploy")).toEqual({ on: "tool_call", tool: "deploy" });
    expect(breakpointOf("handoff", "tester")).toEqual({ on: "handoff", to: "tester" });
    expect(breakpointOf("error", "ignored")).toEqual({ on: "error" });
    expect(breakpointOf("agent", "deployer")).toEqual({ on: "agent", name: "deployer" });
    expect(breakpointOf("agent", "")).toBe("Name the agent whose turn it pauses on.");
    expect(breakpointOf("step", "")).toBe("Name the step it pauses on.");
    expect(breakpointOf("step", "agent_turn")).toEqual({ on: "step", name: "agent_turn" });
  });

  it("describes each and keeps the same one once", () => {
    const list: Breakpoint[] = [{ on: "tool_call" }, { on: "handoff", to: "tester" }, { on: "error" }, { on: "agent", name: "a" }, { on: "step", name: "s" }];
    expect(list.map(describeBreakpoint)).toEqual(["any tool call", "a handoff to tester", "an error", "a's turn", "the step s"]);
    expect(withBreakpoint(list, { on: "error" })).toHaveLength(5);
    expect(withBreakpoint(list, { on: "handoff" })).toHaveLength(6);
  });

  it("saves the list with the run's step mode kept", async () => {
    const seen: string[] = [];
    const client = createApi("tok", {
      baseUrl: "http://gatehouse.test",
      fetch: async (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname} ${await request.text()}`);
        return jsonResponse(200, run());
      },
    });
    const answer = await setBreakpoints(client, { id: "run_1", step_mode: "breakpoint" }, [{ on: "error" }]);
    expect(answer.ok).toBe(true);
    expect(seen).toEqual([`PUT /api/hitl/runs/run_1/control {"step_mode":"breakpoint","breakpoints":[{"on":"error"}]}`]);
  });
});

import { describe, expect, it } from "vitest";
import { emptyFields, serverProblem, startRequest, toolChoices, type NewRunFields } from "./newrun";

const providers = {
  providers: [
    {
      name: "scripted",
      kind: "scripted",
      endpoint: null,
      tools: ["scripted:chat", "scripted:caption"],
      tool_details: [
        { name: "scripted:chat", description: "Drafts an answer", model: "scripted-chat" },
        { name: "scripted:caption", description: "Captions an image", model: "scripted-caption" },
      ],
    },
    {
      name: "openai",
      kind: "openai_compatible",
      endpoint: "http://127.0.0.1:11434/v1",
      tools: ["openai:llama3"],
      tool_details: [{ name: "openai:llama3", description: "llama3", model: "llama3" }],
    },
  ],
};

function fields(over: Partial<NewRunFields>): NewRunFields {
  return { ...emptyFields(toolChoices(providers)), prompt: "Draft the notes", ...over };
}

describe("new run form", () => {
  it("lists every provider's tools in order, labelled with their protocol", () => {
    const tools = toolChoices(providers);
    expect(tools.map((t) => t.name)).toEqual(["scripted:chat", "scripted:caption", "openai:llama3"]);
    expect(tools[2]!.label).toBe("openai:llama3 (openai compatible)");
    expect(emptyFields(tools).tool).toBe("scripted:chat");
    expect(toolChoices(null)).toEqual([]);
  });

  it("makes the smallest request for the defaults: a tool, a prompt, require_human, continuous", () => {
    const built = startRequest(fields({}));
    expect(built).toEqual({
      body: {
        run_input: { tool: "scripted:chat", prompt: "Draft the notes" },
        hitl_config: { run_policy: "require_human" },
        step_mode: "continuous",
      },
    });
  });

  it("carries instructions, inputs, title, collaboration, thresholds and breakpoints", () => {
    const built = startRequest(
      fields({
        system: "Be terse.",
        inputs: '{"temperature": 0.2}',
        title: "  Notes  ",
        goal: true,
        plan: false,
        policy: "auto_with_thresholds",
        confidenceMin: "0.75",
        safetyFlags: "pii, , nsfw",
        payloadChangesMax: "2",
        stepMode: "breakpoint",
        breakOnCall: true,
        breakOnError: true,
      }),
    );
    if (!("body" in built)) throw new Error(JSON.stringify(built));
    expect(built.body.run_input).toEqual({
      tool: "scripted:chat",
      prompt: "Draft the notes",
      system: "Be terse.",
      inputs: { temperature: 0.2 },
      collaborate: { goal: true, plan: false },
    });
    expect(built.body.hitl_config).toEqual({
      run_policy: "auto_with_thresholds",
      review_thresholds: { confidence_min: 0.75, safety_flags: ["pii", "nsfw"], payload_changes_max: 2 },
    });
    expect(built.body.title).toBe("Notes");
    expect(built.body.breakpoints).toEqual([{ on: "tool_call" }, { on: "error" }]);
  });

  it("names the field of each mistake before anything is sent", () => {
    const problem = (over: Partial<NewRunFields>) => {
      const built = startRequest(fields(over));
      return "problem" in built ? built.problem : null;
    };
    expect(problem({ prompt: "   " })?.field).toBe("prompt");
    expect(problem({ tool: "" })?.field).toBe("tool");
    expect(problem({ inputs: "{temperature: 1}" })).toMatchObject({ field: "inputs" });
    expect(problem({ inputs: "[1]" })?.message).toContain("object of payload fields");
    expect(problem({ policy: "auto_with_thresholds", confidenceMin: "1.5" })?.field).toBe("confidenceMin");
    expect(problem({ policy: "auto_with_thresholds", payloadChangesMax: "2.5" })?.field).toBe("payloadChangesMax");
    expect(problem({ stepMode: "breakpoint", breakOnCall: false, breakOnError: false })?.field).toBe("breakOnCall");
    // Thresholds typed but another policy chosen: they are not checked or sent.
    expect(problem({ policy: "auto", confidenceMin: "nonsense" })).toBeNull();
  });

  it("starts a team run with a pattern and every kind of breakpoint", () => {
    const team = [{ name: "coder", role: "codes", provider: "scripted", model: "chat" }];
    const built = startRequest(
      fields({
        team: JSON.stringify(team),
        pattern: '{"steps": []}',
        stepMode: "breakpoint",
        breakOnCall: false,
        breakOnHandoff: true,
        breakHandoffTo: " tester ",
        breakOnAgents: "coder, deployer",
        breakOnSteps: "agent_turn",
      }),
    );
    if (!("body" in built)) throw new Error(built.problem.message);
    expect(built.body.run_input).toEqual({ prompt: "Draft the notes", team, pattern: { steps: [] } });
    expect(built.body.breakpoints).toEqual([
      { on: "handoff", to: "tester" },
      { on: "agent", name: "coder" },
      { on: "agent", name: "deployer" },
      { on: "step", name: "agent_turn" },
    ]);
    const problem = (over: Partial<NewRunFields>) => {
      const b = startRequest(fields(over));
      return "problem" in b ? b.problem : null;
    };
    expect(problem({ team: "[{name: 1}]" })?.field).toBe("team");
    expect(problem({ team: "[]" })?.message).toContain("Give a list of agents");
    expect(problem({ team: JSON.stringify(team), tool: "" })).toBeNull();
    expect(problem({ pattern: "{}" })).toMatchObject({ field: "pattern", message: "A pattern is for a team: give the team first." });
  });

  it("shows the server's 422 beside the field of the run input it names", () => {
    expect(serverProblem("run_input.team[1].name", "`a` is twice in the team")).toEqual({
      field: "team",
      message: "run_input.team[1].name: `a` is twice in the team",
    });
    expect(serverProblem("run_input.team", "x")?.field).toBe("team");
    expect(serverProblem("run_input.pattern.steps[0].agent", "x")?.field).toBe("pattern");
    expect(serverProblem("run_input.teams", "x")).toBeNull();
    expect(serverProblem(null, "x")).toBeNull();
  });
});

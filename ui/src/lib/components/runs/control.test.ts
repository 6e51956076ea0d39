import { describe, expect, it } from "vitest";
import { createApi } from "../../api/client";
import type { Recording } from "../../api/types";
import { jsonResponse, run } from "../../test-fixtures";
import type { Plan } from "../../api/types";
import { controlRun, exportRecording, importRecording, injectInstruction, overrideNextAgent, replacePlan, setStepMode, stepRun } from "./control";

function api(status: number, body: unknown) {
  const seen: string[] = [];
  const bodies: string[] = [];
  const client = createApi("tok", {
    baseUrl: "http://gatehouse.test",
    fetch: async (request) => {
      const url = new URL(request.url);
      seen.push(`${request.method} ${url.pathname}${url.search}`);
      bodies.push(await request.text());
      return jsonResponse(status, body);
    },
  });
  return { client, seen, bodies };
}

describe("run controls", () => {
  it("pauses, resumes and cancels through the HITL run API's endpoints", async () => {
    const a = api(200, run({ status: "paused" }));
    expect(await controlRun(a.client, "run_1", "pause")).toEqual({ ok: true, value: run({ status: "paused" }) });
    await controlRun(a.client, "run_1", "resume");
    await controlRun(a.client, "run_1", "cancel", "wrong target");
    await controlRun(a.client, "run_1", "cancel");
    expect(a.seen).toEqual([
      "POST /api/hitl/run/run_1/pause",
      "POST /api/hitl/run/run_1/resume",
      "DELETE /api/hitl/run/run_1?reason=wrong%20target",
      "DELETE /api/hitl/run/run_1",
    ]);
  });

  it("says why the server refused", async () => {
    const a = api(409, { code: "invalid_transition", message: "a completed run cannot be paused" });
    expect(await controlRun(a.client, "run_1", "pause")).toMatchObject({
      ok: false,
      message: "Cannot pause the run (409): a completed run cannot be paused",
    });
  });

  it("exports a run's recording and imports one", async () => {
    const recording = { format: "gatehouse-recording", version: 1, exported_at: "t", scope: { run_id: "run_1" }, runs: [], events: [] } as unknown as Recording;
    const out = api(200, recording);
    expect(await exportRecording(out.client, "run_1")).toEqual({ ok: true, value: recording });
    expect(out.seen).toEqual(["GET /api/hitl/runs/run_1/recording"]);
    const into = api(201, { runs: ["run_1"], gates: 0, events: 3 });
    expect(await importRecording(into.client, recording)).toEqual({ ok: true, value: { runs: ["run_1"], gates: 0, events: 3 } });
    expect(into.seen).toEqual(["POST /api/hitl/recordings"]);
    expect(JSON.parse(into.bodies[0]!)).toEqual(recording);
    const dup = api(409, { code: "conflict", message: "run run_1 already exists" });
    expect(await importRecording(dup.client, recording)).toMatchObject({ ok: false, message: "Cannot import the recording (409): run run_1 already exists" });
  });
  it("steps, instructs, chooses the next agent, sets the step mode and replaces the plan", async () => {
    const a = api(200, run());
    await stepRun(a.client, "run_1");
    await injectInstruction(a.client, "run_1", "Use UTC everywhere");
    await overrideNextAgent(a.client, "run_1", "reviewer-bot");
    await overrideNextAgent(a.client, "run_1", null);
    await setStepMode(a.client, run({ control: { breakpoints: [{ on: "error" }] } } as never), "step");
    const plan = { tasks: [{ task_id: "a", description: "Design" }] } as Plan;
    await replacePlan(a.client, "run_1", plan);
    expect(a.seen).toEqual([
      "POST /api/hitl/runs/run_1/step",
      "POST /api/hitl/runs/run_1/instructions",
      "PUT /api/hitl/runs/run_1/next-agent",
      "PUT /api/hitl/runs/run_1/next-agent",
      "PUT /api/hitl/runs/run_1/control",
      "POST /api/hitl/runs/run_1/plan",
    ]);
    expect(a.bodies.slice(1).map((b) => JSON.parse(b))).toEqual([
      { text: "Use UTC everywhere" },
      { agent: "reviewer-bot" },
      { agent: null },
      { step_mode: "step", breakpoints: [{ on: "error" }] },
      { op: "replace", plan },
    ]);
  });
});

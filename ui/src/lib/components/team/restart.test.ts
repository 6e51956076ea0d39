import { describe, expect, it } from "vitest";
import { restartableTasks, restartsPlanTasks, syncLine } from "./restart";

describe("syncLine", () => {
  const branch = (status: string) => ({ agent: "a", task: "t", run_id: "r", status, answer: "" });
  it("says whether the lead still waits and how many branches ended", () => {
    expect(syncLine({ lead: "lead", synced: false, branches: [branch("completed"), branch("active")] })).toBe(
      "lead waits at the sync point: 1 of 2 branches ended",
    );
    expect(syncLine({ lead: "lead", synced: true, branches: [branch("completed"), branch("cancelled")] })).toBe(
      "lead passed the sync point: 2 of 2 branches ended",
    );
  });
});

describe("restarting plan tasks", () => {
  const run = (agent: string, input: unknown) => ({ agent, input }) as Parameters<typeof restartsPlanTasks>[0];
  it("is offered on runs Gatehouse drives through a plan or a team only", () => {
    expect(restartsPlanTasks(run("gatehouse", { tool: "scripted:chat", collaborate: { plan: true } }))).toBe(true);
    expect(restartsPlanTasks(run("gatehouse", { team: [{ name: "a" }] }))).toBe(true);
    expect(restartsPlanTasks(run("gatehouse", { tool: "scripted:chat", collaborate: { plan: false } }))).toBe(false);
    expect(restartsPlanTasks(run("gatehouse", { tool: "scripted:chat" }))).toBe(false);
    expect(restartsPlanTasks(run("my-agent", { team: [{ name: "a" }] }))).toBe(false);
    expect(restartsPlanTasks(null)).toBe(false);
  });
  it("lists the tasks that have started, with their descriptions", () => {
    const task = (task_id: string, status: string) => ({ task_id, status, description: `do ${task_id}` });
    const revision = { plan: { tasks: [task("t1", "completed"), task("t2", "in_progress"), task("t3", "pending")] } };
    expect(restartableTasks(revision as unknown as Parameters<typeof restartableTasks>[0])).toEqual([
      { id: "t1", line: "t1: do t1" },
      { id: "t2", line: "t2: do t2" },
    ]);
    expect(restartableTasks(null)).toEqual([]);
  });
});

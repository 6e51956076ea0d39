// The team panel's pure parts: a run's team names, and the handoff graph's layout.

import { describe, expect, it } from "vitest";
import { graphLayout, tasksOf, teamNames } from "./team";

describe("team names", () => {
  it("are read from a run's input, and a run without a team has none", () => {
    const input = { team: { agents: [{ name: "coder" }, { name: "tester" }] } };
    expect(teamNames({ input })).toEqual(["coder", "tester"]);
    expect(teamNames({ input: { tool: "scripted:chat" } })).toBeNull();
    expect(teamNames({ input: { team: { agents: [] } } })).toBeNull();
    expect(teamNames(null)).toBeNull();
  });
});

describe("the handoff graph", () => {
  const story = [
    { from: "coder", to: "tester" },
    { from: "tester", to: "coder" },
    { from: "coder", to: "tester" },
    { from: "tester", to: "deployer" },
  ];

  it("puts every agent on a circle and one arrow per direction with its count", () => {
    const { nodes, edges } = graphLayout(["coder", "tester", "deployer"], story, 200);
    expect(nodes.map((n) => n.name)).toEqual(["coder", "tester", "deployer"]);
    expect(nodes[0]).toEqual({ name: "coder", x: 100, y: 30 });
    const counts = Object.fromEntries(edges.map((e) => [`${e.from}>${e.to}`, e.count]));
    expect(counts).toEqual({ "coder>tester": 2, "tester>coder": 1, "tester>deployer": 1 });
  });

  it("bends the arrows of a pair that hands off both ways apart", () => {
    const { edges } = graphLayout(["coder", "tester", "deployer"], story, 200);
    const there = edges.find((e) => e.from === "coder")!;
    const back = edges.find((e) => e.from === "tester" && e.to === "coder")!;
    const straight = edges.find((e) => e.to === "deployer")!;
    expect(there.label).not.toEqual(back.label);
    const [, , , , qx, qy] = straight.path.split(" ");
    expect([Number(qx), Number(qy)]).toEqual([straight.label.x, straight.label.y]);
  });

  it("draws work handed out in parallel as its own arrows, from the coordinating agent to each branch's", () => {
    const sweep = [{ lead: "lead", branches: [{ agent: "ana" }, { agent: "ben" }, { agent: "cy" }] }];
    const { nodes, edges } = graphLayout(["lead", "ana", "ben"], [{ from: "ana", to: "lead" }], 200, sweep);
    expect(nodes.map((n) => n.name)).toEqual(["lead", "ana", "ben", "cy"]);
    const drawn = edges.map((e) => `${e.from}>${e.to}${e.parallel ? " parallel" : ""} ${e.count}`);
    expect(drawn).toEqual(["ana>lead 1", "lead>ana parallel 1", "lead>ben parallel 1", "lead>cy parallel 1"]);
    const [back, out] = [edges[0]!, edges[1]!];
    expect(back.label).not.toEqual(out.label);
    expect(graphLayout(["a"], [], 200).edges).toEqual([]);
  });

  it("keeps an agent who left but was handed to", () => {
    const { nodes } = graphLayout(["coder"], [{ from: "coder", to: "auditor" }], 200);
    expect(nodes.map((n) => n.name)).toEqual(["coder", "auditor"]);
  });
});

describe("an agent's plan tasks", () => {
  it("are the tasks assigned to it, with their status, in plan order", () => {
    const plan = {
      tasks: [
        { task_id: "task_001", assigned_agent: "coder", status: "completed" },
        { task_id: "task_002", assigned_agent: "tester", status: "in_progress" },
        { task_id: "task_003", assigned_agent: "coder" },
      ],
    } as unknown as Parameters<typeof tasksOf>[0];
    expect(tasksOf(plan, "coder")).toEqual(["task_001 (completed)", "task_003 (pending)"]);
    expect(tasksOf(plan, "tester")).toEqual(["task_002 (in progress)"]);
    expect(tasksOf(null, "coder")).toEqual([]);
  });
});

// A desk with something on it, for the layout specs and the screenshots: a
// run with a plan, a long timeline (turns, handoffs, a decided gate, a
// reviewer's instruction), and pending gates of each blocking mode, one
// with markdown in its text and a payload with a deadline.

import type { Gatehouse } from "./gatehouse.mjs";

export interface Scene {
  reviewer: string;
  runId: string;
  runTitle: string;
  /** The pending gates, most urgent first as the panel lists them. */
  gates: { id: string; mode: string; text: string }[];
}

export async function buildScene(gatehouse: Gatehouse, turns = 24): Promise<Scene> {
  const reviewer = await gatehouse.token("reviewer", "alice");
  const writerToken = await gatehouse.token("agent", "writer");
  const writer = gatehouse.agent(writerToken);
  const runTitle = "Beta release notes";
  const runId = await writer.startRun(runTitle);
  const tasks = ["Collect merged PRs", "Group them by area", "Draft the notes", "Check the links", "Ask for a review", "Publish"];
  for (const [i, description] of tasks.entries()) {
    await gatehouse.call(writerToken, "POST", `/runs/${runId}/plan`, { op: "add_task", task_id: `t${i + 1}`, description });
  }
  await gatehouse.call(writerToken, "POST", `/runs/${runId}/plan`, { op: "update_task", task_id: "t1", status: "completed" });
  const decided = await writer.openGate(runId, { kind: "approval", action: "use_template", mode: "sync", text: "Use the v2 changelog template?" });
  await gatehouse.call(reviewer, "POST", `/gates/${decided.id}/resolve`, { action: "approve", text: "Yes, v2" });
  await gatehouse.call(reviewer, "POST", `/runs/${runId}/instructions`, { text: "Keep each entry to one line." });
  for (let i = 1; i <= turns; i++) {
    const handoff = i % 6 === 0;
    await gatehouse.call(writerToken, "POST", `/runs/${runId}/turns?wait=0`, {
      role: "agent",
      content: handoff ? `Handing the draft on, part ${i}.` : `Worked on part ${i} of the notes: grouped the changes and wrote a line for each.`,
      ...(handoff ? { metadata: { handoff: { destination_agent: "editor" } } } : {}),
    });
  }

  const deployer = gatehouse.agent(await gatehouse.token("agent", "deployer"));
  const opsRun = await deployer.startRun("Nightly data export");
  const sync = await deployer.openGate(opsRun, {
    kind: "approval",
    action: "upload",
    mode: "sync",
    priority: "urgent",
    text: "**Upload round 1**: push `export.csv` to the partner bucket?\n\nIt holds 12,000 rows of order totals.",
    payload: { bucket: "partner-exports", file: "export.csv", rows: 12000 },
    expires_in_secs: 3600,
  });
  const async = await writer.openGate(runId, { kind: "question", mode: "async", priority: "high", text: "Should the notes mention the *deprecated* flags?" });
  const advisory = await writer.openGate(runId, { kind: "approval", action: "tone", mode: "advisory", text: "Is a lighter tone fine for this release?" });
  return {
    reviewer,
    runId,
    runTitle,
    gates: [sync, async, advisory].map((g) => ({ id: g.id, mode: g.mode, text: g.text })),
  };
}

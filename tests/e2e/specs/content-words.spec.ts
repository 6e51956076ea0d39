// Words, not identifiers: every view and every kind of gate is walked and
// no enum value of the server's OpenAPI document reaches the reviewer raw.
//
// The rule (chosen so ordinary English is not a false positive):
//  1. A snake_case enum value ("plan_review", "awaiting_human") is never
//     an English word: it fails anywhere in visible text as a whole word.
//  2. A one-word enum value ("pending", "urgent", "sync") is also an
//     English word, so it fails only where a label stands alone: an element
//     whose whole text is exactly that value (a chip, a status, a badge, a
//     menu's option), or one of the known label slots below. "task-4 added"
//     in a sentence passes; a status chip reading "pending" fails.
// Agents' own text is theirs and is not checked: code, pre, kbd, fields,
// the editors and the gate's markdown text.
//
// The same walk checks the contents the issue named: the step in words,
// goals and deliverables readable rather than escaped JSON, the
// information review's current prompt and model, safety chips that agree
// with the audit, and the search's status filter in words.

import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { expect, signIn, test } from "../support/fixtures";

/** Every enum value of the OpenAPI document. */
function enumValues(): string[] {
  const doc: unknown = JSON.parse(readFileSync(new URL("../../../ui/openapi.json", import.meta.url), "utf8"));
  const values = new Set<string>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    const e = (node as { enum?: unknown }).enum;
    if (Array.isArray(e)) for (const v of e) if (typeof v === "string") values.add(v);
    for (const child of Object.values(node)) walk(child);
  };
  walk(doc);
  return [...values];
}

const VALUES = enumValues();

/** The places that hold a label and nothing else. */
const SLOTS = [
  "option",
  "[data-testid=hit-status]",
  "[data-testid=hit-kind]",
  "[data-testid=run-status]",
  "[data-testid=rule-status]",
  "[data-testid=gate-priority]",
  "[data-testid=mode-badge]",
  "[data-testid=task-status-text]",
  "[data-testid=context-step]",
  "[data-testid=decision-outcome]",
  "[data-testid=batch-action-state]",
  ".priority",
  ".status",
  ".kind",
  ".chip",
  ".who",
].join(", ");

/** Agents' text and typed fields: not the UI's words. */
const AGENT_TEXT = "code, pre, kbd, textarea, input, script, style, .cm-editor, [data-testid=gate-text], .markdown";

/** The raw enum values shown on the page, each with where. */
async function rawEnums(page: Page): Promise<string[]> {
  return page.evaluate(
    ({ values, slots, skip }) => {
      const snake = values.filter((v) => v.includes("_"));
      const single = new Set(values);
      const found: string[] = [];
      const where = (el: Element) => el.closest("[data-testid]")?.getAttribute("data-testid") ?? el.tagName.toLowerCase();
      const shown = (el: Element) => el.tagName === "OPTION" || (el as HTMLElement).checkVisibility?.() !== false;
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!el || el.closest(skip) || !shown(el)) continue;
        const text = (node.nodeValue ?? "").trim();
        if (text === "") continue;
        for (const v of snake) {
          if (new RegExp(`(^|[^A-Za-z0-9_-])${v}($|[^A-Za-z0-9_-])`).test(text)) found.push(`"${v}" in "${text}" (${where(el)})`);
        }
      }
      const alone = [...document.body.querySelectorAll("*")].filter((el) => el.children.length === 0 || el.matches(slots));
      for (const el of alone) {
        if (el.closest(skip) || !shown(el)) continue;
        const text = (el.textContent ?? "").trim().replace(/^\((.*)\)$/, "$1");
        if (single.has(text)) found.push(`"${text}" alone (${where(el)})`);
      }
      return [...new Set(found)];
    },
    { values: VALUES, slots: SLOTS, skip: AGENT_TEXT },
  );
}

async function expectWords(page: Page, what: string): Promise<void> {
  expect(await rawEnums(page), `raw enum values in ${what}`).toEqual([]);
}

test("every view and every kind of gate reads in words, never as the API's identifiers", async ({ page, gatehouse }) => {
  test.setTimeout(90_000);
  const agent = gatehouse.agent(await gatehouse.token("agent", "planner"));
  const runId = await agent.startRun("Poster campaign");
  await gatehouse.call(await gatehouse.token("agent", "planner"), "POST", `/runs/${runId}/turns`, { role: "agent", content: "Drafting the plan." });
  const gates = {
    approval: await agent.openGate(runId, {
      kind: "approval",
      action: "deploy",
      mode: "sync",
      priority: "urgent",
      text: "Deploy the poster site?",
      context: { step: "plan_review", task_id: "t1" },
      expires_in_secs: 900,
    }),
    payload: await agent.openGate(runId, {
      kind: "payload_review",
      mode: "async",
      priority: "high",
      text: "Check the email payload.",
      payload: { to: "team@example.com", subject: "Launch" },
      example_input: { to: "someone@example.com", subject: "Hello" },
    }),
    question: await agent.openGate(runId, { kind: "question", mode: "advisory", priority: "low", text: "Which colour?" }),
    information: await agent.openGate(runId, {
      kind: "information_review",
      mode: "sync",
      text: "Run this request?",
      payload: { request: { input: "Write a tagline for the poster", model_name: "tiny-model" } },
      confidence: 0.6,
    }),
    response: await agent.openGate(runId, {
      kind: "response_review",
      mode: "sync",
      text: "Review the reply.",
      raw: "Card 4111 1111 1111 1111 charged.",
      audited: "Card [removed] charged.",
      indicators: ["pii: card number removed"],
    }),
    quality: await agent.openGate(runId, {
      kind: "quality_score",
      mode: "sync",
      text: "Score the copy.",
      rubric: ["Clarity"],
      deliverable_id: "copy-v1",
      payload: JSON.stringify({ headline: "Spring sale", body_copy: "Everything must go" }),
    }),
    goal: await agent.openGate(runId, {
      kind: "goal_review",
      mode: "sync",
      text: "Is this the goal?",
      goal: { objective: "Sell the posters", success_criteria: ["100 sold", "No refunds"] },
    }),
    plan: await agent.openGate(runId, {
      kind: "plan_review",
      mode: "sync",
      text: "Approve the plan?",
      payload: {
        tasks: [
          { task_id: "draft", description: "Draft the copy", status: "in_progress" },
          { task_id: "print", description: "Print the posters", status: "pending", dependencies: ["draft"] },
        ],
      },
    }),
  };
  const decided = await agent.openGate(runId, { kind: "approval", action: "notify", mode: "sync", text: "Tell the team?", payload: { channel: "general" } });
  await gatehouse.call(await gatehouse.token("reviewer", "bob"), "POST", `/gates/${decided.id}/resolve`, { action: "edit", payload: { channel: "launch" } });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  await expect(page.getByTestId("blocker-row")).toHaveCount(8);
  await expectWords(page, "the desk");

  const modal = page.getByTestId("resolution-modal");
  async function openGate(id: string): Promise<void> {
    await page.evaluate((gateId) => (window.location.hash = `gate=${gateId}`), id);
    await expect(modal).toHaveAttribute("data-gate-id", id);
    await expect(modal.getByTestId("gate-text")).toBeVisible();
  }
  async function closeGate(): Promise<void> {
    await modal.getByTestId("modal-close").click();
    await expect(modal).toHaveCount(0);
  }

  // The approval: its priority in the header, the step in words.
  await openGate(gates.approval.id);
  await expect(modal.getByTestId("gate-priority")).toHaveText("Urgent priority");
  await expect(modal.getByTestId("context-step")).toHaveText("Plan review");
  await expectWords(page, "an approval");
  await closeGate();

  for (const [name, gate] of [
    ["a payload review", gates.payload],
    ["a question", gates.question],
  ] as const) {
    await openGate(gate.id);
    await expectWords(page, name);
    await closeGate();
  }

  // The information review shows the request's current prompt and model, wherever the agent put them.
  await openGate(gates.information.id);
  await expect(modal.getByTestId("information-prompt")).toHaveValue("Write a tagline for the poster");
  await expect(modal.getByTestId("information-model")).toHaveValue("tiny-model");
  await expectWords(page, "an information review");
  await closeGate();

  // The response review: no "No safety flags" beside what the audit found.
  await openGate(gates.response.id);
  const signals = modal.getByTestId("review-signals");
  await expect(signals.getByTestId("indicator")).toHaveText("pii: card number removed");
  await expect(signals.getByTestId("audit-found")).toHaveText("The audit found:");
  await expect(signals.getByTestId("no-safety-flags")).toHaveCount(0);
  await expectWords(page, "a response review");
  await closeGate();

  // The deliverable and the goal read as text, not as escaped JSON.
  await openGate(gates.quality.id);
  await expect(modal.getByTestId("deliverable")).toHaveText("Headline: Spring sale\nBody copy: Everything must go");
  await expectWords(page, "a quality gate");
  await closeGate();
  await openGate(gates.goal.id);
  await expect(modal.getByTestId("goal-current")).toHaveText("Objective: Sell the posters\nSuccess criteria:\n  • 100 sold\n  • No refunds");
  await expect(modal.getByTestId("goal-current")).not.toContainText("{");
  await expectWords(page, "a goal review");
  await closeGate();

  await openGate(gates.plan.id);
  await expect(modal.getByTestId("task-status").first().locator("option:checked")).toHaveText("In progress");
  await expectWords(page, "a plan review");
  await closeGate();

  // A decided gate, read from the search; the status filter in words.
  await page.keyboard.press("3");
  const search = page.getByTestId("search-view");
  await expect(search.getByTestId("search-status-filter").locator("option")).toHaveText(["Any status", "Pending", "Decided", "Expired", "Cancelled"]);
  await expect(search.getByTestId("search-hit")).toHaveCount(9);
  await expectWords(page, "the search");
  await openGate(decided.id);
  await expect(modal.getByTestId("decision-outcome")).toContainText("Approved with edits by bob");
  await expectWords(page, "a decided gate");
  await closeGate();

  // The runs, with the selected run's timeline.
  await page.getByTestId("tab-runs").click();
  await expect(page.getByTestId("run-status").first()).toHaveText("Awaiting a reviewer");
  await expect(page.getByTestId("timeline-entry").filter({ hasText: "Gate opened (approval, SYNC): Deploy the poster site?" })).toHaveCount(1);
  await expectWords(page, "the runs");

  await page.getByTestId("tab-rules").click();
  await expect(page.getByTestId("rules-view")).toBeVisible();
  await expectWords(page, "the rules");
  await page.getByTestId("tab-metrics").click();
  await expect(page.getByTestId("metrics-view")).toBeVisible();
  await expectWords(page, "the metrics");
});

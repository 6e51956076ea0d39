// The reviewer UI's benchmarks (issue 4), in Debian's headless Chromium
// against a real `gatehouse serve` ($GATEHOUSE_BIN, else the debug build)
// serving ui/dist, with 10,000 pending gates opened over HTTP:
//
//   1. panel first render: navigation to the panel showing the count and
//      its top rows, painted; split into the page and bundle before the
//      first queue request, the server's answer, and the UI's own work
//      after it; and navigation to the whole queue listed (the panel loads
//      the top of a long queue first, then all of it);
//   2. a keyboard move (j/k) in the 10,000-gate panel: from the key event
//      to the selection moved with style and layout done (the UI's work),
//      and to the next frame, beside a control key bound to nothing (the
//      frame clock's own floor);
//   3. a new gate visible: from the agent's POST returning to its row in
//      the panel, painted, with no gate and with 10,000 gates pending;
//   4. a gate whose payload is almost 1 MB: Enter to its payload shown in
//      the editor, painted (`--opens` times), and each key typed into it to
//      the next frame (`--keys` keys).
//
// Usage: node bench/ui-bench.mjs [--gates 10000] [--rounds 5] [--moves 200] [--keys 40] [--opens 5] [--json FILE]
// Not part of `npm test`; the figures are in docs/benchmarks.md.

import { chromium } from "@playwright/test";
import { performance } from "node:perf_hooks";
import { writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { CHROMIUM, CHROMIUM_ARGS } from "../support/chromium.mjs";
import { BINARY, Gatehouse, UI_DIR } from "../support/gatehouse.mjs";

const { values: opts } = parseArgs({
  options: {
    gates: { type: "string", default: "10000" },
    rounds: { type: "string", default: "5" },
    moves: { type: "string", default: "200" },
    keys: { type: "string", default: "40" },
    opens: { type: "string", default: "5" },
    json: { type: "string" },
  },
});
const GATES = Number(opts.gates);
const ROUNDS = Number(opts.rounds);
const MOVES = Number(opts.moves);
const OPENS = Number(opts.opens);
const now = () => performance.timeOrigin + performance.now();

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { n: s.length, median: at(0.5), p95: at(0.95), max: s[s.length - 1], min: s[0] };
}
const ms = (x) => `${x.toFixed(1)} ms`;
const line = (name, st) =>
  console.log(`${name}: median ${ms(st.median)}, p95 ${ms(st.p95)}, max ${ms(st.max)} (n=${st.n})`);

/** Opens `count` gates over HTTP, `concurrency` requests in flight; returns how long it took. */
async function seed(server, agent, count, concurrency = 32) {
  const runs = [];
  for (let i = 0; i < Math.max(1, Math.ceil(count / 500)); i++) runs.push(await agent.startRun(`bench run ${i}`));
  const modes = ["sync", "async", "advisory"];
  // Never urgent: the latency probe's urgent sync gates then sort to the top, on screen.
  const priorities = ["low", "normal", "high"];
  let next = 0;
  const started = now();
  async function worker() {
    while (next < count) {
      const i = next++;
      await agent.openGate(runs[i % runs.length], {
        kind: i % 2 ? "question" : "approval",
        ...(i % 2 ? {} : { action: "deploy" }),
        mode: modes[i % 3],
        priority: priorities[Math.floor(i / 3) % 3],
        text: `Gate ${i}: should the agent go ahead with step ${i % 97} of the plan for customer ${i % 13}?`,
      });
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return now() - started;
}

/**
 * Installed before the page's scripts: marks when the panel first shows the
 * count of `expected` gates and its top rows (`panel`), and when every one
 * of them is listed (`full`: a row's aria-setsize), each at the frame that
 * paints it; and the queue requests' timings.
 */
function panelProbe(expected) {
  const w = window;
  w.__bench = { panel: null, full: null, requests: [] };
  const rowSelector = '[data-testid="blocker-row"]';
  const painted = (key) => requestAnimationFrame(() => setTimeout(() => (w.__bench[key] = performance.now())));
  let panelSeen = false;
  let fullSeen = false;
  const observer = new MutationObserver(() => {
    const row = document.querySelector(rowSelector);
    if (!panelSeen && row && document.querySelector('[data-testid="blocker-count"]')?.textContent === String(expected)) {
      panelSeen = true;
      w.__bench.panelDom = performance.now();
      painted("panel");
    }
    if (!fullSeen && row?.getAttribute("aria-setsize") === String(expected)) {
      fullSeen = true;
      painted("full");
    }
    if (panelSeen && fullSeen) observer.disconnect();
  });
  document.addEventListener("DOMContentLoaded", () =>
    observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true }),
  );
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.name.includes("/api/hitl/gates?")) w.__bench.requests.push({ start: e.requestStart, end: e.responseEnd });
    }
  }).observe({ type: "resource", buffered: true });
}

async function newPage(browser, server, token, expected) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(panelProbe, expected);
  return { context, page };
}

async function firstRender(browser, server, token) {
  const parts = { total: [], beforeRequest: [], request: [], afterResponse: [], domToPaint: [], full: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const { context, page } = await newPage(browser, server, token, GATES);
    await page.goto(server.signInUrl(token));
    await page.waitForFunction(() => window.__bench.panel !== null && window.__bench.full !== null, null, {
      timeout: 60_000,
    });
    const b = await page.evaluate(() => window.__bench);
    const first = b.requests[0];
    parts.total.push(b.panel);
    parts.beforeRequest.push(first.start);
    parts.request.push(first.end - first.start);
    parts.afterResponse.push(b.panel - first.end);
    parts.domToPaint.push(b.panel - b.panelDom);
    parts.full.push(b.full);
    await context.close();
  }
  return Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, stats(v)]));
}

/** Waits until the page has settled: the stream is live and no frame took long for a while. */
async function settle(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="connection"]')?.textContent === "Live", null, {
    timeout: 120_000,
  });
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        let last = performance.now();
        let quiet = 0;
        const tick = (t) => {
          quiet = t - last < 30 ? quiet + 1 : 0;
          last = t;
          if (quiet >= 60) resolve(undefined);
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
  );
}

async function keyboardMoves(browser, server, token) {
  const { context, page } = await newPage(browser, server, token, GATES);
  await page.goto(server.signInUrl(token));
  await page.waitForFunction(() => window.__bench.full !== null, null, { timeout: 60_000 });
  await settle(page);
  await page.getByTestId("blocker-list").focus();
  await page.evaluate(() => {
    const w = window;
    w.__moves = { work: [], frame: [], queued: [], idle: [] };
    /** @type {{ start: number, listener: number, before: string | undefined } | null} */
    let pending = null;
    const selectedRow = () => document.querySelector('[data-testid="blocker-row"][aria-selected="true"]');
    // First of all listeners (capture): the key event arrives.
    window.addEventListener(
      "keydown",
      (e) => {
        if (e.key === "x") {
          // A key bound to nothing: the floor that waiting for a frame sets.
          const start = e.timeStamp;
          requestAnimationFrame(() => setTimeout(() => w.__moves.idle.push(performance.now() - start)));
        }
        if (e.key !== "j" && e.key !== "k") return;
        pending = { start: e.timeStamp, listener: performance.now(), before: selectedRow()?.id };
        const p = pending;
        requestAnimationFrame(() => setTimeout(() => w.__moves.frame.push(performance.now() - p.start)));
      },
      { capture: true },
    );
    // Last of all listeners (bubbling, added after the app's): the app has
    // handled the key and queued its DOM update as a microtask; ours runs
    // after it, then forces style and layout.
    window.addEventListener("keydown", () => {
      const p = pending;
      if (p === null) return;
      pending = null;
      queueMicrotask(() => {
        const selected = selectedRow();
        selected?.getBoundingClientRect();
        if (selected && selected.id !== p.before) {
          w.__moves.work.push(performance.now() - p.listener);
          w.__moves.queued.push(p.listener - p.start);
        }
      });
    });
  });
  // Down through the list (scrolling the virtual window), then back up.
  for (let i = 0; i < MOVES; i++) {
    await page.keyboard.press(i < MOVES / 2 ? "j" : "k");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r))));
  }
  for (let i = 0; i < Math.min(MOVES, 60); i++) {
    await page.keyboard.press("x");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r))));
  }
  const moves = await page.evaluate(() => window.__moves);
  await context.close();
  if (moves.work.length < MOVES * 0.95) throw new Error(`only ${moves.work.length} of ${MOVES} moves changed the selection`);
  return { work: stats(moves.work), frame: stats(moves.frame), queued: stats(moves.queued), idle: stats(moves.idle) };
}

/** A gate whose payload is almost 1 MB: opening it (Enter to its payload
 * shown in the editor, painted; `OPENS` times, closed with Esc in between),
 * then typing into its editor (each key's event to the next frame: the
 * editor updated and painted). */
async function largePayload(browser, server, token, agent) {
  const runId = await agent.startRun("Bulk import (benchmark)");
  const rows = Array.from({ length: 12_500 }, (_, i) => ({ id: i, name: `customer ${i}`, email: `c${i}@example.com`, plan: "pro" }));
  const gate = await agent.openGate(runId, { kind: "approval", action: "import", priority: "urgent", text: "Import?", payload: { table: "customers", rows } });
  const { context, page } = await newPage(browser, server, token, 0);
  await page.goto(server.signInUrl(token));
  await page.getByTestId("blocker-row").first().waitFor();
  const editor = page.getByTestId("payload-input");
  const opened = [];
  for (let i = 0; i < OPENS; i++) {
    if (i > 0) {
      await page.keyboard.press("Escape");
      await editor.waitFor({ state: "detached" });
      await settle(page);
    }
    const start = await page.evaluate(() => performance.now());
    await page.keyboard.press("Enter");
    await editor.getByText('"email": "c0@example.com"').first().waitFor();
    opened.push((await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now())))))) - start);
  }
  await page.keyboard.press("e");
  await page.keyboard.press("Control+End");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  await page.evaluate(() => {
    const w = window;
    w.__typed = [];
    window.addEventListener(
      "keydown",
      (e) => {
        const start = e.timeStamp;
        requestAnimationFrame(() => setTimeout(() => w.__typed.push(performance.now() - start)));
      },
      { capture: true },
    );
  });
  const keys = Number(opts.keys);
  for (let i = 0; i < keys; i++) {
    await page.keyboard.press(i % 2 === 0 ? "x" : "Backspace");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r))));
  }
  const typed = await page.evaluate(() => window.__typed);
  await context.close();
  // Out of the way of the queue figures that follow.
  await server.call(token, "POST", `/gates/${gate.id}/resolve`, { action: "reject", text: "benchmark done" });
  if (typed.length < keys) throw new Error(`only ${typed.length} of ${keys} keys were seen`);
  return { open: stats(opened), typing: stats(typed) };
}

async function newGateLatency(browser, server, token, agent, label, samples = 30) {
  const { context, page } = await newPage(browser, server, token, -1);
  await page.goto(server.signInUrl(token));
  await page.waitForSelector('[data-testid="blocker-row"], [data-testid="blocker-empty"]');
  await settle(page);
  await page.evaluate(() => {
    const w = window;
    w.__seen = new Map();
    new MutationObserver((records) => {
      for (const r of records)
        for (const n of r.addedNodes) {
          const rows = n instanceof Element ? [n, ...n.querySelectorAll("[data-gate-id]")] : [];
          for (const row of rows) {
            const id = row.getAttribute?.("data-gate-id");
            if (!id || w.__seen.has(id)) continue;
            w.__seen.set(id, null);
            requestAnimationFrame(() => setTimeout(() => w.__seen.set(id, performance.timeOrigin + performance.now())));
          }
        }
    }).observe(document.body, { childList: true, subtree: true });
  });
  const runId = await agent.startRun(`latency ${label}`);
  const latencies = [];
  for (let i = 0; i < samples; i++) {
    // Sync and urgent: it sorts to the top of the panel, on screen.
    const gate = await agent.openGate(runId, {
      kind: "question",
      mode: "sync",
      priority: "urgent",
      text: `New gate ${i}`,
    });
    const returned = now();
    const painted = await page
      .waitForFunction((id) => window.__seen.get(id) ?? false, gate.id, { timeout: 10_000, polling: 5 })
      .then((h) => h.jsonValue());
    latencies.push(painted - returned);
    // Decided at once, so the next one takes the top row again.
    await server.call(token, "POST", `/gates/${gate.id}/resolve`, { action: "respond", text: "ok" });
    await page.waitForTimeout(100);
  }
  await context.close();
  return stats(latencies);
}

const results = { gates: GATES, rounds: ROUNDS, binary: BINARY, ui: UI_DIR };
console.log(`gatehouse: ${BINARY}\nui: ${UI_DIR}\nbrowser: ${CHROMIUM}`);
const server = await Gatehouse.start();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
try {
  const agent = server.agent(await server.token("agent", "bench-agent"));
  const reviewer = await server.token("reviewer", "bench-reviewer");

  results.newGateSmall = await newGateLatency(browser, server, reviewer, agent, "small queue");
  line("new gate visible after the POST returns (none pending)", results.newGateSmall);

  const large = await largePayload(browser, server, reviewer, agent);
  results.openLarge = large.open;
  results.typingLarge = large.typing;
  line("opening a gate with a 1 MB payload: Enter to the payload in its editor, painted", results.openLarge);
  line("typing in a 1 MB payload: key event to the next frame", results.typingLarge);

  results.seedMs = await seed(server, agent, GATES);
  const total = (await server.call(reviewer, "GET", "/gates?status=pending&limit=1")).total;
  console.log(`seeded ${GATES} gates over HTTP in ${(results.seedMs / 1000).toFixed(1)} s (${total} pending)`);
  if (total !== GATES) throw new Error(`expected ${GATES} pending, found ${total}`);

  const render = await firstRender(browser, server, reviewer);
  results.firstRender = render;
  line(`panel first render: navigation to the count and the top rows painted (${GATES} pending)`, render.total);
  line("  of which: navigation to the first queue request (page, bundle, sign-in)", render.beforeRequest);
  line("  of which: the first queue request (the server)", render.request);
  line("  of which: its response to the panel painted (the UI's work)", render.afterResponse);
  line("    of which: the panel in the DOM to painted (style, layout, paint)", render.domToPaint);
  line(`whole queue listed: navigation to all ${GATES} rows in the list, painted`, render.full);

  results.keyboard = await keyboardMoves(browser, server, reviewer);
  line("j/k move: key event to selection moved, style and layout done", results.keyboard.work);
  line("j/k move: key event to the next frame", results.keyboard.frame);
  line("j/k move: key event's timestamp to its first listener", results.keyboard.queued);
  line("control: a key bound to nothing, key event to the next frame", results.keyboard.idle);

  results.newGateLarge = await newGateLatency(browser, server, reviewer, agent, "large queue");
  line(`new gate visible after the POST returns (${GATES}+ pending)`, results.newGateLarge);
} finally {
  await browser.close();
  await server.stop();
}
// Other jobs share this machine's two cores: say how busy it was.
results.loadavg = loadavg();
console.log(`load average during the run: ${results.loadavg.map((l) => l.toFixed(2)).join(", ")}`);
if (opts.json) await writeFile(opts.json, JSON.stringify(results, null, 2) + "\n");

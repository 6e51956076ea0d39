// An agent's text full of XSS vectors renders inert: no dialog fires, no
// script element or event-handler attribute reaches the rendered DOM, no
// javascript: link survives, nothing is fetched from a remote host, and the
// sanitiser (not just the content security policy) is what stopped it: the
// page sees no CSP violation at all.

import { expect, signIn, test } from "../support/fixtures";

const VECTORS = [
  `<img src=x onerror="alert('img-onerror')"> **Deploy** the release?`,
  "",
  `<script>alert('script-tag')</script>`,
  `<script src="https://evil.example/x.js"></script>`,
  `<svg onload="alert('svg-onload')"><circle r="5"></circle></svg>`,
  `<svg><animate onbegin="alert('svg-animate')" attributeName="x" dur="1s"></animate></svg>`,
  `<iframe src="javascript:alert('iframe')"></iframe>`,
  `<iframe srcdoc="<script>alert('srcdoc')</script>"></iframe>`,
  `<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x.swf">`,
  `<a href="javascript:alert('a-href')">raw javascript link</a>`,
  `<a href="JaVaScRiPt:alert('mixed-case')">mixed case link</a>`,
  `<a href="data:text/html,<script>alert('data')</script>">data link</a>`,
  `<a href="vbscript:msgbox('vb')">vbscript link</a>`,
  `<div onmouseover="alert('mouseover')" style="background:url(https://evil.example/bg.png)">hover me</div>`,
  `<details open ontoggle="alert('toggle')"><summary>open</summary>x</details>`,
  `<form action="https://evil.example/steal"><button formaction="javascript:alert('form')">go</button></form>`,
  `<input autofocus onfocus="alert('autofocus')">`,
  `<link rel="stylesheet" href="https://evil.example/x.css"><style>body{background:url(https://evil.example/s.png)}</style>`,
  `<meta http-equiv="refresh" content="0;url=javascript:alert('meta')">`,
  `<base href="https://evil.example/">`,
  "",
  `[markdown javascript link](javascript:alert('md-link'))`,
  "",
  `![remote markdown image](https://evil.example/pixel.png)`,
  "",
  `<img src="https://evil.example/remote.png">`,
  "",
  `<p>trailing paragraph stays</p>`,
  // Last: its unclosed <style> swallows whatever follows (the sanitiser then drops it all).
  `<math><mtext><table><mglyph><style><img src=x onerror="alert('mxss')">`,
]
  .filter((line) => line !== "")
  // Blank lines between them, so each HTML block ends and the markdown ones parse as markdown.
  .join("\n\n");

test("an agent's text full of XSS vectors renders inert", async ({ page, gatehouse }) => {
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  const requests: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  // Collected before any page script runs, so the app cannot hide one.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __violations: string[] }).__violations = seen;
    document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });

  const agent = gatehouse.agent(await gatehouse.token("agent", "mallory"));
  const runId = await agent.startRun("Innocent run");
  const gate = await agent.openGate(runId, {
    kind: "approval",
    action: "deploy",
    mode: "sync",
    text: VECTORS,
    context: { task_description: `<img src=x onerror="alert('context')">`, step: `<script>alert('step')</script>` },
    payload: { note: `<img src=x onerror="alert('payload')">`, link: "javascript:alert('payload-link')" },
  });

  await signIn(page, gatehouse, await gatehouse.token("reviewer", "alice"));
  const row = page.getByTestId("blocker-row");
  // The preview shows the agent's first line as text, not as markup.
  await expect(row.getByTestId("gate-preview")).toHaveText(`${Array.from(gate.text.split("\n")[0]!).slice(0, 50).join("")}…`);

  await page.keyboard.press("Enter");
  const modal = page.getByTestId("resolution-modal");
  const text = modal.getByTestId("gate-text");
  await expect(text).toContainText("trailing paragraph stays");
  await expect(text.locator("strong")).toHaveText("Deploy");
  await expect(modal.getByTestId("context-task")).toContainText(`<img src=x onerror="alert('context')">`);
  await expect(modal.getByTestId("context-step")).toHaveText(`<script>alert('step')</script>`);
  await expect(modal.getByTestId("payload-input")).toContainText("alert('payload')");

  // Nothing executable reached the DOM.
  const dom = await page.evaluate(() => {
    const all = [...document.querySelectorAll("*")];
    const origin = window.location.origin;
    return {
      handlers: all.flatMap((el) =>
        [...el.attributes].filter((a) => a.name.toLowerCase().startsWith("on")).map((a) => `${el.tagName} ${a.name}`),
      ),
      scripts: [...document.querySelectorAll("script")].map((s) => s.src || `inline:${s.textContent}`),
      inText: [...document.querySelectorAll('[data-testid="gate-text"] *')].map((el) => el.tagName.toLowerCase()),
      links: [...document.querySelectorAll("[href], [src], [action], [formaction], [data], [srcdoc]")]
        .flatMap((el) =>
          ["href", "src", "action", "formaction", "data", "srcdoc"].map((name) => el.getAttribute(name)).filter((v) => v !== null),
        )
        .filter((v) => !v!.startsWith("/") && !v!.startsWith(origin) && !v!.startsWith("#")),
      styles: [...document.querySelectorAll('[data-testid="gate-text"] [style]')].length,
    };
  });
  expect(dom.handlers).toEqual([]);
  // The app's own bundle is the only script.
  expect(dom.scripts).toHaveLength(1);
  expect(dom.scripts[0]).toMatch(new RegExp(`^${gatehouse.url}/assets/[^/]+\\.js$`));
  for (const tag of ["script", "img", "svg", "iframe", "object", "embed", "form", "input", "link", "style", "meta", "base", "math"]) {
    expect(dom.inText, `<${tag}> in the rendered text`).not.toContain(tag);
  }
  expect(dom.links).toEqual([]);
  expect(dom.styles).toBe(0);

  // Clicking every link the text kept does nothing either.
  const anchors = text.locator("a");
  expect(await anchors.count()).toBeGreaterThan(0);
  for (const anchor of await anchors.all()) await anchor.click();
  await text.getByText("hover me").hover();
  await page.waitForTimeout(300);
  expect(page.url().startsWith(gatehouse.url)).toBe(true);
  await expect(modal).toBeVisible();

  expect(dialogs).toEqual([]);
  expect(requests.filter((url) => !url.startsWith(`${gatehouse.url}/`))).toEqual([]);
  expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
});

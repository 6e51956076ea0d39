// No request the page makes carries a token in its URL, where proxies,
// access logs and history keep it: API calls and the event stream send it
// in the Authorization header. (The sign-in address's `#token=` fragment
// is not part of any request: browsers never send a fragment.)

import { expect, signIn, test } from "../support/fixtures";

test("no request the page makes carries a token in its URL", async ({ page, gatehouse }) => {
  const requests: { url: string; authorization: Promise<string | null> }[] = [];
  page.on("request", (request) => {
    requests.push({ url: request.url().split("#")[0]!, authorization: request.headerValue("authorization") });
  });
  const agent = gatehouse.agent(await gatehouse.token("agent", "builder-bot"));
  const runId = await agent.startRun("Release 1.4");
  const reviewer = await gatehouse.token("reviewer", "alice");

  await signIn(page, gatehouse, reviewer);
  // A gate opened now reaches the page through the event stream.
  await agent.openGate(runId, { kind: "question", mode: "async", text: "Which region first?" });
  await expect(page.getByTestId("blocker-count")).toHaveText("1");

  const stream = requests.filter((r) => new URL(r.url).pathname === "/api/hitl/events");
  expect(stream.length, "the page follows the event stream").toBeGreaterThan(0);
  for (const r of stream) expect(await r.authorization).toBe(`Bearer ${reviewer}`);
  for (const { url } of requests) {
    expect(url, "a token in a request's URL").not.toMatch(/access_token|token=/i);
    expect(url.includes(reviewer), `the reviewer's token in ${url}`).toBe(false);
  }
});

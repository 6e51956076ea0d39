// The tests' fixtures: a fresh `gatehouse serve` per test (so counts and
// queues are exactly what the test made), and a helper that signs a page
// in as a reviewer the way a person would, through `/#token=...`.

import { expect, test as base, type Page } from "@playwright/test";
import { Gatehouse } from "./gatehouse.mjs";

export { expect };

export const test = base.extend<{ gatehouse: Gatehouse }>({
  gatehouse: async ({}, use, testInfo) => {
    const server = await Gatehouse.start();
    try {
      await use(server);
    } finally {
      if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach("server.log", { body: server.log });
      await server.stop();
    }
  },
});

/** Signs `page` in with `token` and waits for the desk to follow the event stream. */
export async function signIn(page: Page, server: Gatehouse, token: string): Promise<void> {
  await page.goto(server.signInUrl(token));
  await expect(page.getByTestId("connection")).toHaveText("Live");
  // The token leaves the address bar at once.
  expect(page.url()).not.toContain("token=");
}

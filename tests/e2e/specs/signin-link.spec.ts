// The first minute: `gatehouse serve` prints a one-time sign-in link; a
// newcomer opens it and is signed in, the code gone from the address bar
// (and no token in any address). The same link opened again is refused
// with words saying how to get a new one.

import { expect, test } from "../support/fixtures";

test("the printed sign-in link signs a newcomer in once, leaving no code or token in the address", async ({
  page,
  browser,
  gatehouse,
}) => {
  const link = await gatehouse.signInLink();
  expect(link).toMatch(new RegExp(`^${gatehouse.url}/#signin=[0-9a-f]{64}$`));
  const requested: string[] = [];
  page.on("request", (r) => requested.push(r.url()));

  await page.goto(link);
  await expect(page.getByTestId("connection")).toHaveText("Live");
  expect(page.url()).not.toContain("signin=");
  expect(page.url()).not.toContain("token=");
  expect(requested.filter((u) => u.includes("signin=") || u.includes("token="))).toEqual([]);
  // Still signed in after a reload: the page kept the token it was given.
  await page.reload();
  await expect(page.getByTestId("connection")).toHaveText("Live");

  const other = await browser.newPage();
  await other.goto(link);
  await expect(other.getByTestId("sign-in-error")).toContainText("already used or has expired");
  await expect(other.getByTestId("sign-in-error")).toContainText("Ask for a new sign-in link");
  expect(other.url()).not.toContain("signin=");
  await other.close();
});

/**
 * A revocation reaches pages already open: the sidecar's revocation sweep closes their sockets,
 * and the page asks the web app again instead of waiting for a connection that will not come
 * back. A member removed while watching a session gets the not-found page; a tab whose account
 * signed out in another tab goes to sign-in. A session deleted under a member's eyes is not a
 * revocation: the page says so and stays.
 */
import { createWorkspace, expect, signedInPage, startSession, test, uniqueEmail } from "./fixtures";

test("a member removed while watching a session leaves it; a sign-out in another tab reaches this one", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("ola"), `Ola ${stamp}`);
  const guest = await signedInPage(browser, uniqueEmail("gil"), `Gil ${stamp}`);
  const ws = await createWorkspace(owner, `Revoked ${stamp}`, { page: guest, role: "viewer" });
  await owner.goto(`/w/${ws.slug}`);
  await startSession(owner);
  const sessionUrl = owner.url();

  // the guest watches the session, connected
  await guest.goto(sessionUrl);
  await expect(guest.getByTestId("session-view")).toBeVisible();
  await expect(guest.getByTestId("prompt-input")).toBeVisible();
  await expect(guest.getByTestId("connection-notice")).toHaveCount(0);

  // the owner removes the guest (the members panel, confirmed)
  const ownerTab = await owner.context().newPage();
  await ownerTab.goto(`/w/${ws.slug}`);
  const row = ownerTab.getByTestId("member-row").filter({ hasText: `Gil ${stamp}` });
  await row.getByTestId("member-remove").click();
  await row.getByTestId("member-remove-confirm").click();
  await expect(row).toHaveCount(0);

  // the guest's page asks the web app again: not a member, so not found (before: "Connecting…" forever)
  await expect(guest.getByTestId("not-found")).toBeVisible({ timeout: 20_000 });
  await expect(guest.getByTestId("session-view")).toHaveCount(0);

  // the owner signs out in the other tab: the session tab goes to sign-in
  await expect(owner.getByTestId("session-view")).toBeVisible();
  await ownerTab.getByTestId("signout").click();
  await expect(ownerTab).toHaveURL(/\/signin/);
  await expect(owner).toHaveURL(/\/signin/, { timeout: 20_000 });
});

test("a session deleted while a member watches it: the page says so and stays (no reload into not-found)", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("oda"), `Oda ${stamp}`);
  const member = await signedInPage(browser, uniqueEmail("mel"), `Mel ${stamp}`);
  const ws = await createWorkspace(owner, `Deleted ${stamp}`, { page: member, role: "editor" });
  await owner.goto(`/w/${ws.slug}`);
  await startSession(owner);
  await member.goto(owner.url());
  await expect(member.getByTestId("prompt-input")).toBeVisible();
  await expect(member.getByTestId("connection-notice")).toHaveCount(0);
  // a mark on the document: a reload would lose it
  await member.evaluate(() => ((window as unknown as { __stayed?: boolean }).__stayed = true));

  await owner.getByTestId("session-delete").click();
  const dialog = owner.getByTestId("session-delete-dialog");
  await dialog.getByTestId("session-delete-input").fill("delete");
  await dialog.getByTestId("session-delete-confirm").click();
  await expect(owner).toHaveURL(new RegExp(`/w/${ws.slug}$`));

  await expect(member.getByTestId("session-deleted")).toBeVisible({ timeout: 15_000 });
  // the revocation sweep runs about every second: three of its passes later, the page is the same document
  await member.waitForTimeout(3_500);
  await expect(member.getByTestId("session-deleted")).toBeVisible();
  expect(await member.evaluate(() => (window as unknown as { __stayed?: boolean }).__stayed)).toBe(true);
});

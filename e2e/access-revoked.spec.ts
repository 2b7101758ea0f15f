/**
 * A revocation reaches pages already open: the sidecar's revocation sweep closes their sockets,
 * and the page asks the web app again instead of waiting for a connection that will not come
 * back. A member removed while watching a session gets the not-found page; a tab whose account
 * signed out in another tab goes to sign-in.
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

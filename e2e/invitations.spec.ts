/**
 * Invitations end to end: an owner invites, the link opened in another browser creates the
 * account with the invited role; used, expired, revoked and unknown links get a clear page; and
 * the sign-up policies `invite` (the default) and `closed` on Conduits of their own.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, createWorkspace, password, sameOrigin, signedInPage, signInViaUi, signUpViaApi, uniqueEmail, type Browser, type Page } from "./fixtures";
import { startConduitInstance, type ConduitInstance } from "./support/conduit-instance";

const newPassword = "Invited-pass-77";

/** Creates an invitation in the panel on the current page and returns the link shown once. */
async function inviteInPanel(page: Page, email: string, role: string, workspace?: string): Promise<string> {
  await page.getByTestId("invite-email").fill(email);
  await page.getByTestId("invite-role").selectOption(role);
  if (workspace) await page.getByTestId("invite-workspace").selectOption({ label: workspace });
  await page.getByTestId("invite-create").click();
  const link = page.getByTestId("invite-link");
  await expect(link).toContainText("/invite/");
  const row = page.locator(`[data-testid="invite-row"][data-email="${email}"]`);
  await expect(row).toHaveAttribute("data-status", "pending");
  return (await link.textContent())!.trim();
}

/** Opens the link in a fresh browser, sets a password, and returns the signed-in page. */
async function acceptInNewBrowser(browser: Browser, link: string, email: string, name: string): Promise<Page> {
  // the link's own origin: a Conduit of its own in the policy tests
  const page = await (await browser.newContext({ baseURL: new URL(link).origin })).newPage();
  await page.goto(link);
  await expect(page.getByTestId("invite-accept-email")).toHaveValue(email);
  await page.getByTestId("invite-accept-name").fill(name);
  await page.getByTestId("invite-accept-password").fill(newPassword);
  await page.getByTestId("invite-accept-submit").click();
  return page;
}

async function expectUnusable(browser: Browser, link: string, message: RegExp): Promise<void> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(link);
  await expect(page.getByTestId("invite-unusable-message")).toHaveText(message);
  await expect(page.getByTestId("invite-accept-submit")).toHaveCount(0);
  await context.close();
}

test("an owner invites a viewer; the link creates the account, lands in the workspace read-only, and works once", async ({ browser }) => {
  const owner = await signedInPage(browser, uniqueEmail("inv-owner"), "Olive");
  const ws = await createWorkspace(owner, `Invited ${Date.now().toString(36)}`);
  await owner.goto(`/w/${ws.slug}`);
  const email = uniqueEmail("inv-viewer");
  const link = await inviteInPanel(owner, email, "viewer");
  expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);

  const invited = await acceptInNewBrowser(browser, link, email, "Vic");
  await expect(invited).toHaveURL(new RegExp(`/w/${ws.slug}$`));
  await expect(invited.getByTestId("workspace-role")).toHaveText("viewer");
  await expect(invited.getByTestId("members-readonly")).toBeVisible();
  await expect(invited.getByTestId("invitations-panel")).toHaveCount(0);
  await expect(invited.getByTestId("current-user")).toHaveText("Vic");

  await owner.reload();
  const row = owner.locator(`[data-testid="invite-row"][data-email="${email}"]`);
  await expect(row).toHaveAttribute("data-status", "used");
  await expect(row.getByTestId("invite-revoke")).toHaveCount(0);
  await expect(owner.locator(`[data-testid="member-row"][data-email="${email}"]`)).toHaveAttribute("data-role", "viewer");

  // the same link again, signed out: already used
  await expectUnusable(browser, link, /already been used/);
  // and the new account signs in with its password
  const again = await (await browser.newContext()).newPage();
  await signInViaUi(again, email, newPassword);
});

test("revoked, expired and unknown links get a clear page", async ({ browser }) => {
  const owner = await signedInPage(browser, uniqueEmail("inv-owner2"), "Oscar");
  const ws = await createWorkspace(owner, `Refusals ${Date.now().toString(36)}`);
  await owner.goto(`/w/${ws.slug}`);

  const revokedEmail = uniqueEmail("inv-revoked");
  const revokedLink = await inviteInPanel(owner, revokedEmail, "editor");
  const revokedRow = owner.locator(`[data-testid="invite-row"][data-email="${revokedEmail}"]`);
  await revokedRow.getByTestId("invite-revoke").click();
  await expect(revokedRow).toHaveAttribute("data-status", "revoked");
  await expectUnusable(browser, revokedLink, /revoked/);

  const expiredEmail = uniqueEmail("inv-expired");
  const created = await owner.request.post("/api/invitations", { headers: sameOrigin, data: { email: expiredEmail, workspaceSlug: ws.slug, role: "editor", expiresInDays: 1 } });
  expect(created.status(), await created.text()).toBe(201);
  const { link: expiredLink } = ((await created.json()) as { data: { link: string } }).data;
  // no UI makes a link old: move its expiry into the past in the e2e server's database
  const db = new Database(path.join("test-results", "e2e-data", "conduit.db"));
  try {
    const past = new Date(Date.now() - 60_000).toISOString().replace("Z", "+00:00");
    const changed = db.prepare("UPDATE Invitation SET expiresAt = ? WHERE email = ?").run(past, expiredEmail);
    expect(changed.changes).toBe(1);
  } finally {
    db.close();
  }
  await expectUnusable(browser, expiredLink, /expired/);
  await owner.reload();
  await expect(owner.locator(`[data-testid="invite-row"][data-email="${expiredEmail}"]`)).toHaveAttribute("data-status", "expired");

  await expectUnusable(browser, new URL("/invite/not-a-real-token", owner.url()).toString(), /not valid/);
  await expectUnusable(browser, new URL(`/invite/${"x".repeat(43)}`, owner.url()).toString(), /not valid/);

  // accepting through the API is refused the same way
  const token = expiredLink.split("/invite/")[1]!;
  const refused = await owner.request.post("/api/invitations/accept", { headers: sameOrigin, data: { token, password: newPassword } });
  expect(refused.status()).toBe(410);
});

test("adding a member by an email with no account offers an invitation with that role", async ({ browser }) => {
  const owner = await signedInPage(browser, uniqueEmail("inv-owner3"), "Opal");
  const ws = await createWorkspace(owner, `Offer ${Date.now().toString(36)}`);
  await owner.goto(`/w/${ws.slug}`);
  const email = uniqueEmail("nobody-yet");
  await owner.getByTestId("member-add-email").fill(email);
  await owner.getByTestId("member-add-role").selectOption("editor");
  await owner.getByTestId("member-add-submit").click();
  await expect(owner.getByTestId("member-invite-offer")).toContainText(`No account with ${email}`);
  await owner.getByTestId("member-invite").click();
  const link = owner.getByTestId("member-invite-link");
  await expect(link).toContainText("/invite/");
  await expect(owner.locator(`[data-testid="invite-row"][data-email="${email}"]`)).toHaveAttribute("data-status", "pending");

  const invited = await acceptInNewBrowser(browser, (await link.textContent())!.trim(), email, "Eddie");
  await expect(invited.getByTestId("workspace-role")).toHaveText("editor");
});

test("an invitation for an existing account asks to sign in, then joins the workspace", async ({ browser }) => {
  const owner = await signedInPage(browser, uniqueEmail("inv-owner4"), "Otto");
  const ws = await createWorkspace(owner, `Existing ${Date.now().toString(36)}`);
  const email = uniqueEmail("inv-existing");
  const context = await browser.newContext();
  await signUpViaApi(context.request, email, "Emma");
  const created = await owner.request.post("/api/invitations", { headers: sameOrigin, data: { email, workspaceSlug: ws.slug, role: "editor" } });
  expect(created.status(), await created.text()).toBe(201);
  const { link } = ((await created.json()) as { data: { link: string } }).data;

  const page = await context.newPage();
  await page.goto(link);
  await page.getByTestId("invite-sign-in").click();
  await page.getByTestId("signin-email").fill(email);
  await page.getByTestId("signin-password").fill(password);
  await page.getByTestId("signin-submit").click();
  await expect(page).toHaveURL(/\/invite\//);
  await page.getByTestId("invite-accept-submit").click();
  await expect(page).toHaveURL(new RegExp(`/w/${ws.slug}$`));
  await expect(page.getByTestId("workspace-role")).toHaveText("editor");
  // still one account: the same person, now a member
  await owner.goto(`/w/${ws.slug}`);
  await expect(owner.locator(`[data-testid="member-row"][data-email="${email}"]`)).toHaveAttribute("data-role", "editor");
});

test.describe("sign-up policies on their own Conduits", () => {
  test.describe.configure({ mode: "serial" });
  let instance: ConduitInstance | undefined;

  test.afterEach(async () => {
    await instance?.stop();
    instance = undefined;
  });

  async function signUpFirst(browser: Browser, base: string, email: string): Promise<Page> {
    const page = await (await browser.newContext({ baseURL: base })).newPage();
    await page.goto("/signup");
    await expect(page.getByTestId("signup-first-admin")).toContainText("this account will administer Conduit");
    await page.getByTestId("signup-name").fill("Ada");
    await page.getByTestId("signup-email").fill(email);
    await page.getByTestId("signup-password").fill(password);
    await page.getByTestId("signup-submit").click();
    await expect(page).toHaveURL(/\/workspaces$/);
    await expect(page.getByTestId("current-user")).toContainText("admin");
    return page;
  }

  async function expectSignupRefused(browser: Browser, base: string, message: RegExp): Promise<void> {
    const context = await browser.newContext({ baseURL: base });
    const page = await context.newPage();
    await page.goto("/signup");
    await expect(page.getByTestId("signup-policy-message")).toHaveText(message);
    await expect(page.getByTestId("signup-submit")).toHaveCount(0);
    const res = await context.request.post("/api/signup", { headers: { origin: base }, data: { email: uniqueEmail("second"), password } });
    expect(res.status()).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    await context.close();
  }

  test("invite (the default): the first account is admin, the second needs an invitation", async ({ browser }) => {
    test.setTimeout(360_000);
    // CONDUIT_SIGNUP unset: the default must be invite-only
    instance = await startConduitInstance({ name: "policy-invite", env: { CONDUIT_SIGNUP: "" } });
    const base = instance.url;
    const admin = await signUpFirst(browser, base, uniqueEmail("first-admin"));
    await expectSignupRefused(browser, base, /invite-only/);

    const ws = await admin.request.post("/api/workspaces", { headers: { origin: base }, data: { name: "Team" } });
    expect(ws.status(), await ws.text()).toBe(201);
    await admin.goto("/admin/invitations");
    const email = uniqueEmail("invited-editor");
    const link = await inviteInPanel(admin, email, "editor", "Team");
    expect(link.startsWith(`${base}/invite/`)).toBe(true);
    const invited = await acceptInNewBrowser(browser, link, email, "Ines");
    await expect(invited).toHaveURL(/\/w\/team$/);
    await expect(invited.getByTestId("workspace-role")).toHaveText("editor");
    // admins only: everyone else gets 404
    const notAdmin = await invited.goto(`${base}/admin/invitations`);
    expect(notAdmin?.status()).toBe(404);
  });

  test("closed: nobody signs up alone; an admin's invitation still works, an owner's cannot be made", async ({ browser }) => {
    test.setTimeout(360_000);
    instance = await startConduitInstance({ name: "policy-closed", env: { CONDUIT_SIGNUP: "closed" } });
    const base = instance.url;
    const admin = await signUpFirst(browser, base, uniqueEmail("closed-admin"));
    await expectSignupRefused(browser, base, /closed/);

    await admin.goto("/admin/invitations");
    await expect(admin.getByTestId("admin-signup-policy")).toContainText("closed");
    const email = uniqueEmail("closed-invitee");
    const link = await inviteInPanel(admin, email, "none");
    const invited = await acceptInNewBrowser(browser, link, email, "Carl");
    await expect(invited).toHaveURL(/\/workspaces$/);

    // the invited person owns a workspace now, but under closed cannot bring anyone in
    const own = await invited.request.post("/api/workspaces", { headers: { origin: base }, data: { name: "Carl's" } });
    expect(own.status(), await own.text()).toBe(201);
    const { slug } = ((await own.json()) as { data: { slug: string } }).data;
    const refused = await invited.request.post("/api/invitations", { headers: { origin: base }, data: { email: uniqueEmail("friend"), workspaceSlug: slug, role: "viewer" } });
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/only an admin/);
  });
});

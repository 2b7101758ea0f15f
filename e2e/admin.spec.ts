import { expect, test, createWorkspace, sendPrompt, signedInPage, signInViaUi, signUpViaApi, uniqueEmail, type Browser, type Page } from "./fixtures";
import { e2eAdmin } from "./global-setup";

/** A new browser context signed in as the instance's administrator (created by the global setup). */
async function adminPage(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signInViaUi(page, e2eAdmin.email, e2eAdmin.password);
  await expect(page.getByTestId("admin-link")).toBeVisible();
  return page;
}

/** The admin's user list filtered to one email; returns that row. */
async function findUserRow(admin: Page, email: string) {
  await admin.goto(`/admin?q=${encodeURIComponent(email)}`);
  const row = admin.locator(`[data-testid="admin-user-row"][data-email="${email}"]`);
  await expect(row).toBeVisible();
  return row;
}

/** Starts a session in default mode on the workspace page; returns its id. */
async function startSession(page: Page, slug: string): Promise<string> {
  await page.goto(`/w/${slug}`);
  await page.getByTestId("session-new").click();
  await page.getByTestId("session-new-mode").selectOption("default");
  await page.getByTestId("session-new-submit").click();
  await expect(page).toHaveURL(new RegExp(`/w/${slug}/s/[^/]+$`));
  await expect(page.getByTestId("session-view")).toBeVisible();
  return page.url().split("/").pop()!;
}

test("the admin area is a 404 for everyone but administrators, pages and API alike", async ({
  browser,
  page,
}) => {
  // Signed out, the pages are a 404 too (not a sign-in prompt that would tell the area exists);
  // the API asks for a session (401) as every route does.
  for (const path of ["/admin", "/admin/users", "/admin/audit"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page).not.toHaveURL(/\/signin/);
  }
  expect((await page.request.get("/api/admin/users")).status()).toBe(401);

  const member = await signedInPage(browser, uniqueEmail("member"), "Plain Member");
  try {
    await expect(member.getByTestId("admin-link")).toHaveCount(0);
    for (const path of ["/admin", "/admin/users", "/admin/audit", "/admin/instance"]) {
      const res = await member.goto(path);
      expect(res?.status(), path).toBe(404);
      await expect(member.getByTestId("admin-area")).toHaveCount(0);
    }
    for (const path of ["/api/admin/users", "/api/admin/audit", "/api/admin/instance"]) {
      expect((await member.request.get(path)).status(), path).toBe(404);
    }
    const self = await member.request.patch("/api/admin/users/anyone", {
      data: { isAdmin: true },
      headers: { origin: new URL(member.url()).origin },
    });
    expect(self.status()).toBe(404);
  } finally {
    await member.context().close();
  }
});

test("the admin searches users, sets a budget, makes and unmakes an admin, and is refused removing the last one", async ({
  browser,
}, testInfo) => {
  const admin = await adminPage(browser);
  const stamp = Date.now().toString(36);
  const bobEmail = uniqueEmail("bob");
  await signUpViaApi(admin.context().request, bobEmail, `Bob ${stamp}`);
  try {
    // The list, then a search by name narrows it to Bob.
    await admin.getByTestId("admin-link").click();
    await expect(admin).toHaveURL(/\/admin$/);
    await expect(admin.getByTestId("admin-user-row").first()).toBeVisible();
    await admin.getByTestId("admin-user-search").fill(`bob ${stamp}`);
    await admin.getByTestId("admin-user-search-submit").click();
    await expect(admin.getByTestId("admin-user-row")).toHaveCount(1);
    const bob = admin.locator(`[data-testid="admin-user-row"][data-email="${bobEmail}"]`);
    await expect(bob).toHaveAttribute("data-admin", "false");
    await expect(bob).toContainText("never");
    await expect(bob.getByTestId("admin-user-spend")).toContainText("$0.00");

    // A monthly budget: saved, shown after a reload, audited.
    await bob.getByTestId("admin-user-budget").fill("12.5");
    await bob.getByTestId("admin-user-budget-save").click();
    await expect(bob.getByTestId("admin-user-saved")).toBeVisible();
    await admin.reload();
    await expect(bob.getByTestId("admin-user-budget-shown")).toHaveText("of $12.50");
    await expect(bob.getByTestId("admin-user-budget")).toHaveValue("12.5");

    // The only admin cannot unmake or disable themself.
    const me = await findUserRow(admin, e2eAdmin.email);
    await expect(me).toHaveAttribute("data-admin", "true");
    await me.getByTestId("admin-user-admin-toggle").click();
    await expect(me.getByTestId("admin-user-error")).toContainText("last administrator");
    await expect(me).toHaveAttribute("data-admin", "true");
    await me.getByTestId("admin-user-disable").click();
    await me.getByTestId("admin-user-disable-confirm").click();
    await expect(me.getByTestId("admin-user-error")).toContainText("your own account");

    // Bob becomes an admin (his header grows the Admin link), then stops being one.
    const bobRow = await findUserRow(admin, bobEmail);
    await bobRow.getByTestId("admin-user-admin-toggle").click();
    await expect(bobRow).toHaveAttribute("data-admin", "true");
    await expect(bobRow.getByTestId("admin-user-admin-toggle")).toHaveText("Unmake admin");
    await bobRow.getByTestId("admin-user-admin-toggle").click();
    await expect(bobRow).toHaveAttribute("data-admin", "false");

    // Each change is in the audit log, linked to the account.
    await admin.getByRole("link", { name: "Audit log" }).click();
    await expect(admin).toHaveURL(/\/admin\/audit$/);
    for (const action of ["user.budget.set", "user.admin.grant", "user.admin.revoke"]) {
      const row = admin
        .locator(`[data-testid="audit-row"][data-action="${action}"]`)
        .filter({ hasText: bobEmail })
        .first();
      await expect(row, action).toBeVisible();
      await expect(row).toContainText(e2eAdmin.email);
      await expect(row.getByTestId("audit-object-link")).toHaveAttribute(
        "href",
        `/admin/users?q=${encodeURIComponent(bobEmail)}`,
      );
    }

    // An account's link opens the user list at that account.
    await admin
      .locator('[data-testid="audit-row"][data-action="user.admin.grant"]')
      .filter({ hasText: bobEmail })
      .first()
      .getByTestId("audit-object-link")
      .click();
    await expect(admin).toHaveURL(/\/admin\/users\?q=/);
    await expect(admin.getByTestId("admin-user-row")).toHaveCount(1);
    await expect(admin.getByTestId("admin-user-row")).toHaveAttribute("data-email", bobEmail);

    // The instance page.
    await admin.getByRole("link", { name: "Instance" }).click();
    await expect(admin.getByTestId("instance-signup")).toContainText("open");
    await expect(admin.getByTestId("instance-cli")).toContainText(/version \d+\.\d+\.\d+/);
    await expect(admin.getByTestId("instance-demo")).toContainText("demo model");
    await expect(admin.getByTestId("instance-database")).toContainText("SQLite");
    // the e2e instance runs with bubblewrap (CI installs it): the page says what is in force, not only the setting
    await expect(admin.getByTestId("instance-sandbox")).toContainText("in force: every CLI child runs in bubblewrap");
    await expect(admin.getByTestId("instance-memory")).toContainText("MB");
    for (const [name, path] of [
      ["admin-users", "/admin"],
      ["admin-audit", "/admin/audit"],
      ["admin-instance", "/admin/instance"],
    ] as const) {
      await admin.goto(path);
      const shot = testInfo.outputPath(`${name}.png`);
      await admin.screenshot({ path: shot, fullPage: true });
      await testInfo.attach(name, { path: shot, contentType: "image/png" });
    }
  } finally {
    await admin.context().close();
  }
});

test("disabling a user closes the socket of their open session page, which goes to sign-in by itself", async ({
  browser,
}) => {
  const carolEmail = uniqueEmail("carol");
  const carol = await signedInPage(browser, carolEmail, "Carol");
  const admin = await adminPage(browser);
  try {
    const ws = await createWorkspace(carol, `Carol ${Date.now().toString(36)}`);
    await startSession(carol, ws.slug);
    // Connected: the notice is gone once the socket is up.
    await expect(carol.getByTestId("connection-notice")).toHaveCount(0);

    const row = await findUserRow(admin, carolEmail);
    await row.getByTestId("admin-user-disable").click();
    await row.getByTestId("admin-user-disable-confirm").click();
    await expect(row).toHaveAttribute("data-disabled", "true");
    await expect(row.getByTestId("admin-user-disabled")).toBeVisible();

    // The sidecar's sweep closes her socket (about 2 s); the page asks the web app again and
    // lands on sign-in (before: it stayed, "not connected", until she reloaded it).
    await expect(carol).toHaveURL(/\/signin/, { timeout: 15_000 });

    // Enabled again, she signs in as before.
    await row.getByTestId("admin-user-disable").click();
    await expect(row).toHaveAttribute("data-disabled", "false");
    await signInViaUi(carol, carolEmail);

    await admin.goto(`/admin/audit?action=user.*`);
    await expect(
      admin.locator('[data-testid="audit-row"][data-action="user.disable"]').filter({ hasText: carolEmail }),
    ).toHaveCount(1);
    await expect(
      admin.locator('[data-testid="audit-row"][data-action="user.enable"]').filter({ hasText: carolEmail }),
    ).toHaveCount(1);
  } finally {
    await carol.context().close();
    await admin.context().close();
  }
});

test("the audit log shows a member change and an approval decision, each linking to its object, and filters them", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const danEmail = uniqueEmail("dan");
  const dan = await signedInPage(browser, danEmail, "Dan");
  const eve = await signedInPage(browser, uniqueEmail("eve"), "Eve");
  const admin = await adminPage(browser);
  try {
    const ws = await createWorkspace(dan, `Audited ${Date.now().toString(36)}`, { page: eve, role: "editor" });
    const sessionId = await startSession(dan, ws.slug);
    await sendPrompt(dan, "write");
    const card = dan.locator('[data-testid="approval-card"][data-status="pending"][data-tool="Write"]').first();
    await expect(card).toBeVisible({ timeout: 45_000 });
    const approvalId = await card.getAttribute("data-approval-id");
    await card.getByTestId("approve-button").click();
    // The session view shows pending cards only: the card goes, and the turn ends with the file written.
    await expect(dan.locator(`[data-testid="approval-card"][data-approval-id="${approvalId}"]`)).toHaveCount(0);
    await expect(dan.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });

    // Everything in Dan's workspace, newest first: the approval, then the member added.
    await admin.goto(`/admin/audit?workspace=${ws.slug}`);
    const approval = admin.locator(
      `[data-testid="audit-row"][data-action="approval.allow"][data-object-id="${approvalId}"]`,
    );
    await expect(approval).toBeVisible();
    await expect(approval).toContainText(danEmail);
    await expect(approval.getByTestId("audit-object-link")).toHaveAttribute("href", `/w/${ws.slug}/s/${sessionId}`);
    await expect(approval.getByTestId("audit-object-link")).toContainText("Write");
    const approvalHref = await approval.getByTestId("audit-object-link").getAttribute("href");
    const member = admin.locator('[data-testid="audit-row"][data-action="member.add"]');
    await expect(member).toHaveCount(1);
    await expect(member).toContainText(danEmail);
    await expect(member.getByTestId("audit-object-link")).toHaveAttribute("href", `/w/${ws.slug}`);
    await expect(member.getByTestId("audit-object-link")).toContainText("member eve-");
    const actions = await admin
      .getByTestId("audit-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")));
    expect(actions.indexOf("approval.allow")).toBeLessThan(actions.indexOf("member.add"));

    // Filters: by action family, by person, by date.
    await admin.getByTestId("audit-filter-action").selectOption("member.*");
    await admin.getByTestId("audit-filter-submit").click();
    await expect(admin).toHaveURL(/action=member\.\*/);
    await expect(admin.getByTestId("audit-row")).toHaveCount(1);
    await expect(admin.getByTestId("audit-row")).toHaveAttribute("data-action", "member.add");

    await admin.goto(`/admin/audit?user=${encodeURIComponent(danEmail)}&action=approval.*`);
    await expect(admin.getByTestId("audit-row")).toHaveCount(1);
    await admin.goto(`/admin/audit?workspace=${ws.slug}&to=2000-01-01`);
    await expect(admin.getByTestId("audit-empty")).toBeVisible();

    // Following the approval's link as its workspace's owner opens the session.
    await dan.goto(approvalHref!);
    await expect(dan.getByTestId("session-view")).toBeVisible();
  } finally {
    await dan.context().close();
    await eve.context().close();
    await admin.context().close();
  }
});

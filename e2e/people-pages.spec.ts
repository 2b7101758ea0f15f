import { e2eAdmin } from "./global-setup";
import {
  expect,
  test,
  createWorkspace,
  password,
  sameOrigin,
  sendPrompt,
  signedInPage,
  startSession,
  uniqueEmail,
  type Browser,
  type Page,
  type TestInfo,
} from "./fixtures";

// The pages people move between: a deep link kept through sign-in, a role change reaching an
// open page, and every page on a 390 px phone without sideways scrolling (issue 38, defects 5, 6, 8).

const phone = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  userAgent:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
} as const;

async function signInWithForm(page: Page, email: string, pass = password): Promise<void> {
  await page.getByTestId("signin-email").fill(email);
  await page.getByTestId("signin-password").fill(pass);
  await page.getByTestId("signin-submit").click();
}

/** The page's width against the screen's, and the innermost elements that stick out (named for the failure). */
function measureOverflow(page: Page) {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const wide = [...document.querySelectorAll<HTMLElement>("body *")]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && getComputedStyle(el).position !== "fixed")
      .filter((el) => ![...el.querySelectorAll("*")].some((c) => c.getBoundingClientRect().right > width + 1))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.dataset.testid ? `[${el.dataset.testid}]` : ""}.${String(el.className).slice(0, 60)} right=${Math.round(el.getBoundingClientRect().right)} "${(el.textContent ?? "").slice(0, 40)}"`,
      );
    return { scrollWidth: document.documentElement.scrollWidth, width, wide };
  });
}

async function expectFits(page: Page, where: string, testInfo: TestInfo): Promise<void> {
  await page.waitForLoadState("networkidle").catch(() => undefined);
  await page.waitForTimeout(250);
  await page.screenshot({ path: testInfo.outputPath(`${where.replace(/\W+/g, "-")}.png`), fullPage: true });
  const report = await measureOverflow(page);
  expect(report.scrollWidth, `${where}: ${report.scrollWidth} px wide on a ${report.width} px screen: ${report.wide.join(" | ")}`).toBeLessThanOrEqual(
    report.width,
  );
}

async function userIdOf(owner: Page, slug: string, email: string): Promise<string> {
  const res = await owner.request.get(`/api/workspaces/${slug}/members`);
  const { data } = (await res.json()) as { data: { userId: string; email: string }[] };
  const found = data.find((m) => m.email === email);
  expect(found, `member ${email}`).toBeTruthy();
  return found!.userId;
}

test("a deep link survives sign-in, sign-up keeps it too, and only same-site paths are followed", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const email = uniqueEmail("dora");
  const dora = await signedInPage(browser, email, `Dora ${stamp}`);
  const ws = await createWorkspace(dora, `Deep links ${stamp}`);
  await dora.goto(`/w/${ws.slug}`);
  await startSession(dora);
  const sessionPath = new URL(dora.url()).pathname;
  expect(sessionPath).toMatch(/^\/w\/[^/]+\/s\/[^/]+$/);

  // Signed out, the session's link goes to sign-in, which remembers it and lands there.
  const outside = await browser.newContext();
  const page = await outside.newPage();
  await page.goto(sessionPath);
  await expect(page).toHaveURL(/\/signin\?/);
  expect(new URL(page.url()).searchParams.get("callbackUrl")).toBe(sessionPath);
  await signInWithForm(page, email);
  await expect(page).toHaveURL(new RegExp(`${sessionPath}$`));
  await expect(page.getByTestId("session-view")).toBeVisible();

  // A query string comes along (the history page's filters).
  await outside.clearCookies();
  await page.goto(`/history?workspace=${ws.slug}`);
  await expect(page).toHaveURL(/\/signin\?/);
  await signInWithForm(page, email);
  await expect(page).toHaveURL(new RegExp(`/history\\?workspace=${ws.slug}$`));

  // Another site is never a destination: each lands on the workspaces.
  for (const evil of ["//evil.com", "https://evil.com", "/\\evil.com", "/%5Cevil.com", "javascript:alert(1)"]) {
    await outside.clearCookies();
    await page.goto(`/signin?callbackUrl=${encodeURIComponent(evil)}`);
    await signInWithForm(page, email);
    await expect(page, evil).toHaveURL(/127\.0\.0\.1:\d+\/workspaces$/);
  }

  // Someone new follows a link, signs up from the sign-in page, and lands where the link pointed.
  const newcomer = await browser.newContext();
  const fresh = await newcomer.newPage();
  await fresh.goto("/account");
  await expect(fresh).toHaveURL(/\/signin\?callbackUrl=%2Faccount$/);
  await fresh.getByRole("link", { name: "Sign up" }).click();
  await expect(fresh).toHaveURL(/\/signup\?callbackUrl=%2Faccount$/);
  await fresh.getByTestId("signup-email").fill(uniqueEmail("nina"));
  await fresh.getByTestId("signup-password").fill(password);
  await fresh.getByTestId("signup-submit").click();
  await expect(fresh).toHaveURL(/\/account$/);

  // A disabled account is told why it was signed out.
  const admin = await browser.newContext();
  const adminPage = await admin.newPage();
  await adminPage.goto("/signin");
  await signInWithForm(adminPage, e2eAdmin.email, e2eAdmin.password);
  await expect(adminPage).toHaveURL(/\/workspaces$/);
  const users = (await (await adminPage.request.get(`/api/admin/users?q=${encodeURIComponent(email)}`)).json()) as {
    data: { users: { id: string; email: string }[] };
  };
  const doraId = users.data.users.find((u) => u.email === email)!.id;
  const disabled = await adminPage.request.patch(`/api/admin/users/${doraId}`, { headers: sameOrigin, data: { disabled: true } });
  expect(disabled.status(), await disabled.text()).toBe(200);
  await page.goto(sessionPath);
  await expect(page).toHaveURL(/\/signin\?/);
  await expect(page.getByTestId("signin-error")).toHaveText("This account is disabled. Ask an admin.");
  await adminPage.request.patch(`/api/admin/users/${doraId}`, { headers: sameOrigin, data: { disabled: false } });
});

test("a member demoted while the session is open sees why, and loses the composer, mode and approvals until promoted", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const beaEmail = uniqueEmail("bea");
  const bea = await signedInPage(browser, beaEmail, `Bea ${stamp}`);
  const ws = await createWorkspace(ada, `Live roles ${stamp}`, { page: bea, role: "editor" });
  const beaId = await userIdOf(ada, ws.slug, beaEmail);
  await ada.goto(`/w/${ws.slug}`);
  await startSession(ada, "default");
  const sessionPath = new URL(ada.url()).pathname;

  await bea.goto(sessionPath);
  await expect(bea.getByTestId("session-view")).toBeVisible();
  await expect(bea.getByTestId("prompt-input")).toBeEnabled();
  await expect(bea.getByTestId("mode-select")).toBeEnabled();
  // an approval waits for the editors: Bea sees it inline
  await sendPrompt(ada, "tour");
  const card = bea.locator('[data-testid="session-approvals"] [data-testid="approval-card"][data-status="pending"]').first();
  await expect(card).toBeVisible({ timeout: 45_000 });

  const setRole = async (role: "viewer" | "editor") => {
    const res = await ada.request.patch(`/api/workspaces/${ws.slug}/members/${beaId}`, { headers: sameOrigin, data: { role } });
    expect(res.status(), await res.text()).toBe(200);
  };

  await setRole("viewer");
  await expect(bea.getByTestId("role-changed")).toHaveText(/Your role in this workspace changed to viewer/, { timeout: 10_000 });
  await expect(bea.getByTestId("prompt-input")).toBeDisabled();
  await expect(bea.getByTestId("mode-select")).toBeDisabled();
  await expect(bea.locator('[data-testid="session-approvals"] [data-testid="approve-button"]:enabled')).toHaveCount(0);
  // no reload happened: the same page learned it
  await expect(bea.getByTestId("session-view")).toBeVisible();

  await setRole("editor");
  await expect(bea.getByTestId("role-changed")).toHaveText(/Your role in this workspace changed to editor/, { timeout: 10_000 });
  await expect(bea.getByTestId("prompt-input")).toBeEnabled();
  await expect(bea.getByTestId("mode-select")).toBeEnabled();

  // the workspace page says so too
  await bea.goto(`/w/${ws.slug}`);
  await expect(bea.getByTestId("workspace-role")).toHaveText("editor");
  await setRole("viewer");
  await expect(bea.getByTestId("role-changed")).toHaveText(/changed to viewer/, { timeout: 10_000 });
  await expect(bea.getByTestId("workspace-role")).toHaveText("viewer", { timeout: 10_000 });
});

async function phoneContext(browser: Browser) {
  return browser.newContext({ ...phone });
}

test("every page fits a 390 px phone: no sideways scrolling", async ({ browser }, testInfo) => {
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);

  // signed out: sign-in and sign-up
  const anonymous = await phoneContext(browser);
  const visitor = await anonymous.newPage();
  await visitor.goto("/signin");
  await expectFits(visitor, "sign-in", testInfo);
  await visitor.goto("/signup");
  await expectFits(visitor, "sign-up", testInfo);

  // the admin, with a workspace whose name is one long word, a session with a finished turn and its cost
  const context = await phoneContext(browser);
  const page = await context.newPage();
  await page.goto("/signin");
  await signInWithForm(page, e2eAdmin.email, e2eAdmin.password);
  await expect(page).toHaveURL(/\/workspaces$/);
  // the check sees a page that is too wide (or it could never fail)
  await page.evaluate(() => document.body.insertAdjacentHTML("beforeend", '<div id="too-wide" style="width:600px;height:1px"></div>'));
  expect((await measureOverflow(page)).scrollWidth).toBeGreaterThan(390);
  await page.evaluate(() => document.getElementById("too-wide")?.remove());

  const longName = `Quarterly-infrastructure-migration-plan-northern-datacenters-${stamp}`;
  const ws = await createWorkspace(page, longName);
  await page.goto("/workspaces");
  await expect(page.getByText(longName)).toBeVisible();
  await expectFits(page, "workspaces", testInfo);
  await page.goto(`/w/${ws.slug}`);
  await expectFits(page, "workspace", testInfo);
  await startSession(page);
  const sessionPath = new URL(page.url()).pathname;
  await sendPrompt(page, "hello");
  await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
  await expectFits(page, "session", testInfo);

  await page.goto("/history");
  await expect(page.getByTestId("history-row").first()).toBeVisible();
  await expectFits(page, "history", testInfo);
  await page.goto(`/history/${ws.slug}/${sessionPath.split("/").at(-1)}`);
  await expectFits(page, "history transcript", testInfo);
  await page.goto("/reports");
  await expect(page.getByTestId("report-row").first()).toBeVisible();
  await expectFits(page, "reports", testInfo);
  await page.goto("/inbox");
  await expectFits(page, "inbox", testInfo);
  await page.goto("/account");
  await expectFits(page, "account", testInfo);
  for (const admin of ["/admin", "/admin/users", "/admin/invitations", "/admin/audit", "/admin/instance"]) {
    await page.goto(admin);
    await expectFits(page, admin, testInfo);
  }
});

test("the smaller things: a favicon, titles that name the page, refusals in people's words", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("tess"), `Tess ${stamp}`);
  expect((await page.request.get("/favicon.ico")).status()).toBe(200);
  await expect(page).toHaveTitle("Workspaces · Conduit");

  // a workspace name is one of its owner's only once, whatever its case
  const name = `Titles ${stamp}`;
  const ws = await createWorkspace(page, name);
  const again = await page.request.post("/api/workspaces", { headers: sameOrigin, data: { name: name.toUpperCase() } });
  expect(again.status()).toBe(409);
  expect(((await again.json()) as { error: { message: string } }).error.message).toBe(`You already own a workspace named “${name}”. Choose another name.`);

  // a name past 80 characters is said while typing, never cut
  await page.goto("/workspaces");
  const long = "n".repeat(85);
  await page.getByTestId("workspace-create-name").fill(long);
  await expect(page.getByTestId("workspace-create-name")).toHaveValue(long);
  await expect(page.getByTestId("workspace-create-name-length")).toHaveText("85 characters: a name has at most 80. Shorten it by 5.");
  await expect(page.getByTestId("workspace-create-submit")).toBeDisabled();

  // a budget past the limit is refused in words, not zod's
  const budget = await page.request.put(`/api/workspaces/${ws.slug}/budget`, { headers: sameOrigin, data: { monthlyBudgetUsd: 5_000_000 } });
  expect(budget.status()).toBe(400);
  expect(((await budget.json()) as { error: { message: string } }).error.message).toBe("The monthly budget can be at most $1,000,000.");

  await page.goto(`/w/${ws.slug}`);
  await expect(page).toHaveTitle(`${name} · Conduit`);
  await startSession(page);
  await sendPrompt(page, "hello there");
  await page.reload();
  // the session's name (its first prompt while it has no title), then its workspace
  await expect(page).toHaveTitle(new RegExp(` · ${name} · Conduit$`));
  expect(await page.title()).not.toMatch(/^Session /);
});

import { expect, test, createWorkspace, sameOrigin, sendPrompt, signedInPage, signInViaUi, signUpViaApi, startSession, uniqueEmail, type Browser, type Page, type TestInfo } from "./fixtures";

// Conduit on a phone: 390 px wide (an iPhone 12–15), touch, a mobile user agent.
const phone = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
  userAgent:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
} as const;

async function phonePage(browser: Browser, email: string, name: string, options: { permissions?: string[]; init?: () => void } = {}): Promise<Page> {
  const context = await browser.newContext({ ...phone, permissions: options.permissions ?? [] });
  if (options.init) await context.addInitScript(options.init);
  const page = await context.newPage();
  await signUpViaApi(context.request, email, name);
  await signInViaUi(page, email);
  return page;
}

/** How wide the page scrolls, against the screen, and the innermost elements sticking out. */
function measureOverflow(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll<HTMLElement>("body *")]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && getComputedStyle(el).position !== "fixed")
      .filter((el) => ![...el.querySelectorAll("*")].some((c) => c.getBoundingClientRect().right > width + 1))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.dataset.testid ? `[${el.dataset.testid}]` : ""}.${String(el.className).slice(0, 80)} right=${Math.round(el.getBoundingClientRect().right)}`);
    return { scrollWidth: document.documentElement.scrollWidth, width, wide };
  });
}

/** The page scrolls sideways when anything is wider than the screen: name the culprits. A screenshot is kept for review. */
async function expectNoHorizontalScroll(page: Page, where: string, testInfo: TestInfo): Promise<void> {
  // let fonts, Monaco and late layout settle
  await page.waitForTimeout(300);
  await page.screenshot({ path: testInfo.outputPath(`${where.replace(/\W+/g, "-")}.png`), fullPage: true });
  const report = await measureOverflow(page);
  expect(report.scrollWidth, `${where}: wider than the screen: ${report.wide.join(" | ")}`).toBeLessThanOrEqual(report.width);
}

test("a phone-sized editor approves a diff from the inbox and the session page without sideways scrolling", async ({ browser }, testInfo) => {
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const beaEmail = uniqueEmail("bea");
  const bea = await phonePage(browser, beaEmail, `Bea with a rather long name ${stamp}`);
  try {
    await expect(bea.getByTestId("current-user")).toBeVisible();
    const ws = await createWorkspace(ada, `Phone approvals ${stamp}`, { page: bea, role: "editor" });
    // the check sees a page that is too wide (or it could never fail)
    await bea.evaluate(() => document.body.insertAdjacentHTML("beforeend", '<div id="too-wide" style="width:600px;height:1px"></div>'));
    expect((await measureOverflow(bea)).scrollWidth).toBeGreaterThan(390);
    await bea.evaluate(() => document.getElementById("too-wide")?.remove());
    await expectNoHorizontalScroll(bea, "workspaces", testInfo);

    await ada.goto(`/w/${ws.slug}`);
    await startSession(ada, "default");
    const sessionUrl = new URL(ada.url()).pathname;

    // The header's inbox link works with a thumb; the inbox fits the screen.
    await bea.getByTestId("approval-inbox-link").tap();
    await expect(bea).toHaveURL(/\/inbox$/);
    await expect(bea.locator('[data-testid="approval-inbox"][data-loaded="true"]')).toBeVisible();
    await expectNoHorizontalScroll(bea, "empty inbox", testInfo);

    // The tour writes a file first: a file review with its diff, on the phone.
    await sendPrompt(ada, "tour");
    const write = bea.locator('[data-testid="approval-card"][data-status="pending"]').first();
    await expect(write).toBeVisible({ timeout: 45_000 });
    await expect(write).toHaveAttribute("data-tool", "Write");
    const diff = write.getByTestId("approval-diff");
    await expect(diff).toBeVisible();
    await expect(diff.locator(".editor.modified")).toBeVisible({ timeout: 30_000 });
    await expectNoHorizontalScroll(bea, "inbox with a Write diff", testInfo);
    const box = await write.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    const writeId = await write.getAttribute("data-approval-id");
    await write.getByTestId("approve-button").tap();
    await expect(bea.locator(`[data-testid="approval-card"][data-approval-id="${writeId}"]`)).toHaveAttribute("data-status", "allowed");

    // The Edit comes next; Bea opens the session on her phone and allows it inline there.
    await bea.goto(sessionUrl);
    await expect(bea.getByTestId("session-view")).toBeVisible();
    const edit = bea.locator('[data-testid="session-approvals"] [data-testid="approval-card"][data-status="pending"][data-tool="Edit"]');
    await expect(edit).toBeVisible({ timeout: 45_000 });
    await expect(edit.getByTestId("approval-diff").locator(".editor.modified")).toBeVisible({ timeout: 30_000 });
    await expectNoHorizontalScroll(bea, "session page with an Edit diff", testInfo);
    await edit.getByTestId("approve-button").tap();
    await expect(edit).toHaveCount(0);

    // The Bash that ends the tour, then the finished turn: the page still fits.
    const bash = bea.locator('[data-testid="session-approvals"] [data-testid="approval-card"][data-status="pending"][data-tool="Bash"]');
    await expect(bash).toBeVisible({ timeout: 45_000 });
    // the command is shown whole (the box grows with wrapped lines), the file it writes relative to the workspace
    const command = bash.getByTestId("approval-command");
    const wholeShown = () => command.evaluate((el) => el.scrollHeight <= el.clientHeight + 1);
    expect(await wholeShown()).toBe(true);
    // a one-line command longer than the screen wraps, and the box grows with it
    await command.fill(`echo ${"word ".repeat(40)}`);
    expect(await wholeShown()).toBe(true);
    await bash.getByRole("button", { name: "Restore proposed" }).tap();
    await expect(command).toHaveValue("touch conduit-demo.md && ls -la");
    await expect(bash.getByTestId("approval-reason")).toHaveText("Claude Code asks: Touch the demo file and list the workspace");
    await expect(bash.getByTestId("approval-path")).toHaveAttribute("data-outside", "false");
    await expect(bash.getByTestId("approval-path")).toHaveText("Path: conduit-demo.md");
    await bash.getByTestId("approve-button").tap();
    await expect(bea.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
    await expectNoHorizontalScroll(bea, "session page after the turn", testInfo);
    await expect(bea.getByTestId("prompt-input")).toBeInViewport();

    // The Files drawer's button on the page's edge would cover the conversation on a phone: the
    // tab row's Files button opens the drawer there, full width, with its own Close.
    await expect(bea.getByTestId("files-toggle")).toBeHidden();
    await bea.getByTestId("files-open").tap();
    const drawer = bea.locator("#files-drawer");
    await expect(drawer.getByTestId("file-tree-item").filter({ hasText: "conduit-demo.md" })).toBeVisible({ timeout: 20_000 });
    const panel = await drawer.boundingBox();
    expect(panel && Math.round(panel.x) === 0 && Math.round(panel.width) === 390).toBe(true);
    await expectNoHorizontalScroll(bea, "files drawer", testInfo);
    await bea.getByTestId("files-close").tap();
    await expect(drawer).toHaveCount(0);
  } finally {
    await ada.context().close();
    await bea.context().close();
  }
});

test("a phone-sized owner's workspace page (members, network, settings) and history fit the screen", async ({ browser }, testInfo) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const email = uniqueEmail("owen");
  const owen = await phonePage(browser, email, `Owen with a rather long name ${stamp}`);
  try {
    // a long workspace name and an owner's panels: the role select, Leave, the network policy's long options
    const ws = await createWorkspace(owen, `A workspace with a long descriptive name ${stamp}`);
    await owen.goto(`/w/${ws.slug}`);
    await expect(owen.getByTestId("member-row")).toHaveCount(1);
    await expect(owen.getByTestId("workspace-network-policy")).toBeVisible();
    await expectNoHorizontalScroll(owen, "workspace page of its owner", testInfo);
    await startSession(owen, "default");
    await sendPrompt(owen, "hello");
    await expect(owen.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
    await owen.goto("/history");
    await expect(owen.getByTestId("history-row")).toHaveCount(1);
    await expectNoHorizontalScroll(owen, "history", testInfo);
  } finally {
    await owen.context().close();
  }
});

test("the push toggle says when this browser cannot show notifications, and never claims to be on", async ({ browser }, testInfo) => {
  test.setTimeout(120_000);
  // Notifications blocked for the site in the browser's settings.
  const denied = await phonePage(browser, uniqueEmail("denied"), "Denied", {
    init: () => Object.defineProperty(Notification, "permission", { get: () => "denied" }),
  });
  // A browser without the Push API.
  const noPush = await phonePage(browser, uniqueEmail("nopush"), "No push", {
    init: () => {
      delete (window as { PushManager?: unknown }).PushManager;
    },
  });
  // Allowed, but this headless browser has no push service to subscribe with.
  const allowed = await phonePage(browser, uniqueEmail("allowed"), "Allowed", { permissions: ["notifications"] });
  try {
    await denied.goto("/account");
    await expect(denied.getByTestId("push-status")).toContainText("blocked for this site");
    await expect(denied.getByTestId("push-toggle")).toBeDisabled();
    await expect(denied.getByTestId("push-toggle")).toHaveAttribute("aria-checked", "false");
    await expectNoHorizontalScroll(denied, "account page", testInfo);

    await noPush.goto("/account");
    await expect(noPush.getByTestId("push-status")).toContainText("cannot receive push notifications");
    await expect(noPush.getByTestId("push-toggle")).toBeDisabled();

    // The worker runs (production build), permission is granted: the toggle is usable and off.
    await allowed.goto("/account");
    await expect(allowed.getByTestId("push-toggle")).toHaveAttribute("data-state", "off", { timeout: 20_000 });
    await expect(allowed.getByTestId("push-status")).toHaveText("Off for this browser.");
    expect(await allowed.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.scriptURL)).toMatch(/\/sw\.js$/);
    // Turning it on either subscribes for real (the server stores it) or says why not; it never claims "on" without a subscription.
    await allowed.getByTestId("push-toggle").tap();
    await expect(allowed.getByTestId("push-toggle")).toBeEnabled({ timeout: 30_000 });
    const state = await allowed.getByTestId("push-toggle").getAttribute("data-state");
    const stored = (await (await allowed.request.get("/api/account/push")).json()) as { data: { subscriptions: number } };
    const subscribed = await allowed.evaluate(async () => (await (await navigator.serviceWorker.getRegistration())?.pushManager.getSubscription()) !== null);
    testInfo.annotations.push({ type: "push-toggle after a tap", description: `${state}: ${await allowed.getByTestId("push-status").textContent()} ${(await allowed.getByTestId("push-error").textContent().catch(() => "")) ?? ""}` });
    if (state === "on") {
      expect(stored.data.subscriptions).toBe(1);
      expect(subscribed).toBe(true);
    } else {
      await expect(allowed.getByTestId("push-error")).toBeVisible();
      expect(stored.data.subscriptions).toBe(0);
      expect(subscribed).toBe(false);
    }

    // The settings persist.
    await allowed.getByTestId("push-finished-turns").uncheck();
    await expect
      .poll(async () => ((await (await allowed.request.get("/api/account/push")).json()) as { data: { settings: { finishedTurns: boolean } } }).data.settings.finishedTurns)
      .toBe(false);
    await allowed.reload();
    await expect(allowed.getByTestId("push-finished-turns")).not.toBeChecked();
    await expect(allowed.getByTestId("push-approvals")).toBeChecked();
  } finally {
    await Promise.all([denied, noPush, allowed].map((p) => p.context().close()));
  }
});

test("the manifest and the service worker are served to anyone", async ({ request }) => {
  const manifest = await request.get("/manifest.webmanifest");
  expect(manifest.status()).toBe(200);
  const body = (await manifest.json()) as { name: string; display: string; icons: { src: string; sizes: string }[] };
  expect(body).toMatchObject({ name: "Conduit", display: "standalone" });
  expect(body.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(["192x192", "512x512"]));
  for (const icon of body.icons) expect((await request.get(icon.src)).headers()["content-type"]).toBe("image/png");
  const sw = await request.get("/sw.js");
  expect(sw.status()).toBe(200);
  expect(await sw.text()).toContain("notificationclick");
});

test("push routes: only the signed-in person's own browsers, public https push services only", async ({ browser, playwright }) => {
  const page = await signedInPage(browser, uniqueEmail("subs"), "Subs");
  const other = await signedInPage(browser, uniqueEmail("other"), "Other");
  const anonymous = await playwright.request.newContext({ baseURL: test.info().project.use.baseURL });
  const endpoint = `https://push.example.test/e2e/${Date.now().toString(36)}`;
  const sub = { endpoint, keys: { p256dh: "BExampleKey", auth: "exampleAuth" } };
  try {
    expect((await anonymous.get("/api/account/push")).status()).toBe(401);
    expect((await anonymous.post("/api/account/push/subscriptions", { headers: sameOrigin, data: sub })).status()).toBe(401);

    for (const bad of ["http://push.example.test/x", "https://127.0.0.1:4703/x", "https://localhost/x"]) {
      const res = await page.request.post("/api/account/push/subscriptions", { headers: sameOrigin, data: { ...sub, endpoint: bad } });
      expect(res.status(), bad).toBe(400);
    }
    const created = await page.request.post("/api/account/push/subscriptions", { headers: sameOrigin, data: sub });
    expect(created.status(), await created.text()).toBe(201);
    const state = async (p: Page) =>
      ((await (await p.request.get(`/api/account/push?endpoint=${encodeURIComponent(endpoint)}`)).json()) as { data: { subscriptions: number; thisBrowser: boolean } }).data;
    expect(await state(page)).toMatchObject({ subscriptions: 1, thisBrowser: true });
    expect(await state(other)).toMatchObject({ subscriptions: 0, thisBrowser: false });

    // someone else cannot remove it
    const foreign = await other.request.delete("/api/account/push/subscriptions", { headers: sameOrigin, data: { endpoint } });
    expect(((await foreign.json()) as { data: { removed: boolean } }).data.removed).toBe(false);
    expect(await state(page)).toMatchObject({ subscriptions: 1, thisBrowser: true });

    const removed = await page.request.delete("/api/account/push/subscriptions", { headers: sameOrigin, data: { endpoint } });
    expect(((await removed.json()) as { data: { removed: boolean } }).data.removed).toBe(true);
    expect(await state(page)).toMatchObject({ subscriptions: 0, thisBrowser: false });

    const badSettings = await page.request.patch("/api/account/push", { headers: sameOrigin, data: { approvals: "yes" } });
    expect(badSettings.status()).toBe(400);
  } finally {
    await anonymous.dispose();
    await page.context().close();
    await other.context().close();
  }
});

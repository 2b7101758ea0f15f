import { expect, test as base, type APIRequestContext, type Browser, type Page } from "@playwright/test";

export * from "@playwright/test";

/**
 * Playwright's `test`, with the browser contexts a test made itself (`browser.newContext()`,
 * `signedInPage`) closed when it ends, passed or failed. Left open, their pages kept their sockets,
 * timers and renders going through every later test of the run, on the cores the servers and the
 * CLIs need. Specs import `test` and `expect` from here.
 */
export const test = base.extend<{ closeOwnContexts: void }>({
  closeOwnContexts: [
    async ({ browser }, use) => {
      const before = new Set(browser.contexts());
      await use();
      await Promise.all(browser.contexts().filter((c) => !before.has(c)).map((c) => c.close().catch(() => undefined)));
    },
    { auto: true },
  ],
});

/**
 * The headers a same-origin API client sends. Browsers add `Origin` to every POST, PUT,
 * PATCH and DELETE of Conduit's pages; Playwright's API requests (`page.request`, the
 * `request` fixture) add none, and Conduit refuses a state change that does not say it
 * comes from its own origin (server/shared/same-origin-request.ts). Pass these with every
 * mutating API request a test makes; the same origin as playwright.config.ts's baseURL.
 */
export const sameOrigin = { origin: `http://127.0.0.1:${Number(process.env.CONDUIT_E2E_PORT ?? 3300)}` } as const;

let counter = 0;

/** A unique email per call, so tests never collide on a reused data directory. */
export function uniqueEmail(name: string): string {
  counter += 1;
  return `${name}-${Date.now().toString(36)}-${counter}@example.test`;
}

export const password = "correct-horse-42";

/** Creates an account through the API (fast path for users a test only needs to exist). */
export async function signUpViaApi(request: APIRequestContext, email: string, name?: string): Promise<void> {
  const res = await request.post("/api/signup", { headers: sameOrigin, data: { email, password, name } });
  expect(res.status(), await res.text()).toBe(201);
}

/** Signs in through the form and waits for the workspaces page. */
export async function signInViaUi(page: Page, email: string, pass = password): Promise<void> {
  await page.goto("/signin");
  await page.getByTestId("signin-email").fill(email);
  await page.getByTestId("signin-password").fill(pass);
  await page.getByTestId("signin-submit").click();
  await expect(page).toHaveURL(/\/workspaces$/);
}

/** A new browser context with a freshly signed-up, signed-in user; returns its page. */
export async function signedInPage(browser: Browser, email: string, name: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signUpViaApi(context.request, email, name);
  await signInViaUi(page, email);
  return page;
}

/**
 * Types a prompt and sends it with Enter: the box empties at once and the prompt shows as
 * sending; returns once the sidecar has logged it (no prompt of the page is still pending).
 */
export async function sendPrompt(page: Page, text: string): Promise<void> {
  const input = page.getByTestId("prompt-input");
  await input.fill(text);
  await input.press("Enter");
  await expect(input).toHaveValue("");
  await expect(page.locator('[data-testid="message-user"][data-pending="true"]')).toHaveCount(0);
}

/**
 * Starts a session from the workspace page `page` is on, in permission `mode` when given (else
 * the workspace's default), and waits for the session's view.
 */
export async function startSession(page: Page, mode?: string): Promise<void> {
  await page.getByTestId("session-new").click();
  if (mode) await page.getByTestId("session-new-mode").selectOption(mode);
  await page.getByTestId("session-new-submit").click();
  await expect(page.getByTestId("session-view")).toBeVisible();
}

/** A new workspace of `owner` (through the API), with `member` added in `role` when given. */
export async function createWorkspace(
  owner: Page,
  name: string,
  member?: { page: Page; role: "owner" | "editor" | "viewer" },
): Promise<{ id: string; slug: string }> {
  const created = await owner.request.post("/api/workspaces", { headers: sameOrigin, data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  const { data: ws } = (await created.json()) as { data: { id: string; slug: string } };
  if (member) {
    const email = await member.page.getByTestId("current-user").getAttribute("title");
    const added = await owner.request.post(`/api/workspaces/${ws.slug}/members`, {
      headers: sameOrigin,
      data: { email, role: member.role },
    });
    expect(added.status(), await added.text()).toBe(201);
  }
  return ws;
}

/** A new workspace of `page`'s user, opened, with a session started in it (`mode` as in {@link startSession}). */
export async function startSessionInNewWorkspace(page: Page, name: string, mode?: string): Promise<{ id: string; slug: string }> {
  const ws = await createWorkspace(page, name);
  await page.goto(`/w/${ws.slug}`);
  await startSession(page, mode);
  return ws;
}

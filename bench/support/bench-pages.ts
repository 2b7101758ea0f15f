/**
 * What the browser benchmarks share: a fresh account signed in through the real sign-in page,
 * and polling an expression in the page (the page's CSP forbids waitForFunction's eval).
 */
import type { BrowserContext, Page } from "@playwright/test";

export const BENCH_PASSWORD = "correct-horse-42";

/** Signs `email` up through the API, then in through the sign-in page. */
export async function signUpAndSignIn(
  context: BrowserContext,
  base: string,
  email: string,
  name: string,
): Promise<Page> {
  const res = await context.request.post("/api/signup", {
    headers: { origin: base },
    data: { email, password: BENCH_PASSWORD, name },
  });
  if (res.status() !== 201) throw new Error(`sign-up failed: ${res.status()} ${await res.text()}`);
  return signIn(context, email);
}

/** Signs `email` in through the sign-in page in a new page of `context`; resolves on the workspaces page. */
export async function signIn(context: BrowserContext, email: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByTestId("signin-email").fill(email);
  await page.getByTestId("signin-password").fill(BENCH_PASSWORD);
  await page.getByTestId("signin-submit").click();
  await page.waitForURL(/\/workspaces$/);
  return page;
}

/** Polls `expression` (a string: tsx would wrap a function in helpers the page lacks) until true. */
export async function untilInPage(page: Page, expression: string, timeoutMs: number, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** One script the page loaded: its URL, bytes as sent (compressed) and as decoded. */
export interface LoadedScript {
  name: string;
  sent: number;
  decoded: number;
}

/** The scripts the page has loaded so far, Monaco's left out (it loads only with a diff or editor). */
export async function loadedScripts(page: Page): Promise<LoadedScript[]> {
  return (await page.evaluate(`performance.getEntriesByType("resource")
    .filter((e) => /\\.js(\\?|$)/.test(e.name) && !e.name.includes("/monaco/"))
    .map((e) => ({ name: e.name, sent: e.encodedBodySize, decoded: e.decodedBodySize }))`)) as LoadedScript[];
}

/** Their total, KB as sent and as decoded. */
export function scriptKb(scripts: readonly LoadedScript[]): { sentKb: number; decodedKb: number } {
  return {
    sentKb: scripts.reduce((s, e) => s + e.sent, 0) / 1024,
    decodedKb: scripts.reduce((s, e) => s + e.decoded, 0) / 1024,
  };
}

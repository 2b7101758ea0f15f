import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test, sameOrigin, sendPrompt, signedInPage, startSession, uniqueEmail, type Page } from "./fixtures";

/**
 * Issue 38, defects 2 and 3: Stop within reach while a long answer streams (the composer's Stop,
 * Esc, the bar that stays at the top), and `@` mentions that find a file put on disk before the
 * session, with Enter picking from the menu (never sending the half-typed prompt).
 */

interface Ws {
  slug: string;
  rootPath: string;
}

async function newWorkspace(page: Page, name: string): Promise<Ws> {
  const created = await page.request.post("/api/workspaces", { headers: sameOrigin, data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  return ((await created.json()) as { data: Ws }).data;
}

const turnEnds = (page: Page) => page.getByTestId("turn-end");
const stoppedTurns = (page: Page) => page.locator('[data-testid="turn-end"][data-interrupted="true"]');
const streaming = (page: Page) => page.locator('[data-testid="message-assistant"][data-streaming="true"]');

test("Stop is in reach while a long answer streams: Send turns into Stop, Esc stops, the header's Stop stays on screen", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("sten"), `Sten ${stamp}`);
  // a short screen: a few answers make the page scroll
  await page.setViewportSize({ width: 1280, height: 640 });
  const ws = await newWorkspace(page, `Stop ${stamp}`);
  await page.goto(`/w/${ws.slug}`);
  await startSession(page);
  for (let i = 1; i <= 2; i++) {
    await sendPrompt(page, "show me a markdown table and a checklist");
    await expect(turnEnds(page)).toHaveCount(i, { timeout: 45_000 });
  }
  // nothing runs: Send, no Stop
  await expect(page.getByTestId("composer-stop")).toHaveCount(0);
  await expect(page.getByTestId("prompt-send")).toBeVisible();

  // 1. a slow stream: Send has turned into Stop, on screen at the bottom while the header is scrolled away
  await sendPrompt(page, "a slow stream please");
  await expect(streaming(page)).toBeVisible({ timeout: 30_000 });
  const stop = page.getByTestId("composer-stop");
  await expect(stop).toBeVisible();
  await expect(stop).toBeInViewport();
  await expect(page.getByTestId("prompt-send")).toHaveCount(0);
  await expect(page.getByTestId("interrupt-button")).toHaveText(/Stop/);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect(page.getByTestId("interrupt-button")).not.toBeInViewport();
  // the compact bar keeps the session's name, status and Stop at the top
  const bar = page.getByTestId("session-sticky-bar");
  await expect(bar).toBeInViewport();
  await expect(bar.getByTestId("sticky-stop")).toBeVisible();
  // typing while it runs brings Send back beside Stop
  const input = page.getByTestId("prompt-input");
  await input.fill("next");
  await expect(page.getByTestId("prompt-send")).toBeVisible();
  await expect(stop).toBeVisible();
  await input.fill("");

  // Esc in the prompt box stops the turn
  await input.focus();
  await input.press("Escape");
  await expect(stoppedTurns(page)).toHaveCount(1, { timeout: 30_000 });
  await expect(page.getByTestId("session-status")).toHaveAttribute("data-status", "idle", { timeout: 30_000 });
  await expect(page.getByTestId("composer-stop")).toHaveCount(0);
  await expect(page.getByText(`Sten ${stamp} pressed Stop.`)).toBeVisible();

  // 2. Esc on the page (focus outside any field) stops the next one
  await sendPrompt(page, "another slow stream");
  await expect(streaming(page)).toBeVisible({ timeout: 30_000 });
  await input.blur();
  await page.keyboard.press("Escape");
  await expect(stoppedTurns(page)).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId("session-status")).toHaveAttribute("data-status", "idle", { timeout: 30_000 });

  // 3. the composer's Stop, by keyboard
  await sendPrompt(page, "one more slow stream");
  await expect(streaming(page)).toBeVisible({ timeout: 30_000 });
  await page.getByTestId("composer-stop").focus();
  await page.keyboard.press("Enter");
  await expect(stoppedTurns(page)).toHaveCount(3, { timeout: 30_000 });

  // 4. a phone's width keeps Stop on screen; with the @ menu open, Esc closes the menu and stops nothing
  await expect(page.getByTestId("session-status")).toHaveAttribute("data-status", "idle", { timeout: 30_000 });
  await page.setViewportSize({ width: 390, height: 740 });
  await sendPrompt(page, "a last slow stream");
  await expect(streaming(page)).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("composer-stop")).toBeInViewport();
  await input.fill("look at @");
  await expect(page.getByTestId("mention-menu")).toBeVisible();
  await input.press("Escape");
  await expect(page.getByTestId("mention-menu")).toHaveCount(0);
  await expect(input).toHaveValue("look at @");
  // the turn went on to its end
  await expect(turnEnds(page)).toHaveCount(6, { timeout: 30_000 });
  await expect(stoppedTurns(page)).toHaveCount(3);
});

test("@ finds a file put on disk before the session, and Enter with the menu open picks or does nothing", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("mena"), `Mena ${stamp}`);
  const ws = await newWorkspace(page, `Mentions ${stamp}`);
  // written straight to the workspace's directory, not through Conduit
  await writeFile(path.join(ws.rootPath, "conduit-demo.md"), "# Conduit demo\n");
  await page.goto(`/w/${ws.slug}`);
  await startSession(page);

  const input = page.getByTestId("prompt-input");
  const menu = page.getByTestId("mention-menu");
  // typed once: the answer comes within 15 s without typing anything more
  await input.pressSequentially("summarise @con");
  await expect(menu).toBeVisible();
  const item = menu.locator('[data-testid="mention-item"][data-path="conduit-demo.md"]');
  await expect(item).toBeVisible({ timeout: 15_000 });
  // Enter picks the highlighted entry: the path goes in, nothing is sent
  const index = await menu.getByTestId("mention-item").evaluateAll((els) => els.findIndex((el) => el.getAttribute("data-path") === "conduit-demo.md"));
  for (let i = 0; i < index; i++) await input.press("ArrowDown");
  await expect(item).toHaveAttribute("aria-selected", "true");
  await input.press("Enter");
  await expect(input).toHaveValue("summarise @conduit-demo.md ");
  await expect(menu).toHaveCount(0);
  await expect(page.getByTestId("message-user")).toHaveCount(0);

  // Tab picks too
  await input.fill("");
  await input.pressSequentially("and @conduit-d");
  await expect(item).toBeVisible({ timeout: 15_000 });
  await input.press("Tab");
  await expect(input).toHaveValue("and @conduit-demo.md ");
  await expect(input).toBeFocused();

  // a name nothing matches: Enter does nothing while the menu says so
  await input.fill("");
  await input.pressSequentially("hello @zzqqxx");
  await expect(menu).toContainText("No file matches.", { timeout: 15_000 });
  await input.press("Enter");
  await expect(input).toHaveValue("hello @zzqqxx");
  await expect(page.getByTestId("message-user")).toHaveCount(0);
  // Esc closes the menu; then Enter sends
  await input.press("Escape");
  await expect(menu).toHaveCount(0);
  await input.press("Enter");
  await expect(input).toHaveValue("");
  await expect(page.getByTestId("message-user")).toHaveCount(1);
});

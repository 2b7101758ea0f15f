import path from "node:path";
import { expect, test, sameOrigin, sendPrompt, signInViaUi, signUpViaApi, uniqueEmail, type Page } from "./fixtures";
import { seedLongSession, turnMarker } from "./support/long-session-seed";

const dbFile = path.join(process.cwd(), "test-results/e2e-data/conduit.db");
// The demo model's slow scenario (server/model-server/demo-scenarios.ts).
const slowStart = "This answer streams slowly on purpose";
const slowEnd = "the stream simply finishes with this sentence.";

/** A new user signed in on `page`, with a workspace holding a stopped session of `events` seeded events. */
async function signedInWithLongSession(page: Page, name: string, events: number) {
  const email = uniqueEmail(name.split(" ")[0]!.toLowerCase());
  await signUpViaApi(page.request, email, name);
  await signInViaUi(page, email);
  const created = await page.request.post("/api/workspaces", { headers: sameOrigin, data: { name: `${name} ${Date.now().toString(36)}` } });
  const ws = ((await created.json()) as { data: { id: string; slug: string } }).data;
  return { ws, seed: seedLongSession(dbFile, { workspaceId: ws.id, userEmail: email, events, startsFresh: true }) };
}

test("a long session opens at its end, reads earlier pages on scroll up, and still streams at the bottom", async ({ page }) => {
  test.setTimeout(240_000);
  // 3,000 events: the tail (200 events) and five earlier pages of at most 500
  const { ws, seed } = await signedInWithLongSession(page, "Lena Long", 3_000);
  expect(seed.turns).toBe(150);

  await page.goto(`/w/${ws.slug}/s/${seed.sessionId}`);
  // The last screen first: the last turn's reply on screen, the first prompt not even in the DOM.
  const lastReply = page.getByTestId("message-assistant").filter({ hasText: turnMarker(seed.turns) });
  await expect(lastReply).toBeInViewport();
  const firstPrompt = page.getByTestId("message-user").filter({ hasText: "Please do step 1 of the refactor" });
  await expect(firstPrompt).toHaveCount(0);
  expect(await page.getByTestId("message-user").count()).toBeLessThan(30);
  await expect(page.getByTestId("conversation-earlier")).toBeAttached();
  await expect(page.getByTestId("jump-to-latest")).toHaveCount(0);

  // At the page's very top (where the browser's scroll anchoring does nothing) the earlier page
  // that arrives goes above the screen: what was first stays where it was.
  const before = (await page.evaluate(() => {
    window.dispatchEvent(new WheelEvent("wheel", { deltaY: -1 })); // the reader's own scroll: the list stops following
    window.scrollTo(0, 0);
    const first = document.querySelector<HTMLElement>("[data-chunk]")!;
    return { chunk: first.dataset.chunk!, top: first.getBoundingClientRect().top };
  })) as { chunk: string; top: number };
  await expect.poll(() => page.evaluate(() => document.querySelector<HTMLElement>("[data-chunk]")?.dataset.chunk)).not.toBe(before.chunk);
  const after = (await page.evaluate(
    (chunk) => ({ top: document.querySelector(`[data-chunk="${chunk}"]`)?.getBoundingClientRect().top, y: window.scrollY }),
    before.chunk,
  )) as { top?: number; y: number };
  expect(after.y).toBeGreaterThan(0);
  expect(Math.abs(after.top! - before.top)).toBeLessThan(2);

  // Scrolling up reads the earlier pages until the session's first prompt appears.
  await page.mouse.move(640, 300);
  const deadline = Date.now() + 120_000;
  while ((await firstPrompt.count()) === 0) {
    expect(Date.now(), "the first prompt appears while scrolling up").toBeLessThan(deadline);
    await page.mouse.wheel(0, -2_000);
    await page.waitForTimeout(30);
  }
  await expect(firstPrompt).toBeVisible();
  await expect(page.getByTestId("conversation-start")).toBeAttached();
  await expect(page.getByTestId("conversation-earlier")).toHaveCount(0);
  // a tool call of the first turn kept its card and its result (the pages joined without a hole)
  await expect(page.getByTestId("message-assistant").filter({ hasText: turnMarker(1) })).toBeVisible();
  // off-screen rows are not in the DOM: far fewer prompts than turns
  expect(await page.getByTestId("message-user").count()).toBeLessThan(60);
  // rows drawn by scrolling are not read out as new messages; the end of the list still is
  await expect(page.locator('[data-chunk][data-drawn="true"]').first()).toHaveAttribute("aria-live", "off");
  await expect(page.locator("[data-chunk]").last()).not.toHaveAttribute("aria-live", /.*/);

  // Scrolled up: the way back is one click, and a new turn streams in at the bottom.
  await expect(page.getByTestId("jump-to-latest")).toBeVisible();
  await page.getByTestId("jump-to-latest").click();
  await expect(lastReply).toBeInViewport();
  await expect(page.getByTestId("jump-to-latest")).toHaveCount(0);
  await sendPrompt(page, "Please give me a slow answer");
  const newPrompt = page.getByTestId("message-user").filter({ hasText: "Please give me a slow answer" });
  await expect(newPrompt).toHaveCount(1);
  const streaming = page.locator('[data-testid="message-assistant"][data-streaming="true"]');
  await expect(streaming).toContainText(slowStart, { timeout: 30_000 });
  await expect(streaming).toBeInViewport();
  const final = page.locator('[data-testid="message-assistant"][data-streaming="false"]').filter({ hasText: slowEnd });
  await expect(final).toHaveCount(1, { timeout: 60_000 });
  await expect(final).toBeInViewport();
  await expect(newPrompt).toHaveCount(1);
});

test("a session's last screen is in the page's HTML before any script runs, and the live list takes its place", async ({ page, browser }) => {
  test.setTimeout(120_000);
  const { ws, seed } = await signedInWithLongSession(page, "Petra Preview", 400);
  const url = `/w/${ws.slug}/s/${seed.sessionId}`;
  const lastReply = turnMarker(seed.turns);

  // Scripts off: what the server sent is all there is.
  const bare = await browser.newContext({ javaScriptEnabled: false, storageState: await page.context().storageState() });
  try {
    const still = await bare.newPage();
    await still.goto(url);
    const preview = still.getByTestId("conversation-preview");
    await expect(preview).toBeVisible();
    await expect(preview.getByTestId("message-assistant").filter({ hasText: lastReply })).toBeInViewport();
    await expect(preview.getByTestId("message-user").last()).toContainText(`step ${seed.turns} of the refactor`);
    // a picture: nothing in it takes a click or the focus, and no earlier turn is in the page
    expect(await preview.getAttribute("inert")).not.toBeNull();
    await expect(still.getByTestId("message-user").filter({ hasText: "Please do step 1 of the refactor" })).toHaveCount(0);
    await expect(still.getByText("Loading the conversation")).toHaveCount(0);
  } finally {
    await bare.close();
  }

  // With scripts, the live list replaces the picture: the same last reply, once, in a list that works.
  await page.goto(url);
  await expect(page.getByTestId("conversation-earlier")).toBeAttached();
  await expect(page.getByTestId("conversation-preview")).toHaveCount(0);
  await expect(page.getByTestId("message-assistant").filter({ hasText: lastReply })).toHaveCount(1);
  await expect(page.getByTestId("message-assistant").filter({ hasText: lastReply })).toBeInViewport();
});

import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

// An approval card draws a skeleton of the diff's height first and mounts Monaco's diff editor a
// frame later. Monaco measured its content before its first layout, when every line wrapped at a
// width near zero, and the editor grew to its maximum for a frame or more before it shrank back:
// the card's buttons jumped down and back, and a click on Allow in that moment landed in the
// editor (a CI run lost its approval that way). The demo tour's first card is a Write of 7 lines.

test("an approval card keeps its height while its diff editor mounts, so Allow stays under the pointer", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  await startSessionInNewWorkspace(ada, `Layout ${stamp}`, "default");
  // Every height the diff's box takes from the moment it is in the page.
  await ada.evaluate(() => {
    const w = window as unknown as { __diffHeights: number[] };
    w.__diffHeights = [];
    const seen = new WeakSet<Element>();
    const sizes = new ResizeObserver((entries) => {
      for (const e of entries) w.__diffHeights.push(Math.round(e.borderBoxSize[0]!.blockSize));
    });
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-testid="approval-diff"]')) {
        if (seen.has(el)) continue;
        seen.add(el);
        sizes.observe(el);
      }
    }).observe(document.body, { childList: true, subtree: true });
  });

  await sendPrompt(ada, "tour");
  const write = ada.getByTestId("session-approvals").locator('[data-testid="approval-card"][data-status="pending"][data-tool="Write"]');
  await expect(write).toHaveCount(1, { timeout: 45_000 });
  await expect(write.getByTestId("approval-diff").locator(".line-insert").first()).toBeVisible({ timeout: 30_000 });
  await ada.waitForTimeout(500); // any late re-measure
  const settled = Math.round((await write.getByTestId("approval-diff").boundingBox())!.height);
  const heights = await ada.evaluate(() => (window as unknown as { __diffHeights: number[] }).__diffHeights);
  expect(heights.length, "the diff's box was observed").toBeGreaterThan(0);
  expect(Math.max(...heights), `heights seen: ${heights.join(", ")}; settled at ${settled}`).toBeLessThanOrEqual(settled + 4);

  await write.getByTestId("approve-button").click();
  await expect(write).toHaveCount(0);
});

import { expect, test, createWorkspace, sendPrompt, signedInPage, startSession, uniqueEmail, type Locator, type Page } from "./fixtures";

// The demo model's tour (server/model-server/demo-scenarios.ts): Read conduit-demo.md, Write it
// when missing, Edit its status line, then a Bash command; each asks for approval in default mode.
const demoFile = "conduit-demo.md";
const lineToChange = "Every change to it went through an approval with a diff.";
const beasLine = "Bea rewrote this line in the review.";

function pendingCard(page: Page, tool?: string): Locator {
  const toolFilter = tool ? `[data-tool="${tool}"]` : "";
  return page.locator(`[data-testid="approval-card"][data-status="pending"]${toolFilter}`);
}

/** Allows pending approvals of other tools (the tour's Write) until one for `tool` is waiting. */
async function allowUntil(page: Page, tool: string): Promise<Locator> {
  for (let i = 0; i < 5; i++) {
    const first = pendingCard(page).first();
    await expect(first).toBeVisible({ timeout: 45_000 });
    if ((await first.getAttribute("data-tool")) === tool) return first;
    const id = await first.getAttribute("data-approval-id");
    await first.getByTestId("approve-button").click();
    await expect(page.locator(`[data-testid="approval-card"][data-approval-id="${id}"]`)).not.toHaveAttribute(
      "data-status",
      "pending",
    );
  }
  throw new Error(`no ${tool} approval arrived`);
}

/** Seconds left on a card's countdown, or null when it has no deadline. */
async function secondsLeft(card: Locator): Promise<number | null> {
  const countdown = card.getByTestId("approval-countdown");
  await expect(countdown).toHaveText(/expires in \d+:\d{2}|no deadline/);
  const remaining = await countdown.getAttribute("data-remaining");
  return remaining === "none" || remaining === null ? null : Number(remaining);
}

test("an Edit is reviewed in another member's inbox, changed in the diff and allowed; a pending approval survives a reload", async ({
  browser,
}, testInfo) => {
  test.setTimeout(240_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const bea = await signedInPage(browser, uniqueEmail("bea"), `Bea ${stamp}`);

  try {
    // Ada owns a workspace; Bea is an editor, so approvals are routed to her too.
    const ws = await createWorkspace(ada, `Approvals ${stamp}`, { page: bea, role: "editor" });

    await ada.goto(`/w/${ws.slug}`);
    await startSession(ada, "default");

    // Bea watches her inbox; the header badge links to it.
    await bea.getByTestId("approval-inbox-link").click();
    await expect(bea).toHaveURL(/\/inbox$/);
    await expect(bea.locator('[data-testid="approval-inbox"][data-loaded="true"]')).toBeVisible();
    await expect(bea.getByTestId("approval-count")).toHaveText("0");

    // Ada runs the tour. Bea allows the Write that creates the file, then gets the Edit as a diff.
    await sendPrompt(ada, "tour");
    const edit = await allowUntil(bea, "Edit");
    await expect(bea.getByTestId("approval-count")).toHaveText("1");
    await expect(edit).toContainText(demoFile);
    // the CLI's description of an Edit is only the file's name, which the card already shows
    await expect(edit.getByTestId("approval-reason")).toHaveCount(0);
    await expect(edit.getByTestId("approval-countdown")).toHaveText(/expires in \d+:\d{2}|no deadline/);
    const diff = edit.getByTestId("approval-diff");
    await expect(diff).toBeVisible();
    await expect(diff.locator(".editor.modified")).toBeVisible({ timeout: 30_000 });
    await expect(edit.getByTestId("hunk-accept").first()).toBeVisible();
    await expect(edit.getByTestId("hunk-accept")).toHaveCount(await edit.getByTestId("hunk-reject").count());

    // Bea rewrites one line on the right side of the diff, then allows.
    await diff.locator(".editor.modified .view-line").filter({ hasText: lineToChange }).click();
    await bea.keyboard.press("End");
    await bea.keyboard.press("Shift+Home");
    await bea.keyboard.type(beasLine);
    await bea.keyboard.press("Escape");
    await expect(diff.locator(".editor.modified")).toContainText(beasLine);
    await expect(edit.getByTestId("approval-diff-edited")).toBeVisible();
    const editId = await edit.getAttribute("data-approval-id");
    await edit.getByTestId("approve-button").click();
    const decided = bea.locator(`[data-testid="approval-card"][data-approval-id="${editId}"]`);
    await expect(decided).toHaveAttribute("data-status", "allowed");
    await expect(decided.getByTestId("approval-error")).toHaveCount(0);

    // The tour's Bash comes next; Bea allows it and the turn ends.
    const bash = await allowUntil(bea, "Bash");
    await expect(bash.getByTestId("approval-command")).toBeVisible();
    await bash.getByTestId("approve-button").click();
    await expect(ada.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
    await expect(bea.getByTestId("approval-count")).toHaveText("0");

    // Read the file back through the server: the next tour starts by reading it.
    await sendPrompt(ada, "tour");
    const read = ada.locator('[data-testid="tool-card"][data-tool="Read"]').last();
    await expect(read).toHaveAttribute("data-state", "done", { timeout: 45_000 });
    await read.getByRole("button").first().click();
    await expect(read.getByTestId("tool-result")).toContainText(beasLine);
    await expect(read.getByTestId("tool-result")).not.toContainText(lineToChange);

    // That tour proposes another Edit. It waits in Bea's inbox, and a reload keeps it and its clock.
    const next = pendingCard(bea, "Edit").first();
    await expect(next).toBeVisible({ timeout: 45_000 });
    await expect(bea.getByTestId("approval-count")).toHaveText("1");
    const nextId = await next.getAttribute("data-approval-id");
    const before = await secondsLeft(next);
    const reloadedAt = Date.now();
    await bea.reload();
    const again = bea.locator(`[data-testid="approval-card"][data-approval-id="${nextId}"]`);
    await expect(again).toHaveAttribute("data-status", "pending");
    await expect(again.getByTestId("approval-diff")).toBeVisible();
    const after = await secondsLeft(again);
    if (before === null) {
      expect(after).toBeNull();
    } else {
      const elapsed = Math.ceil((Date.now() - reloadedAt) / 1000);
      expect(after).not.toBeNull();
      expect(after!).toBeLessThanOrEqual(before);
      expect(after!).toBeGreaterThanOrEqual(before - elapsed - 2);
    }

    const shot = testInfo.outputPath("approval-inbox.png");
    await bea.screenshot({ path: shot, fullPage: true });
    await testInfo.attach("approval-inbox", { path: shot, contentType: "image/png" });

    // Leave nothing waiting: deny and stop the turn.
    await again.getByTestId("deny-message").fill("Not now, thanks.");
    await again.getByTestId("deny-stop-button").click();
    await expect(again).toHaveAttribute("data-status", "denied");
    await expect(bea.getByTestId("approval-count")).toHaveText("0");
  } finally {
    await ada.context().close();
    await bea.context().close();
  }
});

import { expect, test, createWorkspace, sendPrompt, signedInPage, uniqueEmail, type Page } from "./fixtures";

// The demo model's slow scenario ends its answer with this sentence (server/model-server/demo-scenarios.ts).
const slowEnd = "the stream simply finishes with this sentence.";
const slowStart = "This answer streams slowly on purpose";

/** The number of finished turns the page shows. */
function turnEnds(page: Page) {
  return page.getByTestId("turn-end");
}

test("two people share a live session: stream, reload, mode switch, stop", async ({ browser }, testInfo) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const bea = await signedInPage(browser, uniqueEmail("bea"), `Bea ${stamp}`);

  try {
    // Ada makes a workspace and adds Bea as an editor.
    const ws = await createWorkspace(ada, `Live ${stamp}`, { page: bea, role: "editor" });

    // Ada starts a session from the workspace page.
    await ada.goto(`/w/${ws.slug}`);
    await expect(ada.getByTestId("session-list")).toBeVisible();
    await ada.getByTestId("session-new").click();
    await expect(ada.getByTestId("session-new-mode")).toBeFocused();
    await ada.getByTestId("session-new-mode").selectOption("default");
    await ada.getByTestId("session-new-submit").click();
    await expect(ada).toHaveURL(new RegExp(`/w/${ws.slug}/s/[^/]+$`));
    await expect(ada.getByTestId("session-view")).toBeVisible();
    const sessionUrl = ada.url();
    const sessionId = sessionUrl.split("/").pop()!;

    // Bea sees it in the list and opens it.
    await bea.goto(`/w/${ws.slug}`);
    const row = bea.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`);
    await expect(row).toBeVisible();
    await expect(row).toHaveAttribute("data-status", /^(starting|idle|running|stopped)$/);
    await expect(row.getByTestId("session-row-creator")).toHaveText(`Ada ${stamp}`);
    await row.getByTestId("session-link").click();
    await expect(bea).toHaveURL(sessionUrl);
    await expect(bea.getByTestId("session-view")).toBeVisible();

    // Each sees the other.
    await expect(ada.getByTestId("presence")).toContainText(`Bea ${stamp}`);
    await expect(bea.getByTestId("presence")).toContainText(`Ada ${stamp}`);

    // Ada prompts the slow scenario; Bea sees the prompt, attributed, and the text while it streams.
    await sendPrompt(ada, "Please give me a slow answer");
    const beaPrompt = bea.getByTestId("message-user");
    await expect(beaPrompt).toHaveCount(1);
    await expect(beaPrompt).toHaveAttribute("data-author", `Ada ${stamp}`);
    await expect(beaPrompt).toContainText("Please give me a slow answer");
    const beaStreaming = bea.locator('[data-testid="message-assistant"][data-streaming="true"]');
    await expect(beaStreaming).toContainText(slowStart);
    await expect(bea.getByTestId("session-status")).toHaveAttribute("data-status", "running");

    // Ada reloads mid-stream and gets the whole conversation back, once.
    await expect(ada.locator('[data-testid="message-assistant"][data-streaming="true"]')).toContainText(slowStart);
    await ada.reload();
    await expect(ada.getByTestId("session-view")).toBeVisible();
    await expect(ada.getByTestId("message-user")).toHaveCount(1);
    await expect(ada.getByTestId("message-user")).toContainText("Please give me a slow answer");
    await expect(ada.getByTestId("message-assistant").first()).toContainText(slowStart);
    const adaFinal = ada
      .locator('[data-testid="message-assistant"][data-streaming="false"]')
      .filter({ hasText: slowEnd });
    await expect(adaFinal).toHaveCount(1, { timeout: 30_000 });
    await expect(ada.locator('[data-testid="message-assistant"][data-streaming="true"]')).toHaveCount(0);
    await expect(turnEnds(ada)).toHaveCount(1);
    await expect(ada.getByTestId("message-user")).toHaveCount(1);
    // Bea ends with the same conversation.
    await expect(bea.locator('[data-testid="message-assistant"]').filter({ hasText: slowEnd })).toHaveCount(1);
    await expect(turnEnds(bea)).toHaveCount(1);
    await expect(ada.getByTestId("session-cost")).toContainText("$");

    // Ada switches to acceptEdits: the picker shows it once the CLI confirmed it, for both.
    await expect(ada.getByTestId("session-status")).toHaveAttribute("data-status", "idle");
    await ada.getByTestId("mode-select").selectOption("acceptEdits");
    await expect(ada.getByTestId("mode-select")).toHaveValue("acceptEdits");
    await expect(ada.getByTestId("mode-select")).toBeEnabled();
    await expect(bea.getByTestId("mode-select")).toHaveValue("acceptEdits");

    // The tour proposes an Edit; in acceptEdits it runs without an approval.
    await sendPrompt(ada, "Show me the tour");
    const edit = ada.locator('[data-testid="tool-card"][data-tool="Edit"]');
    await expect(edit).toHaveAttribute("data-state", "done", { timeout: 45_000 });
    await edit.getByRole("button").first().click();
    await expect(edit.getByTestId("tool-result")).toHaveAttribute("data-error", "false");
    await expect(
      ada.locator('[data-testid="tool-card"][data-tool="Edit"] [data-testid="approval-pending"]'),
    ).toHaveCount(0);
    // The tour's Bash may still ask (acceptEdits covers edits only); end the turn either way.
    await expect(turnEnds(ada).nth(1).or(ada.getByTestId("approval-pending")).first()).toBeVisible({ timeout: 45_000 });
    if ((await turnEnds(ada).count()) < 2) {
      await ada.getByTestId("interrupt-button").click();
      await expect(turnEnds(ada)).toHaveCount(2, { timeout: 30_000 });
    }

    // Stop interrupts a slow stream, for everyone.
    await expect(ada.getByTestId("session-status")).toHaveAttribute("data-status", "idle", { timeout: 30_000 });
    await sendPrompt(ada, "another slow one please");
    await expect(ada.locator('[data-testid="message-assistant"][data-streaming="true"]')).toContainText(slowStart);
    await ada.getByTestId("interrupt-button").click();
    const interrupted = ada.locator('[data-testid="turn-end"][data-interrupted="true"]');
    await expect(interrupted).toHaveCount(1, { timeout: 30_000 });
    await expect(bea.locator('[data-testid="turn-end"][data-interrupted="true"]')).toHaveCount(1);
    await expect(ada.locator('[data-testid="message-assistant"]').filter({ hasText: slowEnd })).toHaveCount(1);
    await expect(ada.getByTestId("session-status")).toHaveAttribute("data-status", "idle", { timeout: 30_000 });

    // The raw tab lists the log as NDJSON lines.
    await ada.getByTestId("raw-tab").click();
    await expect(ada.getByTestId("raw-line").first()).toBeVisible();
    const firstLine = await ada.getByTestId("raw-line").first().getAttribute("data-seq");
    expect(Number(firstLine)).toBe(1);
    await ada.getByRole("tab", { name: "Conversation" }).click();

    const shot = testInfo.outputPath("session-view.png");
    await bea.screenshot({ path: shot, fullPage: true });
    await testInfo.attach("session-view", { path: shot, contentType: "image/png" });
  } finally {
    await ada.context().close();
    await bea.context().close();
  }
});

test("a viewer watches but cannot prompt; a non-member gets 404", async ({ browser }) => {
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("own"), `Owner ${stamp}`);
  const viewer = await signedInPage(browser, uniqueEmail("view"), `Viewer ${stamp}`);
  const stranger = await signedInPage(browser, uniqueEmail("str"), `Stranger ${stamp}`);
  try {
    const ws = await createWorkspace(owner, `Watch ${stamp}`, { page: viewer, role: "viewer" });

    await owner.goto(`/w/${ws.slug}`);
    await owner.getByTestId("session-new").click();
    await owner.getByTestId("session-new-submit").click();
    await expect(owner).toHaveURL(/\/s\/[^/]+$/);
    const sessionPath = new URL(owner.url()).pathname;

    await viewer.goto(`/w/${ws.slug}`);
    await expect(viewer.getByTestId("session-new")).toHaveCount(0);
    await expect(viewer.getByTestId("session-new-refusal")).toBeVisible();
    await expect(viewer.getByTestId("session-row")).toHaveCount(1);
    await viewer.goto(sessionPath);
    await expect(viewer.getByTestId("prompt-input")).toBeDisabled();
    await expect(viewer.getByTestId("prompt-disabled-reason")).toContainText("viewer");
    await expect(viewer.getByTestId("mode-select")).toBeDisabled();
    await expect(viewer.getByTestId("interrupt-button")).toBeDisabled();

    const page = await stranger.goto(sessionPath);
    expect(page?.status()).toBe(404);
    const api = await stranger.request.get(`/api/workspaces/${ws.slug}/sessions`);
    expect(api.status()).toBe(404);
  } finally {
    await owner.context().close();
    await viewer.context().close();
    await stranger.context().close();
  }
});

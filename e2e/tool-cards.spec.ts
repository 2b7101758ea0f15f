import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

test("an Edit card marks only the changed words; a TodoWrite is a checklist, pinned above the prompt box", async ({
  browser,
}) => {
  test.setTimeout(150_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("tia"), `Tia ${stamp}`);
  try {
    await startSessionInNewWorkspace(page, `Cards ${stamp}`, "acceptEdits");

    // The demo tour (acceptEdits: no approval for the file tools) writes conduit-demo.md, then edits
    // its "Status: draft" line to "Status: reviewed".
    await sendPrompt(page, "take the tour");
    const edit = page.locator('[data-testid="tool-card"][data-tool="Edit"]');
    await expect(edit).toHaveAttribute("data-state", "done", { timeout: 60_000 });
    await edit.getByRole("button", { expanded: false }).click();
    const diff = edit.getByTestId("tool-diff");
    // the CLI's own patch, with context lines around the change
    await expect(edit.getByTestId("file-diff")).toHaveAttribute("data-source", "patch");
    await expect(diff.locator('[data-testid="diff-row"][data-type="del"]')).toHaveText([/Status: draft/]);
    await expect(diff.locator('[data-testid="diff-row"][data-type="add"]')).toHaveText([/Status: reviewed/]);
    await expect(diff.locator('[data-testid="diff-word"][data-side="del"]')).toHaveText(["draft"]);
    await expect(diff.locator('[data-testid="diff-word"][data-side="add"]')).toHaveText(["reviewed"]);
    expect(await diff.locator('[data-testid="diff-row"][data-type="context"]').count()).toBeGreaterThan(0);
    await expect(edit.getByTestId("diff-stats")).toHaveText("+1 −1");

    // the Write of a new file is all added, and its link opens the file in the Files drawer
    const write = page.locator('[data-testid="tool-card"][data-tool="Write"]');
    await write.getByRole("button", { expanded: false }).click();
    await expect(write.getByTestId("file-diff")).toHaveAttribute("data-created", "true");
    await expect(write.locator('[data-testid="diff-row"][data-type="del"]')).toHaveCount(0);
    // the tour goes on below (rows arrive and the page follows them, so a pointer aimed at the link
    // can land beside it): the link is taken from the keyboard
    await edit.getByTestId("tool-open-file").press("Enter");
    await expect(page.getByTestId("files-pane")).toBeVisible();
    await expect(page.locator('[data-testid="editor"][data-path="conduit-demo.md"]')).toBeVisible({ timeout: 20_000 });
    await page.getByTestId("files-toggle").click();

    // The todo scenario: two TodoWrite calls; the latest list is pinned above the prompt box.
    // the tour's shell command may ask first: allow it here, until the turn ends
    await expect(async () => {
      const pending = page.locator('[data-testid="approval-card"][data-status="pending"]');
      if ((await pending.count()) > 0) await pending.first().getByTestId("approve-button").click();
      await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: 60_000 });
    await sendPrompt(page, "show me your todo list");
    await expect(page.getByTestId("turn-end")).toHaveCount(2, { timeout: 60_000 });
    const cards = page.locator('[data-testid="tool-card"][data-tool="TodoWrite"]');
    await expect(cards).toHaveCount(2);
    await expect(cards.first().getByTestId("todo-item")).toHaveCount(3);
    await expect(cards.first().getByTestId("todo-item").first()).toHaveAttribute("data-status", "in_progress");
    const pinned = page.getByTestId("pinned-todos");
    await expect(pinned.getByTestId("todo-item")).toHaveCount(3);
    await expect(pinned.getByTestId("todo-item").nth(0)).toHaveAttribute("data-status", "completed");
    await expect(pinned.getByTestId("todo-item").nth(1)).toHaveAttribute("data-status", "in_progress");
    await expect(pinned.getByTestId("todo-item").nth(1)).toContainText("Writing the release notes");
    await expect(pinned).toContainText("1/3 done");
    // collapsible, keyboard reachable
    await pinned.getByRole("button").press("Enter");
    await expect(pinned.getByTestId("todo-list")).toHaveCount(0);
  } finally {
    await page.context().close();
  }
});

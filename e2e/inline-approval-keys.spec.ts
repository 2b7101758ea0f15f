import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace, type Page } from "./fixtures";

// The demo model's "write" scenario (server/model-server/demo-scenarios.ts) asks to Write
// conduit-hello.md, then says whether the file was written. In default mode every Write asks.

async function newSession(page: Page, stamp: string): Promise<void> {
  await startSessionInNewWorkspace(page, `Keys ${stamp}`, "default");
}

test("inline approval cards answer the inbox's keys, but never while typing in the prompt box", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  try {
    await newSession(ada, stamp);
    const input = ada.getByTestId("prompt-input");
    const inline = ada.getByTestId("session-approvals");
    const pending = inline.locator('[data-testid="approval-card"][data-status="pending"]');
    const replies = ada.getByTestId("message-assistant");

    // 1. The card waits; keys typed in the prompt box are text, not decisions.
    await sendPrompt(ada, "write a file");
    await expect(pending).toHaveCount(1, { timeout: 45_000 });
    const first = pending.first();
    await expect(first.getByTestId("approve-button")).toHaveAttribute("aria-keyshortcuts", "a");
    await expect(first.getByTestId("deny-button")).toHaveAttribute("aria-keyshortcuts", "d");
    await expect(first.getByTestId("deny-message")).toHaveAttribute("aria-keyshortcuts", "Shift+D");
    await input.focus();
    await ada.keyboard.type("ad");
    await expect(input).toHaveValue("ad");
    await expect(pending).toHaveCount(1);
    // Nor in the card's own message box.
    await first.getByTestId("deny-message").focus();
    await ada.keyboard.type("da");
    await expect(first.getByTestId("deny-message")).toHaveValue("da");
    await expect(pending).toHaveCount(1);
    await first.getByTestId("deny-message").fill("");
    await input.fill("");

    // 2. Nothing focused: `a` allows the first waiting card, and the file is written.
    await input.blur();
    await ada.keyboard.press("a");
    await expect(pending).toHaveCount(0);
    await expect(replies.last()).toContainText("now exists in the workspace", { timeout: 45_000 });
    await expect(ada.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });

    // 3. The next Write: Shift+D goes to the focused card's message box, `d` there is text;
    //    back on the card, `d` denies it with that message.
    await sendPrompt(ada, "write it again");
    await expect(pending).toHaveCount(1, { timeout: 45_000 });
    const second = pending.first();
    await second.focus();
    await ada.keyboard.press("Shift+D");
    await expect(second.getByTestId("deny-message")).toBeFocused();
    await expect(second.getByTestId("deny-message")).toHaveValue("");
    await ada.keyboard.type("not now");
    await second.focus();
    await ada.keyboard.press("d");
    await expect(pending).toHaveCount(0);
    await expect(replies.last()).toContainText("The file was not written", { timeout: 45_000 });
    await expect(replies.last()).toContainText("not now");
    await expect(ada.getByTestId("turn-end")).toHaveCount(2, { timeout: 45_000 });
  } finally {
    await ada.context().close();
  }
});

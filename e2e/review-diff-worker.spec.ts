import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

// Monaco computes a diff in its editor worker and stops that worker when the page holds no text
// model, so each approval card that went away took the worker along and the next card started a
// new one (100–580 ms of a core per page, per approval). The demo model's tour
// (server/model-server/demo-scenarios.ts) asks for a Write, an Edit and a Bash in turn; in
// default mode each waits on the session page as an inline card, shown one after another.

test("the review diff's editor worker starts once per page, not once per approval card", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  try {
    await startSessionInNewWorkspace(ada, `Worker ${stamp}`, "default");

    const workers: string[] = [];
    ada.on("worker", (worker) => workers.push(worker.url()));
    const pending = ada.getByTestId("session-approvals").locator('[data-testid="approval-card"][data-status="pending"]');

    await sendPrompt(ada, "tour");
    // The Write's diff is computed (its lines marked inserted), then the card goes.
    const write = pending.and(ada.locator('[data-tool="Write"]'));
    await expect(write).toHaveCount(1, { timeout: 45_000 });
    await expect(write.getByTestId("approval-diff").locator(".line-insert").first()).toBeVisible({ timeout: 30_000 });
    await write.getByTestId("approve-button").click();
    await expect(write).toHaveCount(0);
    expect(workers, "the first diff started the editor worker").toHaveLength(1);

    // The Edit's card comes after the Write's has gone (no diff on the page in between).
    const edit = pending.and(ada.locator('[data-tool="Edit"]'));
    await expect(edit).toHaveCount(1, { timeout: 45_000 });
    await expect(edit.getByTestId("approval-diff").locator(".line-delete, .char-delete").first()).toBeVisible({ timeout: 30_000 });
    expect(workers, "the second diff was computed by the same worker").toHaveLength(1);
    await edit.getByTestId("approve-button").click();

    const bash = pending.and(ada.locator('[data-tool="Bash"]'));
    await expect(bash).toHaveCount(1, { timeout: 45_000 });
    await bash.getByTestId("approve-button").click();
    await expect(ada.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
  } finally {
    await ada.context().close();
  }
});

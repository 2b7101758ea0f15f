import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

// Issue 38, defects 1 and 7, against the real CLI and the demo model
// (server/model-server/demo-scenarios.ts).
//
// 1. "make a plan for this" runs the demo's plan scenario: the model enters plan mode and calls
//    ExitPlanMode with its plan in the call. CLI 2.1.332 asks `can_use_tool` with `input: {}` (it
//    keeps a plan only from a plan file), so the card used to show the sentence before the call
//    ("Here is my plan. Approve it…") and the inbox only "Plan ready for review".
// 7. The first diff after a page load showed "Loading editor…" for seconds while Allow and `a`
//    already worked: an approver could allow a file they had not seen.

const planHeading = "Plan: tidy the demo workspace";

test("a plan approval shows the plan itself, on the session's card and in the inbox", async ({ browser }) => {
  test.setTimeout(150_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const errors: string[] = [];
  ada.on("pageerror", (error) => errors.push(error.message));
  await startSessionInNewWorkspace(ada, `Plans ${stamp}`, "default");

  await sendPrompt(ada, "make a plan for this");
  const card = ada.getByTestId("session-approvals").locator('[data-testid="approval-card"][data-tool="ExitPlanMode"]');
  await expect(card).toHaveCount(1, { timeout: 45_000 });
  const plan = card.getByTestId("approval-plan");
  await expect(plan).toContainText(planHeading);
  await expect(plan).toContainText("conduit-hello.md");
  await expect(plan).toContainText("List the workspace to check the result.");
  await expect(plan).not.toContainText("Here is my plan");
  // where the text came from is said, not left to guess
  await expect(card.getByTestId("approval-plan-note")).toContainText("the plan the model wrote");

  // The inbox: the entry's line names the plan, the card holds it, and it can be approved there.
  await ada.goto("/inbox");
  const inboxCard = ada.getByTestId("approval-inbox").locator('[data-testid="approval-card"][data-tool="ExitPlanMode"][data-status="pending"]');
  await expect(inboxCard).toHaveCount(1, { timeout: 20_000 });
  await expect(inboxCard.locator("header")).toContainText(planHeading);
  await expect(inboxCard.locator("header")).not.toContainText("Plan ready for review");
  await expect(inboxCard.getByTestId("approval-plan")).toContainText("Add a status line to");
  await inboxCard.getByTestId("approve-button").click();
  const decided = ada.getByTestId("approval-inbox").locator('[data-testid="approval-card"][data-tool="ExitPlanMode"][data-status="allowed"]');
  await expect(decided).toHaveCount(1, { timeout: 20_000 });
  // the decided entry still names and holds the plan, after a reload too (read from the session's log)
  await ada.reload();
  await expect(decided.locator("header")).toContainText(planHeading, { timeout: 20_000 });
  await decided.getByRole("button", { name: "Details" }).click();
  await expect(decided.getByTestId("approval-plan")).toContainText("List the workspace to check the result.");
  expect(errors).toEqual([]);
});

test("the first diff after a page load shows its lines before Allow can act, and raises no page error", async ({ browser }) => {
  test.setTimeout(150_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  const errors: string[] = [];
  ada.on("pageerror", (error) => errors.push(error.message));
  const monaco: string[] = [];
  ada.on("request", (request) => {
    if (request.url().includes("/monaco/vs/")) monaco.push(request.url());
  });
  await startSessionInNewWorkspace(ada, `First diff ${stamp}`, "default");

  // The editor is fetched while the session page idles, before any approval needs it.
  await expect.poll(() => monaco.length, { timeout: 15_000, message: "Monaco preloaded on the session page" }).toBeGreaterThan(0);

  // From the first moment a Write card's Allow button is in the page and enabled: is the file's
  // text in its diff? (A fresh load of the page, so nothing of the editor is in memory.)
  await ada.reload();
  await expect(ada.getByTestId("session-view")).toBeVisible();
  await ada.evaluate(() => {
    const w = window as unknown as { __allowSaw: string | null };
    w.__allowSaw = null;
    const check = () => {
      if (w.__allowSaw !== null) return;
      const card = document.querySelector('[data-testid="approval-card"][data-tool="Write"][data-status="pending"]');
      const allow = card?.querySelector<HTMLButtonElement>('[data-testid="approve-button"]');
      if (!card || !allow || allow.disabled) return;
      w.__allowSaw = card.querySelector('[data-testid="approval-diff"]')?.textContent ?? "";
    };
    new MutationObserver(check).observe(document.body, { childList: true, subtree: true, attributes: true });
  });

  await sendPrompt(ada, "write a file");
  const write = ada.getByTestId("session-approvals").locator('[data-testid="approval-card"][data-status="pending"][data-tool="Write"]');
  await expect(write).toHaveCount(1, { timeout: 45_000 });
  const seen = await ada.evaluate(() => (window as unknown as { __allowSaw: string | null }).__allowSaw);
  expect(seen, "the diff's lines were in the card when Allow could first act").toContain("Hello from Conduit");
  await expect(write.getByTestId("approval-diff")).not.toContainText("Loading editor");

  // Monaco takes over once it has computed the diff (its inserted lines marked).
  await expect(write.getByTestId("approval-diff").locator(".line-insert").first()).toBeVisible({ timeout: 30_000 });
  await expect(write.getByTestId("approval-diff-plain")).toHaveCount(0);
  await write.getByTestId("approve-button").click();
  await expect(write).toHaveCount(0);
  await expect(ada.getByTestId("turn-end")).toHaveCount(1, { timeout: 45_000 });
  expect(errors, "no uncaught page error").toEqual([]);
});

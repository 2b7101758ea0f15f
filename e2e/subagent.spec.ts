import { expect, test, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

// The real CLI runs an Agent call's subagent in the background: the parent turn ends at once, the
// subagent's own frames (parent_tool_use_id = the Agent call) stream after it, its permission
// questions carry its agent_id (the card says a subagent asks, and for which task), and its report
// arrives in an extra turn the CLI starts without a prompt.
test("a subagent's steps stream nested under its Agent call, its approval names it, and its report follows in a turn of its own", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("sam"), `Sam ${stamp}`);
  await startSessionInNewWorkspace(page, `Agents ${stamp}`);

  await sendPrompt(page, "delegate this to an agent");
  const agent = page.locator('[data-testid="tool-card"][data-tool="Agent"]');
  await expect(agent).toHaveCount(1, { timeout: 60_000 });
  const stream = page.getByTestId("subagent-stream");
  await expect(stream).toHaveCount(1, { timeout: 30_000 });
  const toolUseId = await stream.getAttribute("data-parent");
  expect(toolUseId).toMatch(/^toolu_/);
  // the subagent asks to write its note: the card names the subagent and its task, not the main agent
  const card = page.locator('[data-testid="approval-card"][data-tool="Bash"]');
  await expect(card).toHaveCount(1, { timeout: 30_000 });
  await expect(card.getByTestId("approval-subagent")).toContainText("Survey the demo file");
  await expect(card).toHaveAttribute("aria-label", /from a subagent/);
  await expect(card).toContainText("demo-survey.txt");
  await card.getByTestId("approve-button").click();
  // answered, the card leaves the conversation; the log says who allowed it
  await expect(card).toHaveCount(0, { timeout: 30_000 });
  await expect(page.getByText(`Sam ${stamp} allowed Bash.`)).toHaveCount(1);
  // the subagent's own tool calls and text are inside the stream, not in the main conversation
  await expect(stream).toHaveAttribute("data-done", "true", { timeout: 30_000 });
  await stream.getByRole("button", { expanded: false }).click();
  await expect(stream.locator('[data-testid="tool-card"][data-tool="Read"]')).toHaveCount(1);
  await expect(stream.locator('[data-testid="tool-card"][data-tool="Bash"]')).toHaveCount(1);
  await expect(stream).toContainText("does not exist yet");
  await expect(stream).toContainText("Noted in");
  await expect(page.locator('[data-testid="tool-card"][data-tool="Read"]')).toHaveCount(1);
  // the report turn: the CLI's own second result, after the prompt's
  await expect(page.getByTestId("message-assistant").filter({ hasText: "The subagent reported back:" })).toHaveCount(
    1,
    {
      timeout: 30_000,
    },
  );
  await expect(page.getByTestId("turn-end")).toHaveCount(2, { timeout: 30_000 });
});

test("a background shell is listed above the prompt box while it runs, and Stop ends it", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const page = await signedInPage(browser, uniqueEmail("bo"), `Bo ${stamp}`);
  await startSessionInNewWorkspace(page, `Background ${stamp}`);

  await sendPrompt(page, "run something in the background");
  // the CLI runs a plain `sleep` without asking
  const bash = page.locator('[data-testid="tool-card"][data-tool="Bash"]');
  await expect(bash).toContainText("sleep 60", { timeout: 60_000 });

  const task = page.getByTestId("background-task");
  await expect(task).toHaveCount(1, { timeout: 30_000 });
  await expect(task).toContainText("Wait a minute in the background");
  await expect(task).toHaveAttribute("data-task-id", /\S/);
  await expect(page.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });
  // still listed after its turn ended: it runs on
  await expect(task).toHaveCount(1);

  await task.getByTestId("background-task-stop").click();
  await expect(page.getByTestId("background-tasks")).toHaveCount(0, { timeout: 30_000 });
  await expect(page.getByTestId("background-task-error")).toHaveCount(0);
});

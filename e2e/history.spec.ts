import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, sameOrigin, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

const dbFile = path.join(process.cwd(), "test-results/e2e-data/conduit.db");
const stored = (iso: string) => new Date(iso).toISOString().replace("Z", "+00:00");

/**
 * A past (stopped) session written the way the sidecar writes one: prompt and CLI lines in the
 * event log, the search text, a cost entry and a decided approval.
 */
function seedSession(
  db: Database.Database,
  input: {
    id: string;
    workspaceId: string;
    userId: string;
    prompt: string;
    reply: string;
    at: string;
    title?: null;
    status?: string;
  },
): void {
  const at = stored(input.at);
  db.prepare(
    `INSERT INTO Session (id, workspaceId, createdById, status, mode, title, searchText, createdAt, updatedAt, lastActivityAt)
     VALUES (?, ?, ?, ?, 'default', ?, ?, ?, ?, ?)`,
  ).run(
    input.id,
    input.workspaceId,
    input.userId,
    input.status ?? "stopped",
    input.title === null ? null : input.prompt.slice(0, 40),
    `${input.prompt}\n${input.reply}`.toLowerCase(),
    at,
    at,
    at,
  );
  const event = db.prepare(
    `INSERT INTO SessionEvent (sessionId, seq, kind, payload, commandId, userId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const uuid = `${input.id}-prompt`;
  event.run(input.id, 1, "prompt", JSON.stringify({ text: input.prompt, uuid }), `${input.id}-cmd`, input.userId, at);
  event.run(
    input.id,
    2,
    "cli",
    JSON.stringify({
      type: "assistant",
      uuid: `${input.id}-a`,
      session_id: "c",
      parent_tool_use_id: null,
      message: {
        id: `${input.id}-m`,
        role: "assistant",
        model: "claude-opus-5-5",
        content: [{ type: "text", text: input.reply }],
      },
    }),
    null,
    null,
    at,
  );
  event.run(
    input.id,
    3,
    "cli",
    JSON.stringify({
      type: "result",
      subtype: "success",
      uuid: `${input.id}-r`,
      session_id: "c",
      is_error: false,
      result: input.reply,
      num_turns: 1,
      duration_ms: 1200,
      duration_api_ms: 900,
      total_cost_usd: 0.0646,
      user_message_uuids: [uuid],
    }),
    null,
    null,
    at,
  );
  const cost = db.prepare(
    `INSERT INTO CostEntry (id, resultId, sessionId, userId, workspaceId, model, inputTokens, outputTokens, usd, numTurns, durationMs, at)
     VALUES (?, ?, ?, ?, ?, 'claude-opus-5-5', ?, ?, ?, ?, ?, ?)`,
  );
  cost.run(`${input.id}-c1`, `${input.id}-r`, input.id, input.userId, input.workspaceId, 0, 0, 0, 1, 1200, at);
  cost.run(
    `${input.id}-c2`,
    `${input.id}-r#claude-opus-5-5`,
    input.id,
    input.userId,
    input.workspaceId,
    1000,
    2000,
    0.0646,
    0,
    0,
    at,
  );
  db.prepare(
    `INSERT INTO Approval (id, sessionId, requestId, toolName, input, status, decidedById, decidedAt, createdAt)
     VALUES (?, ?, ?, 'Bash', '{}', 'allowed', ?, ?, ?)`,
  ).run(`${input.id}-ap`, input.id, `${input.id}-req`, input.userId, at, at);
}

test("history lists past sessions, searches them, opens a transcript and offers resume", async ({ page }) => {
  const email = uniqueEmail("historian");
  await signUpViaApi(page.request, email, "Historian");
  await signInViaUi(page, email);
  const created = await page.request.post("/api/workspaces", {
    headers: sameOrigin,
    data: { name: `History ${Date.now().toString(36)}` },
  });
  const workspace = ((await created.json()) as { data: { id: string; slug: string } }).data;
  const db = new Database(dbFile, { timeout: 10_000 });
  const user = db.prepare("SELECT id FROM User WHERE email = ?").get(email) as { id: string };
  const stamp = Date.now().toString(36);
  db.transaction(() => {
    seedSession(db, {
      id: `hist-a-${stamp}`,
      workspaceId: workspace.id,
      userId: user.id,
      prompt: "Explain the zebra module",
      reply: "The zebra module draws stripes.",
      at: "2026-11-02T10:00:00Z",
    });
    seedSession(db, {
      id: `hist-b-${stamp}`,
      workspaceId: workspace.id,
      userId: user.id,
      prompt: "Write a haiku about giraffes",
      reply: "Long necks in the sun.",
      at: "2026-11-03T10:00:00Z",
      title: null,
      status: "awaiting-approval",
    });
  })();
  db.close();

  await page.goto(`/history?workspace=${workspace.slug}`);
  const list = page.getByTestId("history-list");
  await expect(list.getByTestId("history-row")).toHaveCount(2);
  // a session without a title is named by its first prompt, as in the workspace's list; statuses read as words
  const giraffes = list.getByTestId("history-row").first();
  await expect(giraffes.getByRole("link")).toHaveText("Write a haiku about giraffes");
  await expect(giraffes.locator('[data-status="awaiting-approval"]')).toHaveText("awaiting approval");
  await page.getByTestId("history-search").fill("STRIPES");
  await page.getByTestId("history-submit").click();
  await expect(list.getByTestId("history-row")).toHaveCount(1);
  await expect(list.getByTestId("history-row")).toContainText("Explain the zebra");
  await expect(page.getByTestId("history-filter-user")).toBeVisible();

  await list.getByTestId("history-row").getByRole("link").click();
  const transcript = page.getByTestId("transcript-view");
  await expect(transcript).toContainText("Explain the zebra module");
  await expect(transcript).toContainText("The zebra module draws stripes.");
  await expect(page.getByTestId("transcript-turn-cost")).toHaveCount(1);
  await expect(page.getByTestId("transcript-total")).toHaveText("$0.0646");
  await expect(page.getByTestId("transcript-approval")).toContainText("allowed by Historian");

  await page.getByTestId("resume-button").click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace.slug}/s/hist-a-${stamp}$`));
  await expect(page.getByTestId("prompt-input")).toBeEnabled();
});

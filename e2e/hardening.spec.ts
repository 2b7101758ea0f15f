import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, sameOrigin, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

const dbFile = path.join(process.cwd(), "test-results/e2e-data/conduit.db");

test("a cross-site form post is refused, while the app's own requests work", async ({ page, baseURL }) => {
  const email = uniqueEmail("csrf");
  await signUpViaApi(page.request, email, "Csrf Target");
  // next-auth's own form-encoded POSTs pass: the page sends its Origin.
  await signInViaUi(page, email);

  // The app's own fetch (a JSON POST from the page) creates a workspace.
  const stamp = Date.now().toString(36);
  await page.getByTestId("workspace-create-name").fill(`Own ${stamp}`);
  const [created] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/api/workspaces") && r.request().method() === "POST"),
    page.getByTestId("workspace-create-submit").click(),
  ]);
  expect(created.status()).toBe(201);
  await expect(page).toHaveURL(/\/w\/[^/]+$/);

  // Another port of the same host is the same *site*, so the SameSite=Lax session cookie goes
  // along with a top-level form post from it. A text/plain form body can be valid JSON.
  const evil = `${new URL(baseURL!).protocol}//127.0.0.1:${Number(new URL(baseURL!).port) + 50}`;
  await page.route(`${evil}/**`, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<!doctype html><form method="post" enctype="text/plain" action="${baseURL}/api/workspaces">
        <input name='{"name":"Evil ${stamp}","x":"' value='"}'></form>
        <script>document.forms[0].submit()</script>`,
    }),
  );
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${baseURL}/api/workspaces` && r.request().method() === "POST"),
    page.goto(`${evil}/attack`),
  ]);
  expect(refused.status()).toBe(403);
  expect(await refused.json()).toMatchObject({
    error: { code: "forbidden", message: expect.stringContaining("another site") },
  });

  const list = await page.request.get("/api/workspaces");
  const names = ((await list.json()) as { data: { name: string }[] }).data.map((w) => w.name);
  expect(names).toContain(`Own ${stamp}`);
  expect(names).not.toContain(`Evil ${stamp}`);

  // An API client that names no origin is refused too; one that sends the public origin is not.
  expect((await page.request.post("/api/workspaces", { data: { name: `Bare ${stamp}` } })).status()).toBe(403);
  const typed = await page.request.post("/api/workspaces", {
    headers: { ...sameOrigin, "content-type": "text/plain" },
    data: JSON.stringify({ name: `Plain ${stamp}` }),
  });
  expect(typed.status()).toBe(415);
});

test("a session with a long log opens page by page and downloads whole, in order", async ({ page }) => {
  test.setTimeout(120_000);
  const email = uniqueEmail("pager");
  await signUpViaApi(page.request, email, "Pager");
  await signInViaUi(page, email);
  const created = await page.request.post("/api/workspaces", {
    headers: sameOrigin,
    data: { name: `Long ${Date.now().toString(36)}` },
  });
  const workspace = ((await created.json()) as { data: { id: string; slug: string } }).data;

  // A stopped session of 1,300 events, written as the sidecar writes them: three pages.
  const total = 1300;
  const sessionId = `long${Date.now().toString(36)}`;
  const at = new Date().toISOString().replace("Z", "+00:00");
  const db = new Database(dbFile, { timeout: 10_000 });
  try {
    const user = db.prepare("SELECT id FROM User WHERE email = ?").get(email) as { id: string };
    db.transaction(() => {
      db.prepare(
        `INSERT INTO Session (id, workspaceId, createdById, status, mode, createdAt, updatedAt, lastActivityAt)
         VALUES (?, ?, ?, 'stopped', 'default', ?, ?, ?)`,
      ).run(sessionId, workspace.id, user.id, at, at, at);
      const event = db.prepare(
        `INSERT INTO SessionEvent (sessionId, seq, kind, payload, commandId, userId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      event.run(
        sessionId,
        1,
        "prompt",
        JSON.stringify({ text: "Start the long one", uuid: "p1" }),
        "cmd-long-1",
        user.id,
        at,
      );
      for (let seq = 2; seq < total - 1; seq++) {
        const line = { type: "stream_event", event: { type: "ping", n: seq }, session_id: "c", uuid: `s${seq}` };
        event.run(sessionId, seq, "cli", JSON.stringify(line), null, null, at);
      }
      const assistant = {
        type: "assistant",
        uuid: "a-last",
        session_id: "c",
        parent_tool_use_id: null,
        message: {
          id: "m-last",
          role: "assistant",
          model: "claude-test",
          content: [{ type: "text", text: "Every page arrived." }],
        },
      };
      event.run(sessionId, total - 1, "cli", JSON.stringify(assistant), null, null, at);
      const result = {
        type: "result",
        subtype: "success",
        uuid: "r-last",
        session_id: "c",
        is_error: false,
        result: "Every page arrived.",
        num_turns: 1,
        duration_ms: 1000,
        duration_api_ms: 900,
        total_cost_usd: 0,
        user_message_uuids: ["p1"],
      };
      event.run(sessionId, total, "cli", JSON.stringify(result), null, null, at);
    })();
  } finally {
    db.close();
  }

  // The page opens at the log's last page: the end shows first.
  await page.goto(`/w/${workspace.slug}/s/${sessionId}`);
  await expect(page.getByTestId("message-assistant")).toContainText("Every page arrived.");
  await expect(page.getByTestId("turn-end")).toHaveCount(1);
  // Scrolling up reads the earlier pages (1,100 events of them) until the first prompt joins the turn.
  await page.mouse.move(640, 300);
  const deadline = Date.now() + 60_000;
  while ((await page.getByTestId("message-user").count()) === 0) {
    expect(Date.now(), "the first prompt appears while scrolling up").toBeLessThan(deadline);
    await page.mouse.wheel(0, -2_000);
    await page.waitForTimeout(50);
  }
  await expect(page.getByTestId("message-user")).toContainText("Start the long one");
  await expect(page.getByTestId("turn-end")).toHaveCount(1);
  await expect(page.getByTestId("session-error")).toHaveCount(0);

  // The download streams every event once, in order; afterSeq and limit still apply.
  const base = `/api/workspaces/${workspace.slug}/sessions/${sessionId}/events`;
  const seqsOf = async (url: string) => {
    const res = await page.request.get(url);
    expect(res.status()).toBe(200);
    expect(res.headers()["content-type"]).toContain("application/x-ndjson");
    return (await res.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { seq: number }).seq);
  };
  expect(await seqsOf(base)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  expect(await seqsOf(`${base}?afterSeq=1000&limit=50`)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1001));
});

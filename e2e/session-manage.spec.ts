import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, createWorkspace, sendPrompt, signedInPage, uniqueEmail, startSessionInNewWorkspace } from "./fixtures";

const dbFile = path.join(process.cwd(), "test-results/e2e-data/conduit.db");

test("a session is renamed, its process stopped and resumed, archived, then deleted after a typed confirmation", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const ada = await signedInPage(browser, uniqueEmail("ada"), `Ada ${stamp}`);
  try {
    const ws = await startSessionInNewWorkspace(ada, `Manage ${stamp}`, "default");
    const sessionId = ada.url().split("/").pop()!;
    await sendPrompt(ada, "hello");
    await expect(ada.getByTestId("turn-end")).toHaveCount(1, { timeout: 30_000 });

    // rename: the header and the list take the new title
    await ada.getByTestId("session-rename").click();
    await ada.getByTestId("session-rename-input").fill(`Release notes ${stamp}`);
    await ada.getByTestId("session-rename-save").click();
    await expect(ada.locator("h1")).toHaveText(`Release notes ${stamp}`);

    // Stop process (not Interrupt): the CLI ends, the next prompt resumes the conversation
    await ada.getByTestId("session-stop-process").click();
    await expect(ada.getByTestId("session-status")).toHaveAttribute("data-status", "stopped", { timeout: 15_000 });
    await expect(ada.getByTestId("session-stop-process")).toBeDisabled();
    await sendPrompt(ada, "hello again");
    await expect(ada.getByTestId("turn-end")).toHaveCount(2, { timeout: 30_000 });
    await expect(ada.getByTestId("notice").filter({ hasText: "resumed the conversation" })).toHaveCount(1);

    // archive: gone from the default list, shown by the filter
    await ada.getByTestId("session-archive").click();
    await expect(ada.getByTestId("session-archive")).toHaveAttribute("data-state", "archived");
    await ada.goto(`/w/${ws.slug}`);
    const row = ada.locator(`[data-testid="session-row"][data-session-id="${sessionId}"]`);
    await expect(ada.getByTestId("session-list")).toBeVisible();
    await expect(row).toHaveCount(0);
    await ada.getByTestId("session-filter-archived").selectOption("archived");
    await expect(row).toHaveAttribute("data-archived", "true");
    await expect(row.getByTestId("session-link")).toHaveText(`Release notes ${stamp}`);

    // delete: the dialog asks for the word first; then the session is gone for good
    await row.getByTestId("session-link").click();
    await expect(ada.getByTestId("session-view")).toBeVisible();
    await ada.getByTestId("session-delete").click();
    const dialog = ada.getByTestId("session-delete-dialog");
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId("session-delete-confirm")).toBeDisabled();
    await dialog.getByTestId("session-delete-input").fill("delet");
    await expect(dialog.getByTestId("session-delete-confirm")).toBeDisabled();
    await dialog.getByTestId("session-delete-input").fill("delete");
    // a destructive button in red (the app's .btn once overrode every utility on it: indigo)
    const red = await ada.evaluate(() => {
      const probe = Object.assign(document.createElement("div"), { className: "bg-red-600" });
      document.body.append(probe);
      const colour = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return colour;
    });
    await expect(dialog.getByTestId("session-delete-confirm")).toHaveCSS("background-color", red);
    await dialog.getByTestId("session-delete-confirm").click();
    await expect(ada).toHaveURL(new RegExp(`/w/${ws.slug}$`));
    await ada.getByTestId("session-filter-archived").selectOption("all");
    await expect(ada.getByTestId("session-list")).toContainText("No session matches these filters.");
    expect((await ada.request.get(`/api/workspaces/${ws.slug}/sessions/${sessionId}`)).status()).toBe(404);
    expect((await ada.goto(`/w/${ws.slug}/s/${sessionId}`))?.status()).toBe(404);

    // the audit log has each step; the cost rows stay for the reports
    const db = new Database(dbFile, { readonly: true, timeout: 10_000 });
    try {
      const actions = (
        db
          .prepare("SELECT action FROM AuditLog WHERE objectType = 'session' AND objectId = ? ORDER BY at")
          .all(sessionId) as {
          action: string;
        }[]
      ).map((a) => a.action);
      expect(actions).toEqual(["session.rename", "session.stop", "session.archive", "session.delete"]);
      const costs = db.prepare("SELECT COUNT(*) AS n FROM CostEntry WHERE sessionId = ?").get(sessionId) as {
        n: number;
      };
      expect(costs.n).toBeGreaterThan(0);
      const events = db.prepare("SELECT COUNT(*) AS n FROM SessionEvent WHERE sessionId = ?").get(sessionId) as {
        n: number;
      };
      expect(events.n).toBe(0);
    } finally {
      db.close();
    }
  } finally {
    await ada.context().close();
  }
});

test("the session list pages by 50 and filters by text, status and creator", async ({ browser }) => {
  test.setTimeout(90_000);
  const stamp = Date.now().toString(36);
  const email = uniqueEmail("pia");
  const pia = await signedInPage(browser, email, `Pia ${stamp}`);
  try {
    const ws = await createWorkspace(pia, `Paging ${stamp}`);
    const db = new Database(dbFile, { timeout: 10_000 });
    try {
      const user = db.prepare("SELECT id FROM User WHERE email = ?").get(email) as { id: string };
      const insert = db.prepare(
        `INSERT INTO Session (id, workspaceId, createdById, status, mode, title, searchText, createdAt, updatedAt, lastActivityAt)
         VALUES (?, ?, ?, ?, 'default', ?, ?, ?, ?, ?)`,
      );
      db.transaction(() => {
        for (let n = 0; n < 61; n++) {
          const at = new Date(Date.UTC(2026, 10, 1, 0, n)).toISOString().replace("Z", "+00:00");
          const status = n % 2 === 0 ? "stopped" : "crashed";
          const word = n === 7 ? "pelican" : `item${n}`;
          insert.run(`page-${stamp}-${n}`, ws.id, user.id, status, `Seeded ${n}`, `about ${word}`, at, at, at);
        }
      })();
    } finally {
      db.close();
    }

    await pia.goto(`/w/${ws.slug}`);
    const rows = pia.getByTestId("session-row");
    await expect(rows).toHaveCount(50);
    await expect(rows.first().getByTestId("session-link")).toHaveText("Seeded 60");
    await pia.getByTestId("session-list-more").click();
    await expect(rows).toHaveCount(61);
    await expect(rows.last().getByTestId("session-link")).toHaveText("Seeded 0");
    await expect(pia.getByTestId("session-list-more")).toHaveCount(0);

    await pia.getByTestId("session-filter-text").fill("PELICAN");
    await expect(rows).toHaveCount(1);
    await expect(rows.first().getByTestId("session-link")).toHaveText("Seeded 7");
    await pia.getByTestId("session-filter-text").fill("");
    await pia.getByTestId("session-filter-status").selectOption("crashed");
    await expect(rows).toHaveCount(30);
    await pia.getByTestId("session-filter-creator").selectOption({ label: `Pia ${stamp}` });
    await expect(rows).toHaveCount(30);

    // an invalid filter in the API is a clear error, not an empty list
    const bad = await pia.request.get(`/api/workspaces/${ws.slug}/sessions?status=sleeping`);
    expect(bad.status()).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("status");
  } finally {
    await pia.context().close();
  }
});

import { readFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, test, sameOrigin, signInViaUi, signUpViaApi, uniqueEmail } from "./fixtures";

/** The e2e server's database (playwright.config.ts: CONDUIT_DATA_DIR=test-results/e2e-data). */
const dbFile = path.join(process.cwd(), "test-results/e2e-data/conduit.db");
/** As Prisma stores DateTime in SQLite. */
const stored = (iso: string) => new Date(iso).toISOString().replace("Z", "+00:00");

/**
 * Seeds October 2026 for one user and workspace: a session and, on each of 20 days, a turn on
 * Opus (and a Haiku subagent on even days), written the way the sidecar's ledger writes them.
 */
function seedMonth(userId: string, workspaceId: string): { usd: number; turns: number } {
  const db = new Database(dbFile, { timeout: 10_000 });
  try {
    const sessionId = `e2e-report-session-${Date.now().toString(36)}`;
    const insertEntry = db.prepare(
      `INSERT INTO CostEntry (id, resultId, sessionId, userId, workspaceId, model, inputTokens, outputTokens,
        cacheReadTokens, cacheWriteTokens, usd, numTurns, durationMs, durationApiMs, isError, permissionDenials, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?)`,
    );
    let usd = 0;
    let turns = 0;
    db.transaction(() => {
      db.prepare(
        `INSERT INTO Session (id, workspaceId, createdById, status, mode, createdAt, updatedAt, lastActivityAt)
         VALUES (?, ?, ?, 'stopped', 'default', ?, ?, ?)`,
      ).run(
        sessionId,
        workspaceId,
        userId,
        stored("2026-10-01T08:00:00Z"),
        stored("2026-10-01T08:00:00Z"),
        stored("2026-10-01T08:00:00Z"),
      );
      for (let day = 1; day <= 20; day += 1) {
        const at = stored(`2026-10-${String(day).padStart(2, "0")}T12:00:00Z`);
        const resultId = `${sessionId}-r${day}`;
        insertEntry.run(
          `${resultId}-t`,
          resultId,
          sessionId,
          userId,
          workspaceId,
          "claude-opus-5-5",
          0,
          0,
          0,
          0,
          0,
          1,
          1000,
          800,
          at,
        );
        const opus = 0.0646 * day;
        insertEntry.run(
          `${resultId}-o`,
          `${resultId}#claude-opus-5-5`,
          sessionId,
          userId,
          workspaceId,
          "claude-opus-5-5",
          1000 * day,
          2000 * day,
          3000 * day,
          4000 * day,
          opus,
          0,
          0,
          0,
          at,
        );
        usd += opus;
        if (day % 2 === 0) {
          insertEntry.run(
            `${resultId}-h`,
            `${resultId}#claude-haiku`,
            sessionId,
            userId,
            workspaceId,
            "claude-haiku",
            100,
            50,
            0,
            0,
            0.0003,
            0,
            0,
            0,
            at,
          );
          usd += 0.0003;
        }
        turns += 1;
      }
    })();
    return { usd: Math.round(usd * 1e6) / 1e6, turns };
  } finally {
    db.close();
  }
}

test("the reports page shows a chart and a table for a seeded month; the CSV has the same totals", async ({ page }) => {
  // The first account is the admin: make it someone else, so the report is scoped to this user.
  await signUpViaApi(page.request, uniqueEmail("first"));
  const email = uniqueEmail("reporter");
  await signUpViaApi(page.request, email, "Reporter");
  await signInViaUi(page, email);
  const created = await page.request.post("/api/workspaces", {
    headers: sameOrigin,
    data: { name: `Reports ${Date.now().toString(36)}` },
  });
  expect(created.status()).toBe(201);
  const workspace = ((await created.json()) as { data: { id: string; slug: string } }).data;
  const db = new Database(dbFile, { readonly: true, timeout: 10_000 });
  const user = db.prepare("SELECT id FROM User WHERE email = ?").get(email) as { id: string };
  db.close();
  const seeded = seedMonth(user.id, workspace.id);

  await page.goto("/reports?from=2026-10-01&to=2026-10-31&groupBy=day&by=user");
  await expect(page.getByTestId("report-range")).toBeVisible();
  const chart = page.getByTestId("report-chart");
  await expect(chart.locator(".recharts-bar-rectangle").first()).toBeVisible();
  const table = page.getByTestId("report-table");
  await expect(table.getByTestId("report-row")).toHaveCount(20);
  const tableTotal = Number(await page.getByTestId("report-total-cell-usd").getAttribute("data-usd"));
  expect(tableTotal).toBeCloseTo(seeded.usd, 6);
  // shown as every other amount of the app; the exact figure is the attribute's (and the CSV's)
  await expect(page.getByTestId("report-total-cell-usd")).toHaveText(/^\$[\d,]+\.\d{2,4}$/);

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("report-csv").click()]);
  const csv = await readFile((await download.path())!, "utf8");
  const lines = csv.trim().split(/\r?\n/);
  expect(lines).toHaveLength(1 + 20 + 1);
  const usdColumn = lines[0]!.split(",").indexOf("usd");
  const turnsColumn = lines[0]!.split(",").indexOf("turns");
  const body = lines.slice(1, -1).map((l) => l.split(","));
  const total = lines.at(-1)!.split(",");
  expect(Number(total[usdColumn])).toBeCloseTo(tableTotal, 6);
  expect(body.reduce((s, cells) => s + Number(cells[usdColumn]), 0)).toBeCloseTo(tableTotal, 6);
  expect(Number(total[turnsColumn])).toBe(seeded.turns);

  // The JSON route answers the same figures for scripts.
  const json = await page.request.get("/api/reports?from=2026-10-01&to=2026-10-31&groupBy=month&by=model");
  const report = ((await json.json()) as { data: { totals: { usd: number; turns: number }; rows: { key: string }[] } })
    .data;
  expect(report.totals.usd).toBeCloseTo(seeded.usd, 6);
  expect(report.totals.turns).toBe(seeded.turns);
  expect(report.rows.map((r) => r.key).sort()).toEqual(["claude-haiku", "claude-opus-5-5", "default"]);

  // A week view rolls the same days up.
  await page.getByTestId("report-range").locator('select[name="groupBy"]').selectOption("week");
  await page.getByTestId("report-range").getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/groupBy=week/);
  await expect(page.getByTestId("report-total-cell-usd")).toHaveAttribute("data-usd", String(tableTotal));
});

test("a workspace owner sets the monthly budget and sees this month's spend", async ({ page }) => {
  const email = uniqueEmail("budget-owner");
  await signUpViaApi(page.request, email, "Budget Owner");
  await signInViaUi(page, email);
  const created = await page.request.post("/api/workspaces", {
    headers: sameOrigin,
    data: { name: `Budget ${Date.now().toString(36)}` },
  });
  const workspace = ((await created.json()) as { data: { slug: string } }).data;
  await page.goto(`/w/${workspace.slug}`);
  await expect(page.getByTestId("spend-total")).toHaveText("$0.00");
  await page.getByTestId("budget-input").fill("12.5");
  await page.getByTestId("budget-save").click();
  await expect(page.getByText("limit: $12.50")).toBeVisible();
  const res = await page.request.get(`/api/workspaces/${workspace.slug}/budget`);
  expect(((await res.json()) as { data: { monthlyBudgetUsd: number } }).data.monthlyBudgetUsd).toBe(12.5);
});

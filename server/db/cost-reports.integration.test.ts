import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCostEntries } from "@/server/domain/cost/build-cost-entries";
import { createDb, type Db } from "./client";
import { recordCostEntries, sumCost } from "./cost-entries";
import { buildReport, periodOf, reportToCsv } from "./cost-reports";
import { deployMigrations } from "./migrations";
import { makeTempDir } from "./test-support";

function turn(resultId: string, at: Date, models: { model: string; usd: number }[]) {
  return {
    resultId,
    claudeSessionId: "c",
    model: models[0]!.model,
    at: at.getTime(),
    models: models.map((m) => ({ ...m, inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 40 })),
    usd: models.reduce((s, m) => s + m.usd, 0),
    numTurns: 1,
    durationMs: 10,
    durationApiMs: 5,
    isError: false,
    permissionDenials: 0,
    source: "since-last-result" as const,
    resetDetected: false,
  };
}

describe("cost reports on SQLite", () => {
  const tmp = makeTempDir();
  let db: Db;
  let ids: { ada: string; bob: string; ws1: string; ws2: string; s1: string; s2: string };

  beforeAll(async () => {
    const url = `file:${path.join(tmp.dir, "conduit.db")}`;
    await deployMigrations({ url });
    db = createDb(url);
    const ada = await db.user.create({ data: { email: "ada@example.com", name: "Ada" } });
    const bob = await db.user.create({ data: { email: "bob@example.com", name: "Bob" } });
    const ws1 = await db.workspace.create({ data: { name: "One", slug: "one", rootPath: "/srv/one" } });
    const ws2 = await db.workspace.create({ data: { name: "Two", slug: "two", rootPath: "/srv/two" } });
    const s1 = await db.session.create({
      data: { workspaceId: ws1.id, createdById: ada.id, createdAt: new Date("2026-11-02T10:00:00Z") },
    });
    const s2 = await db.session.create({
      data: { workspaceId: ws2.id, createdById: bob.id, createdAt: new Date("2026-11-10T10:00:00Z") },
    });
    ids = { ada: ada.id, bob: bob.id, ws1: ws1.id, ws2: ws2.id, s1: s1.id, s2: s2.id };
    const a = { sessionId: s1.id, userId: ada.id, workspaceId: ws1.id };
    const b = { sessionId: s2.id, userId: bob.id, workspaceId: ws2.id };
    await recordCostEntries(db, [
      ...buildCostEntries(turn("r1", new Date("2026-11-02T10:05:00Z"), [{ model: "opus", usd: 0.5 }]), a),
      ...buildCostEntries(
        turn("r2", new Date("2026-11-03T23:59:00Z"), [
          { model: "opus", usd: 0.25 },
          { model: "haiku", usd: 0.01 },
        ]),
        a,
      ),
      ...buildCostEntries(turn("r3", new Date("2026-11-10T11:00:00Z"), [{ model: "opus", usd: 1 }]), b),
      ...buildCostEntries(turn("r4", new Date("2026-12-01T00:00:00Z"), [{ model: "opus", usd: 9 }]), b),
    ]);
    const approval = (status: string, created: string, decided: string | null, sessionId: string) =>
      db.approval.create({
        data: {
          sessionId,
          requestId: `${status}-${created}`,
          toolName: "Bash",
          input: "{}",
          status,
          createdAt: new Date(created),
          decidedAt: decided ? new Date(decided) : null,
        },
      });
    await approval("allowed", "2026-11-02T10:00:00Z", "2026-11-02T10:00:10Z", s1.id);
    await approval("denied", "2026-11-02T11:00:00Z", "2026-11-02T11:00:30Z", s1.id);
    await approval("expired", "2026-11-02T12:00:00Z", null, s1.id);
    await approval("allowed", "2026-11-10T12:00:00Z", "2026-11-10T12:01:00Z", s2.id);
  });
  afterAll(async () => {
    await db?.$disconnect();
    tmp.remove();
  });

  const november = { from: new Date("2026-11-01T00:00:00Z"), to: new Date("2026-12-01T00:00:00Z") };

  it("groups by day and user, totals equal the ledger's sum, December left out", async () => {
    const report = await buildReport(db, "sqlite", { ...november, groupBy: "day", by: "user", scope: { all: true } });
    expect(report.rows.map((r) => [r.period, r.label, r.usd, r.turns, r.sessions])).toEqual([
      ["2026-11-02", "Ada", 0.5, 1, 1],
      ["2026-11-03", "Ada", 0.26, 1, 0],
      ["2026-11-10", "Bob", 1, 1, 1],
    ]);
    const ledger = await sumCost(db, november);
    expect(report.totals.usd).toBeCloseTo(ledger.usd, 10);
    expect(report.totals.turns).toBe(ledger.results);
    expect(report.totals.inputTokens).toBe(ledger.inputTokens);
    expect(report.approvals).toEqual({ allowed: 2, denied: 1, expired: 1, medianDecideMs: 30_000 });
  });

  it("rolls days into ISO weeks and months, and groups by model and workspace", async () => {
    const weeks = await buildReport(db, "sqlite", {
      ...november,
      groupBy: "week",
      by: "workspace",
      scope: { all: true },
    });
    expect(weeks.rows.map((r) => [r.period, r.label, r.usd])).toEqual([
      ["2026-11-02", "One", 0.76],
      ["2026-11-09", "Two", 1],
    ]);
    const months = await buildReport(db, "sqlite", {
      ...november,
      groupBy: "month",
      by: "model",
      scope: { all: true },
    });
    // Sessions started without a model choice are filed under "default".
    expect(months.rows.map((r) => [r.period, r.key, r.usd, r.turns, r.sessions])).toEqual([
      ["2026-11", "default", 0, 0, 2],
      ["2026-11", "haiku", 0.01, 0, 0],
      ["2026-11", "opus", 1.75, 3, 0],
    ]);
    expect(periodOf("2026-11-29", "week")).toBe("2026-11-23");
    expect(periodOf("2026-11-30", "week")).toBe("2026-11-30");
  });

  it("limits a member to their own spend and their workspaces'", async () => {
    const own = await buildReport(db, "sqlite", {
      ...november,
      groupBy: "month",
      by: "user",
      scope: { userId: ids.ada, workspaceIds: [] },
    });
    expect(own.totals.usd).toBeCloseTo(0.76, 10);
    expect(own.approvals.allowed).toBe(1);
    const withWs2 = await buildReport(db, "sqlite", {
      ...november,
      groupBy: "month",
      by: "user",
      scope: { userId: ids.ada, workspaceIds: [ids.ws2] },
    });
    expect(withWs2.totals.usd).toBeCloseTo(1.76, 10);
  });

  it("renders CSV with the same totals", async () => {
    const report = await buildReport(db, "sqlite", { ...november, groupBy: "day", by: "user", scope: { all: true } });
    const lines = reportToCsv(report).trim().split("\r\n");
    expect(lines[0]).toBe(
      "period,user,usd,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,turns,sessions",
    );
    expect(lines.at(-1)).toBe(`total,,${report.totals.usd},40,80,120,160,3,2`);
  });
});

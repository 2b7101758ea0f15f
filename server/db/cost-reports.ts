/**
 * Reports over the cost ledger: cost and tokens per period and per user, workspace or model;
 * sessions started; approvals decided and how fast. The database groups by UTC day (one row per
 * day and key, whatever the number of entries); weeks and months are rolled up from days here,
 * so one SQL shape serves every `groupBy`. Every query filters on `at`/`createdAt` ranges with
 * the scope's user or workspace ids first, so the (workspaceId, at), (userId, at) and (at)
 * indexes carry them.
 */
import { USAGE_ROW_SEPARATOR } from "@/server/domain/cost/build-cost-entries";
import { roundUsd } from "@/server/domain/cost/cost-reducer";
import {
  ReportBy,
  ReportGroupBy,
  type ApprovalStats,
  type Report,
  type ReportFigures,
  type ReportRow,
} from "@/server/shared/wire/report";
import type { Db } from "./client";

export { ReportBy, ReportGroupBy, type ApprovalStats, type Report, type ReportFigures, type ReportRow };

/** Which SQL dialect the client speaks. */
export type SqlProvider = "sqlite" | "postgresql";

/** Whose figures: everything (admins), or one user's own spend plus their workspaces'. */
export type ReportScope = { all: true } | { all?: false; userId: string; workspaceIds: readonly string[] };

export interface ReportQuery {
  /** `[from, to)` */
  from: Date;
  to: Date;
  groupBy: ReportGroupBy;
  by: ReportBy;
  scope: ReportScope;
}

interface DayRow {
  day: string;
  key: string | null;
  usd: number | null;
  inputTokens: number | bigint | null;
  outputTokens: number | bigint | null;
  cacheReadTokens: number | bigint | null;
  cacheWriteTokens: number | bigint | null;
  turns: number | bigint | null;
}

/** Builds the report for `query` (a handful of grouped queries, never row by row). */
export async function buildReport(db: Db, provider: SqlProvider, query: ReportQuery): Promise<Report> {
  const [costDays, sessionDays, approvals] = await Promise.all([
    queryCostDays(db, provider, query),
    querySessionDays(db, provider, query),
    queryApprovalStats(db, provider, query),
  ]);
  const buckets = new Map<string, ReportRow>();
  const bucketOf = (day: string, key: string): ReportRow => {
    const period = periodOf(day, query.groupBy);
    const id = `${period}\u0000${key}`;
    let row = buckets.get(id);
    if (!row) {
      row = { period, key, label: key, ...zeroFigures() };
      buckets.set(id, row);
    }
    return row;
  };
  for (const d of costDays) {
    const row = bucketOf(d.day, d.key ?? "unknown");
    row.usd += d.usd ?? 0;
    row.inputTokens += Number(d.inputTokens ?? 0);
    row.outputTokens += Number(d.outputTokens ?? 0);
    row.cacheReadTokens += Number(d.cacheReadTokens ?? 0);
    row.cacheWriteTokens += Number(d.cacheWriteTokens ?? 0);
    row.turns += Number(d.turns ?? 0);
  }
  for (const d of sessionDays) bucketOf(d.day, d.key ?? "default").sessions += Number(d.sessions);
  const rows = [...buckets.values()].sort((a, b) => a.period.localeCompare(b.period) || a.key.localeCompare(b.key));
  const labels = await labelsOf(db, query.by, [...new Set(rows.map((r) => r.key))]);
  const totals = zeroFigures();
  for (const row of rows) {
    row.usd = roundUsd(row.usd);
    row.label = labels.get(row.key) ?? row.key;
    totals.usd += row.usd;
    totals.inputTokens += row.inputTokens;
    totals.outputTokens += row.outputTokens;
    totals.cacheReadTokens += row.cacheReadTokens;
    totals.cacheWriteTokens += row.cacheWriteTokens;
    totals.turns += row.turns;
    totals.sessions += row.sessions;
  }
  totals.usd = roundUsd(totals.usd);
  return {
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    groupBy: query.groupBy,
    by: query.by,
    rows,
    totals,
    approvals,
  };
}

function zeroFigures(): ReportFigures {
  return { usd: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, turns: 0, sessions: 0 };
}

/** The period a UTC day (`YYYY-MM-DD`) falls in. Weeks start on Monday (ISO). */
export function periodOf(day: string, groupBy: ReportGroupBy): string {
  if (groupBy === "day") return day;
  if (groupBy === "month") return day.slice(0, 7);
  const date = new Date(`${day}T00:00:00Z`);
  const back = (date.getUTCDay() + 6) % 7;
  return new Date(date.getTime() - back * 86_400_000).toISOString().slice(0, 10);
}

/** A small parameter list that renders `?` (SQLite) or `$n` (PostgreSQL). */
class Params {
  readonly values: unknown[] = [];
  constructor(private readonly provider: SqlProvider) {}
  add(value: unknown): string {
    this.values.push(value);
    return this.provider === "sqlite" ? "?" : `$${this.values.length}`;
  }
  /** A timestamp as the column stores it: Prisma keeps SQLite DateTimes as ISO text with `+00:00`. */
  time(date: Date): string {
    return this.add(this.provider === "sqlite" ? date.toISOString().replace("Z", "+00:00") : date);
  }
  list(values: readonly string[]): string {
    return values.map((v) => this.add(v)).join(", ");
  }
}

function dayExpr(provider: SqlProvider, column: string): string {
  return provider === "sqlite" ? `substr(${column}, 1, 10)` : `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
}

/** `(userId = ? OR workspaceId IN (…))` for a member's scope; empty for admins. */
function scopeSql(scope: ReportScope, p: Params, userColumn: string, workspaceColumn: string): string {
  if (scope.all) return "";
  const mine = `${userColumn} = ${p.add(scope.userId)}`;
  if (scope.workspaceIds.length === 0) return ` AND ${mine}`;
  return ` AND (${mine} OR ${workspaceColumn} IN (${p.list(scope.workspaceIds)}))`;
}

const costKeyColumn: Record<ReportBy, string> = { user: `"userId"`, workspace: `"workspaceId"`, model: `"model"` };

async function queryCostDays(db: Db, provider: SqlProvider, query: ReportQuery): Promise<DayRow[]> {
  const p = new Params(provider);
  const day = dayExpr(provider, `"at"`);
  const key = costKeyColumn[query.by];
  // Parameters in the order they appear in the SQL: SQLite's `?` are positional.
  const separator = p.add(`%${USAGE_ROW_SEPARATOR}%`);
  const from = p.time(query.from);
  const to = p.time(query.to);
  const scope = scopeSql(query.scope, p, `"userId"`, `"workspaceId"`);
  // A turn row's model is the main loop's; by model, turns are counted where that model is.
  const sql = `SELECT ${day} AS "day", ${key} AS "key",
      SUM("usd") AS "usd", SUM("inputTokens") AS "inputTokens", SUM("outputTokens") AS "outputTokens",
      SUM("cacheReadTokens") AS "cacheReadTokens", SUM("cacheWriteTokens") AS "cacheWriteTokens",
      SUM(CASE WHEN "resultId" LIKE ${separator} THEN 0 ELSE 1 END) AS "turns"
    FROM "CostEntry"
    WHERE "at" >= ${from} AND "at" < ${to}${scope}
    GROUP BY 1, 2`;
  return db.$queryRawUnsafe<DayRow[]>(sql, ...p.values);
}

const sessionKeyColumn: Record<ReportBy, string> = {
  user: `"createdById"`,
  workspace: `"workspaceId"`,
  model: `"model"`,
};

async function querySessionDays(
  db: Db,
  provider: SqlProvider,
  query: ReportQuery,
): Promise<{ day: string; key: string | null; sessions: number | bigint }[]> {
  const p = new Params(provider);
  const day = dayExpr(provider, `"createdAt"`);
  const from = p.time(query.from);
  const to = p.time(query.to);
  const scope = scopeSql(query.scope, p, `"createdById"`, `"workspaceId"`);
  const sql = `SELECT ${day} AS "day", ${sessionKeyColumn[query.by]} AS "key", COUNT(*) AS "sessions"
    FROM "Session"
    WHERE "createdAt" >= ${from} AND "createdAt" < ${to}${scope}
    GROUP BY 1, 2`;
  return db.$queryRawUnsafe(sql, ...p.values);
}

async function queryApprovalStats(db: Db, provider: SqlProvider, query: ReportQuery): Promise<ApprovalStats> {
  const p = new Params(provider);
  const from = p.time(query.from);
  const to = p.time(query.to);
  const scope = scopeSql(query.scope, p, `s."createdById"`, `s."workspaceId"`);
  const where = `a."createdAt" >= ${from} AND a."createdAt" < ${to}${scope}`;
  const counts = await db.$queryRawUnsafe<{ status: string; n: number | bigint }[]>(
    `SELECT a."status" AS "status", COUNT(*) AS "n" FROM "Approval" a JOIN "Session" s ON s."id" = a."sessionId"
      WHERE ${where} AND a."status" IN ('allowed', 'denied', 'expired') GROUP BY 1`,
    ...p.values,
  );
  const decided = await db.$queryRawUnsafe<{ createdAt: string | Date; decidedAt: string | Date }[]>(
    `SELECT a."createdAt" AS "createdAt", a."decidedAt" AS "decidedAt" FROM "Approval" a
      JOIN "Session" s ON s."id" = a."sessionId"
      WHERE ${where} AND a."status" IN ('allowed', 'denied') AND a."decidedAt" IS NOT NULL`,
    ...p.values,
  );
  const count = (status: string) => Number(counts.find((c) => c.status === status)?.n ?? 0);
  const waits = decided
    .map((d) => new Date(d.decidedAt).getTime() - new Date(d.createdAt).getTime())
    .filter((ms) => Number.isFinite(ms))
    .sort((a, b) => a - b);
  return {
    allowed: count("allowed"),
    denied: count("denied"),
    expired: count("expired"),
    medianDecideMs: median(waits),
  };
}

/** The median of sorted numbers; null for none. */
export function median(sorted: readonly number[]): number | null {
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function labelsOf(db: Db, by: ReportBy, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0 || by === "model") return new Map();
  if (by === "user") {
    const users = await db.user.findMany({ where: { id: { in: keys } }, select: { id: true, name: true } });
    return new Map(users.map((u) => [u.id, u.name]));
  }
  const workspaces = await db.workspace.findMany({ where: { id: { in: keys } }, select: { id: true, name: true } });
  return new Map(workspaces.map((w) => [w.id, w.name]));
}

/**
 * The report's rows as CSV (RFC 4180 quoting), totals last. Text cells that a spreadsheet
 * would run as a formula (`= + - @`, tab, CR at the start: a workspace or user named
 * `=HYPERLINK(…)`) get a leading `'`, so they open as text.
 */
export function reportToCsv(report: Report): string {
  const header = [
    "period",
    report.by,
    "usd",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "turns",
    "sessions",
  ];
  const line = (cells: (string | number)[]) => cells.map(csvCell).join(",");
  const figures = (f: ReportFigures) => [
    f.usd,
    f.inputTokens,
    f.outputTokens,
    f.cacheReadTokens,
    f.cacheWriteTokens,
    f.turns,
    f.sessions,
  ];
  const lines = [line(header)];
  for (const row of report.rows) lines.push(line([row.period, row.label, ...figures(row)]));
  lines.push(line(["total", "", ...figures(report.totals)]));
  return `${lines.join("\r\n")}\r\n`;
}

function csvCell(value: string | number): string {
  // Numbers are written by us and stay numbers; only names come from people.
  const text = typeof value === "number" ? String(value) : /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n\t']/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

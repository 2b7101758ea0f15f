/**
 * The cost ledger: `CostEntry` rows, written once per (result, row kind) and only ever summed.
 * There is no second counter: session, user and workspace totals, monthly spend and budgets are
 * all SUMs over these rows, so they cannot drift apart. Row layout (turn rows and usage rows,
 * `resultId` keys): `server/domain/cost/build-cost-entries.ts`.
 */
import { BudgetScope, checkBudgets, monthRange, type BudgetDecision } from "@/server/domain/cost/budget";
import { USAGE_ROW_SEPARATOR, type CostEntryInput } from "@/server/domain/cost/build-cost-entries";
import { MAX_REMEMBERED_RESULTS, roundUsd } from "@/server/domain/cost/cost-reducer";
import { Prisma } from "@/generated/prisma/client";
import type { Db } from "./client";
import { hotPath, hotRows } from "./hot-statements";
import { newRowId } from "./row-id";
import { sumSessionCost } from "./sessions";

/**
 * Stores rows, skipping every `resultId` already stored (also duplicates inside `entries`), so
 * recording the same turn twice changes nothing: `INSERT … ON CONFLICT ("resultId") DO NOTHING`, a
 * hot statement (`hot-statements.ts`) per 500 rows. Outside a transaction on purpose: on SQLite in
 * WAL mode, a read transaction that later writes cannot wait for another writer (it fails at once
 * with "database is locked"), while a plain insert waits out the busy timeout. Returns how many
 * rows were new.
 */
export async function recordCostEntries(db: Db, entries: readonly CostEntryInput[]): Promise<{ inserted: number }> {
  const fresh = firstOfEachResult(entries);
  let inserted = 0;
  for (let i = 0; i < fresh.length; i += rowsPerStatement) {
    const stored = await hotRows<{ usd: number }>(db, insertSkippingStored(fresh.slice(i, i + rowsPerStatement)));
    inserted += stored.length;
  }
  return { inserted };
}

/** Rows per INSERT: 17 parameters a row stays far under either database's limit. */
const rowsPerStatement = 500;

/**
 * A turn's rows stored as {@link recordCostEntries} does, and the session's total cost after them
 * (what `sumSessionCost` reads): on PostgreSQL one statement for both, since every turn of every
 * session runs it; on SQLite the insert and the sum one after the other. `entries` are one
 * session's.
 */
export async function recordTurnCost(
  db: Db,
  sessionId: string,
  entries: readonly CostEntryInput[],
): Promise<{ inserted: number; sessionUsd: number }> {
  const fresh = firstOfEachResult(entries);
  if (fresh.length > 0 && fresh.length <= rowsPerStatement && hotPath(db)) {
    // The statement's own inserts are not visible to its other parts: the total adds them.
    const [row] = await hotRows<{ inserted: number; usd: number }>(
      db,
      Prisma.sql`WITH "new" AS (${insertSkippingStored(fresh)})
        SELECT (SELECT COUNT(*) FROM "new") AS "inserted",
          COALESCE((SELECT SUM("usd") FROM "CostEntry" WHERE "sessionId" = ${sessionId}), 0) + COALESCE((SELECT SUM("usd") FROM "new"), 0) AS "usd"`,
    );
    return { inserted: Number(row?.inserted ?? 0), sessionUsd: Number(row?.usd ?? 0) };
  }
  const { inserted } = await recordCostEntries(db, fresh);
  return { inserted, sessionUsd: await sumSessionCost(db, sessionId) };
}

/** The first entry of each `resultId`: the first row of a duplicated id wins, as it would have in the table. */
function firstOfEachResult(entries: readonly CostEntryInput[]): CostEntryInput[] {
  const firstOf = new Map<string, CostEntryInput>();
  for (const e of entries) if (!firstOf.has(e.resultId)) firstOf.set(e.resultId, e);
  return [...firstOf.values()];
}

/** `INSERT … RETURNING "usd"` of the rows whose `resultId` is not stored yet, with ids as Prisma makes them. */
function insertSkippingStored(rows: readonly CostEntryInput[]): Prisma.Sql {
  const values = rows.map(
    (r) =>
      Prisma.sql`(${newRowId()}, ${r.resultId}, ${r.sessionId}, ${r.userId}, ${r.workspaceId}, ${r.model}, ${r.inputTokens}, ${r.outputTokens}, ${r.cacheReadTokens}, ${r.cacheWriteTokens}, ${r.usd}, ${r.numTurns}, ${r.durationMs}, ${r.durationApiMs}, ${r.isError}, ${r.permissionDenials}, ${r.at})`,
  );
  return Prisma.sql`INSERT INTO "CostEntry" ("id", "resultId", "sessionId", "userId", "workspaceId", "model", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "usd", "numTurns", "durationMs", "durationApiMs", "isError", "permissionDenials", "at")
    VALUES ${Prisma.join(values, ", ")} ON CONFLICT ("resultId") DO NOTHING RETURNING "usd"`;
}

/** Which entries to sum; every field narrows. The range is `[from, to)` on `at`. */
export interface CostFilter {
  sessionId?: string;
  userId?: string;
  workspaceId?: string;
  from?: Date;
  to?: Date;
}

/** Totals over a set of entries. */
export interface CostTotals {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Results (turns as the user sees them: one per `result` line). */
  results: number;
  /** Model calls (`num_turns` summed). */
  numTurns: number;
  /** Results with `is_error`. */
  errors: number;
  durationMs: number;
  durationApiMs: number;
  permissionDenials: number;
}

function whereOf(filter: CostFilter): Prisma.CostEntryWhereInput {
  const where: Prisma.CostEntryWhereInput = {};
  if (filter.sessionId !== undefined) where.sessionId = filter.sessionId;
  if (filter.userId !== undefined) where.userId = filter.userId;
  if (filter.workspaceId !== undefined) where.workspaceId = filter.workspaceId;
  if (filter.from !== undefined || filter.to !== undefined) {
    where.at = {
      ...(filter.from !== undefined ? { gte: filter.from } : {}),
      ...(filter.to !== undefined ? { lt: filter.to } : {}),
    };
  }
  return where;
}

/** Sums the entries matching `filter` (SUMs in the database; nothing is loaded row by row). */
export async function sumCost(db: Db, filter: CostFilter = {}): Promise<CostTotals> {
  const where = whereOf(filter);
  const [sums, turnRows] = await Promise.all([
    db.costEntry.aggregate({
      where,
      _sum: {
        usd: true,
        inputTokens: true,
        outputTokens: true,
        cacheReadTokens: true,
        cacheWriteTokens: true,
        numTurns: true,
        durationMs: true,
        durationApiMs: true,
        permissionDenials: true,
      },
    }),
    // Turn rows are the ones whose resultId is a bare result uuid.
    db.costEntry.groupBy({
      by: ["isError"],
      where: { AND: [where, { NOT: { resultId: { contains: USAGE_ROW_SEPARATOR } } }] },
      _count: { _all: true },
    }),
  ]);
  const s = sums._sum;
  const count = (isError: boolean) => turnRows.find((g) => g.isError === isError)?._count._all ?? 0;
  return {
    usd: roundUsd(s.usd ?? 0),
    inputTokens: Number(s.inputTokens ?? 0),
    outputTokens: Number(s.outputTokens ?? 0),
    cacheReadTokens: Number(s.cacheReadTokens ?? 0),
    cacheWriteTokens: Number(s.cacheWriteTokens ?? 0),
    results: count(false) + count(true),
    numTurns: Number(s.numTurns ?? 0),
    errors: count(true),
    durationMs: Number(s.durationMs ?? 0),
    durationApiMs: Number(s.durationApiMs ?? 0),
    permissionDenials: Number(s.permissionDenials ?? 0),
  };
}

/**
 * The ids of the results already recorded for a session, oldest first (at most `limit`, the
 * newest): the seed of a cost reducer rebuilt after a sidecar restart
 * (`createCostState({ countedResultIds })`), so a replayed result counts zero there too.
 */
export async function listRecordedResultIds(
  db: Db,
  sessionId: string,
  limit: number = MAX_REMEMBERED_RESULTS,
): Promise<string[]> {
  const rows = await db.costEntry.findMany({
    where: { sessionId, NOT: { resultId: { contains: USAGE_ROW_SEPARATOR } } },
    orderBy: [{ at: "desc" }, { resultId: "desc" }],
    take: limit,
    select: { resultId: true },
  });
  return rows.map((r) => r.resultId).reverse();
}

/** Whose monthly spend. */
export type SpendScope = { userId: string } | { workspaceId: string };

/** USD spent by a user (across workspaces) or in a workspace (by anyone) in the UTC month of `now`. */
export async function monthlySpend(
  db: Db,
  scope: SpendScope,
  now: Date,
): Promise<{ usd: number; from: Date; to: Date }> {
  const { from, to } = monthRange(now);
  const where = whereOf({ ...scope, from, to });
  const sums = await db.costEntry.aggregate({ where, _sum: { usd: true } });
  return { usd: roundUsd(sums._sum.usd ?? 0), from, to };
}

/**
 * Whether `userId` may start a turn in `workspaceId` now: the user's monthly limit against their
 * spend everywhere, then the workspace's limit against everyone's spend in it. The first refusal
 * (`budget_exceeded`, naming the limit and the spend) wins. `pendingUsd` is spend not in the
 * ledger yet that counts against both (the credential proxy's metered spend no result recorded).
 */
export async function checkMonthlyBudgets(
  db: Db,
  who: { userId: string; workspaceId: string },
  now: Date,
  pendingUsd = 0,
): Promise<BudgetDecision> {
  // Both limits in one statement: every prompt asks (two Prisma reads cost the sidecar ~0.9 ms of CPU).
  const [limits] = await hotRows<{ userLimit: number | null; workspaceLimit: number | null }>(
    db,
    Prisma.sql`
    SELECT (SELECT "monthlyBudgetUsd" FROM "User" WHERE "id" = ${who.userId}) AS "userLimit",
      (SELECT "monthlyBudgetUsd" FROM "Workspace" WHERE "id" = ${who.workspaceId}) AS "workspaceLimit"`,
  );
  const userLimit = limits?.userLimit == null ? null : Number(limits.userLimit);
  const workspaceLimit = limits?.workspaceLimit == null ? null : Number(limits.workspaceLimit);
  // Spend is only summed for the limits that exist.
  const [userSpent, workspaceSpent] = await Promise.all([
    userLimit === null ? 0 : monthlySpend(db, { userId: who.userId }, now).then((s) => s.usd),
    workspaceLimit === null ? 0 : monthlySpend(db, { workspaceId: who.workspaceId }, now).then((s) => s.usd),
  ]);
  return checkBudgets([
    { scope: BudgetScope.user, limitUsd: userLimit, spentUsd: roundUsd(userSpent + pendingUsd) },
    { scope: BudgetScope.workspace, limitUsd: workspaceLimit, spentUsd: roundUsd(workspaceSpent + pendingUsd) },
  ]);
}

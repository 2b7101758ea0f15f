/**
 * The session history: sessions of the caller's workspaces, newest first, filtered and searched,
 * paged by a cursor on (createdAt, id) so a page never depends on how many came before it.
 * Search reads `Session.searchText` (prompts and final replies, lower-cased, written by the
 * sidecar), not the event log: one short column per session instead of every event.
 */
import { USAGE_ROW_SEPARATOR } from "@/server/domain/cost/build-cost-entries";
import { roundUsd } from "@/server/domain/cost/cost-reducer";
import type { Prisma } from "@/generated/prisma/client";
import type { TranscriptTurnCost } from "@/server/shared/wire/history";
import type { Db } from "./client";
import { endedSessionStatuses, liveSessionStatuses } from "@/server/shared/wire/session";

/** What to list. `workspaceIds` is the caller's scope; the other fields narrow it. */
export interface HistoryQuery {
  workspaceIds: readonly string[];
  q?: string;
  userId?: string;
  status?: string;
  model?: string;
  /** `[from, to)` on createdAt. */
  from?: Date;
  to?: Date;
  cursor?: string;
  limit?: number;
}

export interface HistoryRow {
  id: string;
  workspace: { id: string; slug: string; name: string };
  title: string | null;
  status: string;
  model: string | null;
  createdBy: { id: string; name: string };
  createdAt: string;
  lastActivityAt: string;
  costUsd: number;
  turns: number;
}

export interface HistoryPage {
  rows: HistoryRow[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

const defaultLimit = 25;
const maxLimit = 100;

/** Status filters that name a group of statuses. */
const statusGroups: Record<string, string[]> = {
  live: [...liveSessionStatuses],
  ended: [...endedSessionStatuses],
};

export function encodeHistoryCursor(createdAt: Date, id: string): string {
  return Buffer.from(`${createdAt.toISOString()}|${id}`, "utf8").toString("base64url");
}

export function decodeHistoryCursor(cursor: string): { createdAt: Date; id: string } | undefined {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const bar = text.indexOf("|");
  if (bar < 0) return undefined;
  const createdAt = new Date(text.slice(0, bar));
  if (Number.isNaN(createdAt.getTime())) return undefined;
  return { createdAt, id: text.slice(bar + 1) };
}

/** One page of history. */
export async function listSessionHistory(db: Db, query: HistoryQuery): Promise<HistoryPage> {
  const limit = Math.min(Math.max(query.limit ?? defaultLimit, 1), maxLimit);
  const and: Prisma.SessionWhereInput[] = [{ workspaceId: { in: [...query.workspaceIds] } }, { deletedAt: null }];
  if (query.userId) and.push({ createdById: query.userId });
  if (query.status) and.push({ status: { in: statusGroups[query.status] ?? [query.status] } });
  if (query.model) and.push({ model: query.model });
  if (query.from || query.to) {
    and.push({ createdAt: { ...(query.from ? { gte: query.from } : {}), ...(query.to ? { lt: query.to } : {}) } });
  }
  const words = (query.q ?? "").toLowerCase().split(/\s+/).filter(Boolean).slice(0, 8);
  for (const word of words) and.push({ searchText: { contains: word } });
  const after = query.cursor ? decodeHistoryCursor(query.cursor) : undefined;
  if (after) {
    and.push({
      OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
    });
  }
  const sessions = await db.session.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
    select: {
      id: true,
      title: true,
      status: true,
      model: true,
      createdAt: true,
      lastActivityAt: true,
      workspace: { select: { id: true, slug: true, name: true } },
      createdBy: { select: { id: true, name: true } },
    },
  });
  const page = sessions.slice(0, limit);
  const ids = page.map((s) => s.id);
  const [costs, turns] =
    ids.length === 0
      ? [[], []]
      : await Promise.all([
          db.costEntry.groupBy({ by: ["sessionId"], where: { sessionId: { in: ids } }, _sum: { usd: true } }),
          db.costEntry.groupBy({
            by: ["sessionId"],
            where: { sessionId: { in: ids }, NOT: { resultId: { contains: USAGE_ROW_SEPARATOR } } },
            _count: { _all: true },
          }),
        ]);
  const usdOf = new Map(costs.map((c) => [c.sessionId, c._sum.usd ?? 0]));
  const turnsOf = new Map(turns.map((t) => [t.sessionId, t._count._all]));
  const last = page.at(-1);
  return {
    rows: page.map((s) => ({
      id: s.id,
      workspace: s.workspace,
      title: s.title,
      status: s.status,
      model: s.model,
      createdBy: s.createdBy,
      createdAt: s.createdAt.toISOString(),
      lastActivityAt: s.lastActivityAt.toISOString(),
      costUsd: roundUsd(usdOf.get(s.id) ?? 0),
      turns: turnsOf.get(s.id) ?? 0,
    })),
    nextCursor: sessions.length > limit && last ? encodeHistoryCursor(last.createdAt, last.id) : null,
  };
}

/** One turn's cost, from the ledger: the turn row's figures and its usage rows summed (the payer by id). */
export type TurnCost = Omit<TranscriptTurnCost, "userName"> & { userId: string };

/** The cost of each turn of a session, oldest first. */
export async function listSessionTurnCosts(db: Db, sessionId: string): Promise<TurnCost[]> {
  const entries = await db.costEntry.findMany({
    where: { sessionId },
    orderBy: [{ at: "asc" }, { resultId: "asc" }],
  });
  const turns = new Map<string, TurnCost>();
  for (const e of entries) {
    const resultId = e.resultId.split(USAGE_ROW_SEPARATOR)[0]!;
    let turn = turns.get(resultId);
    if (!turn) {
      turn = {
        resultId,
        at: e.at.toISOString(),
        userId: e.userId,
        model: e.model,
        usd: 0,
        inputTokens: 0,
        outputTokens: 0,
        durationMs: 0,
        isError: false,
      };
      turns.set(resultId, turn);
    }
    turn.usd += e.usd;
    turn.inputTokens += e.inputTokens;
    turn.outputTokens += e.outputTokens;
    turn.durationMs += e.durationMs;
    if (e.resultId === resultId) {
      turn.model = e.model;
      turn.isError = e.isError;
    }
  }
  return [...turns.values()].map((t) => ({ ...t, usd: roundUsd(t.usd) }));
}

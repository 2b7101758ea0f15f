/**
 * Database reads behind the session pages and their read-only REST routes. Every function
 * checks the caller's membership first (requireWorkspaceAccess): a non-member learns nothing,
 * and a session of another workspace is not_found, as if it did not exist.
 *
 * Live state (status changes, presence, new events) comes from the sidecar over the socket;
 * these reads give the first paint and the raw log download.
 */
import { getDb, type Db } from "@/server/db/client";
import { firstPromptsOf, listSessionEventPage, listSessionEventTail } from "@/server/db/session-events";
import { parsePayload, toWireEvent } from "@/server/db/session-wire-event";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { resultTotalCostUsd } from "@/server/shared/claude-protocol/messages";
import {
  subscribePage as eventPage,
  type SessionStatus,
  sessionStatuses,
  type SessionView,
  type WireEvent,
  type WireEventKind,
} from "@/server/shared/wire/session";
import { logger } from "@/server/web/logger";
import { requireWorkspaceAccess, type WorkspaceSummary } from "@/server/web/workspaces";
import { encodeHistoryCursor } from "@/server/db/session-history";
import { sessionListWhere, sessionListPageSize, type SessionListQuery } from "@/server/web/session-list-query";


export interface WorkspaceSessionSettings {
  allowBypass: boolean;
  defaultMode: string;
}

interface SessionRow {
  id: string;
  workspaceId: string;
  title: string | null;
  status: string;
  mode: string;
  model: string | null;
  createdAt: Date;
  archivedAt?: Date | null;
  claudeSessionId?: string | null;
  createdBy: { id: string; name: string };
}

/**
 * One page of the workspace's sessions, newest first, filtered (archived ones left out unless
 * asked for), with their cost so far, each one's first prompt (a title for sessions without
 * one), and the cursor of the next page (null on the last).
 */
export async function listSessions(
  userId: string,
  slug: string,
  query: Partial<SessionListQuery> = {},
): Promise<{
  workspace: WorkspaceSummary;
  sessions: SessionView[];
  settings: WorkspaceSessionSettings;
  firstPrompts: Record<string, string>;
  nextCursor: string | null;
}> {
  const workspace = await requireWorkspaceAccess(userId, slug, "read");
  const db = getDb();
  const limit = query.limit ?? sessionListPageSize;
  const [page, settings] = await Promise.all([
    db.session.findMany({
      where: sessionListWhere(workspace.id, query),
      include: { createdBy: { select: { id: true, name: true } } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: limit + 1,
    }),
    readSettings(workspace.id),
  ]);
  const rows = page.slice(0, limit);
  const last = rows.at(-1);
  const nextCursor = page.length > limit && last ? encodeHistoryCursor(last.createdAt, last.id) : null;
  const firstPrompts = await firstPromptsOf(db, rows.map((r) => r.id));
  return { workspace, sessions: await toViews(rows, workspace, settings), settings, firstPrompts, nextCursor };
}

/** One session of the workspace, or not_found (also for sessions of other workspaces). */
export async function findSession(
  userId: string,
  slug: string,
  sessionId: string,
): Promise<{ workspace: WorkspaceSummary; session: SessionView }> {
  const workspace = await requireWorkspaceAccess(userId, slug, "read");
  const row = await getDb().session.findFirst({
    where: { id: sessionId, workspaceId: workspace.id, deletedAt: null },
    include: { createdBy: { select: { id: true, name: true } } },
  });
  if (!row) throw new AppError(ErrorCode.notFound, "No such session.");
  const [session] = await toViews([row], workspace, await readSettings(workspace.id));
  return { workspace, session: session! };
}

/**
 * The session's event log after `afterSeq` as NDJSON (one whole, untrimmed event per line),
 * read one page at a time as the client takes it: a 50,000-event log or a 64 MB line never
 * sits in memory whole, and a client that stops reading stops the reads. Membership is
 * checked before the stream exists, so a refusal is still a JSON error.
 */
export async function streamSessionEvents(
  userId: string,
  slug: string,
  sessionId: string,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<ReadableStream<Uint8Array>> {
  const { session } = await findSession(userId, slug, sessionId);
  const db = getDb();
  const names = new Map<string, string>();
  const encoder = new TextEncoder();
  let after = options.afterSeq ?? 0;
  let left = options.limit ?? Number.POSITIVE_INFINITY;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const page = await listSessionEventPage(db, session.id, after, {
          maxEvents: Math.min(eventPage.maxEvents, left),
          maxChars: eventPage.maxChars,
        });
        await addUserNames(db, page.rows, names);
        for (const r of page.rows) {
          const name = r.userId ? names.get(r.userId) : undefined;
          const event: WireEvent = {
            sessionId: r.sessionId,
            seq: r.seq,
            kind: r.kind as WireEventKind,
            payload: parsePayload(r.payload),
            trimmed: false,
            ...(r.userId && name !== undefined ? { user: { id: r.userId, name } } : {}),
            at: r.createdAt.toISOString(),
          };
          controller.enqueue(encoder.encode(`${JSON.stringify(event)}\n`));
        }
        after = page.rows.at(-1)?.seq ?? after;
        left -= page.rows.length;
        if (!page.more || left <= 0) controller.close();
      },
    },
    // One page ahead at most: the next read waits for the client.
    { highWaterMark: 1 },
  );
}

/** The session's event log after `afterSeq`, whole (never trimmed), in seq order. */
export async function readSessionEvents(
  userId: string,
  slug: string,
  sessionId: string,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<WireEvent[]> {
  const { session } = await findSession(userId, slug, sessionId);
  const db = getDb();
  const rows = await db.sessionEvent.findMany({
    where: { sessionId: session.id, seq: { gt: options.afterSeq ?? 0 } },
    orderBy: { seq: "asc" },
    take: Math.min(options.limit ?? 50_000, 50_000),
  });
  const names = await addUserNames(db, rows, new Map());
  return rows.map((r) => {
    const name = r.userId ? names.get(r.userId) : undefined;
    return {
      sessionId: r.sessionId,
      seq: r.seq,
      kind: r.kind as WireEventKind,
      payload: parsePayload(r.payload),
      trimmed: false,
      ...(r.userId && name !== undefined ? { user: { id: r.userId, name } } : {}),
      at: r.createdAt.toISOString(),
    };
  });
}

/** Most of a log's end read for {@link readSessionPreview}: a screen's worth, with room to spare. */
const previewTail = { maxEvents: 60, maxChars: 256 * 1024, maxRowChars: 256 * 1024 };
/** Each preview event's payload is cut to this many bytes (long tool output shows its start). */
const previewPayloadBytes = 16 * 1024;

/**
 * The end of the session's log as the server-rendered picture of its last screen
 * (`SessionView`'s `initialTail`): shown while the page's scripts load and the live log arrives,
 * so a long session's last screen is on screen before any script has run. Streamed deltas and
 * very long rows are left out, long payloads cut ({@link listSessionEventTail}). Takes what
 * {@link findSession} found, which checked the caller's membership. A failed read costs only the
 * picture.
 */
export async function readSessionPreview(found: Awaited<ReturnType<typeof findSession>>): Promise<WireEvent[]> {
  const sessionId = found.session.id;
  try {
    const db = getDb();
    const rows = await listSessionEventTail(db, sessionId, previewTail);
    const names = await addUserNames(db, rows, new Map());
    return rows.map((r) =>
      toWireEvent(r, { maxBytes: previewPayloadBytes, userName: r.userId ? names.get(r.userId) : undefined }),
    );
  } catch (err) {
    logger.warn({ err, sessionId }, "the session's preview could not be read; the page opens without it");
    return [];
  }
}

/** Adds the display names of the rows' users not yet in `names` (one query); returns `names`. */
async function addUserNames(
  db: Db,
  rows: readonly { userId: string | null }[],
  names: Map<string, string>,
): Promise<Map<string, string>> {
  const unknown = [...new Set(rows.flatMap((r) => (r.userId && !names.has(r.userId) ? [r.userId] : [])))];
  if (unknown.length > 0) {
    const users = await db.user.findMany({ where: { id: { in: unknown } }, select: { id: true, name: true } });
    for (const u of users) names.set(u.id, u.name);
  }
  return names;
}

async function readSettings(workspaceId: string): Promise<WorkspaceSessionSettings> {
  const ws = await getDb().workspace.findUnique({
    where: { id: workspaceId },
    select: { allowBypass: true, defaultMode: true },
  });
  return { allowBypass: ws?.allowBypass ?? false, defaultMode: ws?.defaultMode ?? "default" };
}

async function toViews(
  rows: SessionRow[],
  workspace: WorkspaceSummary,
  settings: WorkspaceSessionSettings,
): Promise<SessionView[]> {
  if (rows.length === 0) return [];
  const db = getDb();
  const ids = rows.map((r) => r.id);
  const [seqs, costs] = await Promise.all([
    db.sessionEvent.groupBy({ by: ["sessionId"], where: { sessionId: { in: ids } }, _max: { seq: true } }),
    db.costEntry.groupBy({
      by: ["sessionId"],
      where: { sessionId: { in: ids } },
      _sum: { usd: true, inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true },
    }),
  ]);
  const lastSeq = new Map(seqs.map((s) => [s.sessionId, s._max.seq ?? 0]));
  const totals = new Map<string, Totals>(
    costs.map((c) => [
      c.sessionId,
      {
        usd: c._sum.usd ?? 0,
        input: c._sum.inputTokens ?? 0,
        output: c._sum.outputTokens ?? 0,
        cacheRead: c._sum.cacheReadTokens ?? 0,
        cacheWrite: c._sum.cacheWriteTokens ?? 0,
      },
    ]),
  );
  // Sessions without cost entries yet (accounting lands with issue 4): sum their results.
  const missing = ids.filter((id) => !totals.has(id) && (lastSeq.get(id) ?? 0) > 0);
  if (missing.length > 0) {
    const results = await db.sessionEvent.findMany({
      where: { sessionId: { in: missing }, kind: "cli", payload: { contains: '"type":"result"' } },
      select: { sessionId: true, payload: true },
      orderBy: [{ sessionId: "asc" }, { seq: "asc" }],
    });
    const bySession = new Map<string, unknown[]>();
    for (const r of results) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), parsePayload(r.payload)]);
    for (const [id, payloads] of bySession) totals.set(id, totalsFromResults(payloads));
  }
  return rows.map((r) => {
    const t = totals.get(r.id) ?? { usd: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    return {
      id: r.id,
      workspaceId: r.workspaceId,
      workspaceSlug: workspace.slug,
      title: r.title,
      status: (sessionStatuses as readonly string[]).includes(r.status) ? (r.status as SessionStatus) : "idle",
      mode: r.mode,
      model: r.model,
      createdBy: { id: r.createdBy.id, name: r.createdBy.name },
      createdAt: r.createdAt.toISOString(),
      lastSeq: lastSeq.get(r.id) ?? 0,
      costUsd: t.usd,
      tokens: { input: t.input, output: t.output, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite },
      // Whether the live process allows it only the sidecar knows; the subscribe reply corrects this.
      bypassAvailable: settings.allowBypass,
      ...(r.archivedAt ? { archivedAt: r.archivedAt.toISOString() } : {}),
    };
  });
}

interface Totals {
  usd: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/**
 * Cost and tokens from a session's `result` lines in order. `usage` is per turn;
 * `total_cost_usd` is cumulative per CLI process, so a smaller total means a new process.
 */
export function totalsFromResults(payloads: readonly unknown[]): Totals {
  const t: Totals = { usd: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let lastTotal = 0;
  for (const raw of payloads) {
    if (!raw || typeof raw !== "object") continue;
    const p = raw as { type?: unknown; total_cost_usd?: unknown; total_cost?: unknown; cost_usd?: unknown; usage?: Record<string, unknown> };
    if (p.type !== "result") continue;
    const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    t.input += n(p.usage?.input_tokens);
    t.output += n(p.usage?.output_tokens);
    t.cacheRead += n(p.usage?.cache_read_input_tokens);
    t.cacheWrite += n(p.usage?.cache_creation_input_tokens);
    // CLI 1.0.x names the cumulative total `total_cost` / `cost_usd`
    const total = resultTotalCostUsd(p);
    if (total !== undefined) {
      t.usd += total >= lastTotal ? total - lastTotal : total;
      lastTotal = total;
    }
  }
  return t;
}

/**
 * Sessions as the sidecar stores them: membership lookups for authorization, the Session row
 * (created with a fresh claude session id, then kept current as the live child changes), and
 * the figures a session header shows.
 */
import { Prisma } from "@/generated/prisma/client";
import type { Db } from "./client";
import { hotExecute, hotRows } from "./hot-statements";
import { liveSessionStatuses } from "@/server/shared/wire/session";

/** A workspace as a session needs it, with the caller's role in it. */
export interface WorkspaceAccess {
  workspace: { id: string; slug: string; rootPath: string; allowBypass: boolean; defaultMode: string };
  /** The caller's membership role, as stored (owner, editor, viewer). */
  role: string;
}

/** A session row with its workspace and the caller's role; `role` is undefined for a non-member. */
export interface SessionAccess {
  session: SessionRow;
  workspace: WorkspaceAccess["workspace"];
  role: string | undefined;
}

/** The Session columns the sidecar reads. */
export interface SessionRow {
  id: string;
  workspaceId: string;
  createdById: string;
  claudeSessionId: string | null;
  status: string;
  mode: string;
  model: string | null;
  title: string | null;
  pid: number | null;
  /** Per-session cap passed to the CLI as --max-budget-usd; null for none. */
  maxBudgetUsd: number | null;
  /** The session's own git worktree (its CLI's cwd); null when it runs in the workspace root. */
  worktreePath: string | null;
  createdAt: Date;
  createdBy: { id: string; name: string };
}

const workspaceColumns = { id: true, slug: true, rootPath: true, allowBypass: true, defaultMode: true } as const;
const sessionColumns = {
  id: true,
  workspaceId: true,
  createdById: true,
  claudeSessionId: true,
  status: true,
  mode: true,
  model: true,
  title: true,
  pid: true,
  maxBudgetUsd: true,
  worktreePath: true,
  createdAt: true,
  createdBy: { select: { id: true, name: true } },
} as const;

/** The workspace with this slug and the user's role in it; undefined when either is missing. */
export async function findWorkspaceAccess(db: Db, userId: string, slug: string): Promise<WorkspaceAccess | undefined> {
  const workspace = await db.workspace.findUnique({
    where: { slug },
    select: { ...workspaceColumns, memberships: { where: { userId }, select: { role: true } } },
  });
  const role = workspace?.memberships[0]?.role;
  if (!workspace || role === undefined) return undefined;
  const { memberships: _memberships, ...rest } = workspace;
  return { workspace: rest, role };
}

/** The session, its workspace and the user's role; undefined when the session does not exist. */
export async function findSessionAccess(db: Db, userId: string, sessionId: string): Promise<SessionAccess | undefined> {
  // Every session command asks this first. One statement: through Prisma's relation select it
  // was four (the session, its creator, its workspace, the membership): 1.6 ms of the sidecar's
  // CPU a command on PostgreSQL against 0.65 ms for this one (SQLite: 0.8 against 0.5).
  const rows = await hotRows<AccessRow>(
    db,
    Prisma.sql`
    SELECT s."id", s."workspaceId", s."createdById", s."claudeSessionId", s."status", s."mode", s."model", s."title",
      s."pid", s."maxBudgetUsd", s."worktreePath", s."createdAt", u."name" AS "createdByName",
      w."slug", w."rootPath", w."allowBypass", w."defaultMode", m."role"
    FROM "Session" s
    JOIN "User" u ON u."id" = s."createdById"
    JOIN "Workspace" w ON w."id" = s."workspaceId"
    LEFT JOIN "Membership" m ON m."workspaceId" = s."workspaceId" AND m."userId" = ${userId}
    WHERE s."id" = ${sessionId} AND s."deletedAt" IS NULL`,
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    session: {
      id: row.id,
      workspaceId: row.workspaceId,
      createdById: row.createdById,
      claudeSessionId: row.claudeSessionId,
      status: row.status,
      mode: row.mode,
      model: row.model,
      title: row.title,
      pid: row.pid === null ? null : Number(row.pid),
      maxBudgetUsd: row.maxBudgetUsd === null ? null : Number(row.maxBudgetUsd),
      worktreePath: row.worktreePath,
      createdAt: row.createdAt instanceof Date ? row.createdAt : new Date(row.createdAt),
      createdBy: { id: row.createdById, name: row.createdByName },
    },
    workspace: {
      id: row.workspaceId,
      slug: row.slug,
      rootPath: row.rootPath,
      allowBypass: row.allowBypass === true || Number(row.allowBypass) === 1,
      defaultMode: row.defaultMode,
    },
    role: row.role ?? undefined,
  };
}

/** {@link findSessionAccess}'s row as either provider returns it (SQLite: booleans as 0/1, dates maybe as text). */
type AccessRow = Omit<SessionRow, "pid" | "createdAt" | "createdBy"> &
  Omit<WorkspaceAccess["workspace"], "id" | "allowBypass"> & {
    pid: number | bigint | null;
    createdAt: Date | string | number;
    createdByName: string;
    allowBypass: boolean | number | bigint;
    role: string | null;
  };

/** One session row, or undefined. */
export async function findSession(
  db: Db,
  sessionId: string,
): Promise<(SessionRow & { workspace: WorkspaceAccess["workspace"] }) | undefined> {
  const row = await db.session.findUnique({
    where: { id: sessionId, deletedAt: null },
    select: { ...sessionColumns, workspace: { select: workspaceColumns } },
  });
  return row ?? undefined;
}

/** Creates a session row (status `starting`). */
export async function insertSession(
  db: Db,
  data: {
    workspaceId: string;
    createdById: string;
    claudeSessionId: string;
    mode: string;
    model: string | null;
    sidecarId: string | null;
    maxBudgetUsd?: number | null;
  },
): Promise<SessionRow> {
  return db.session.create({ data: { ...data, status: "starting" }, select: sessionColumns });
}

/**
 * The session a `session:create` with this `commandId` made, when the user created it in the
 * workspace since `since` (a retried create must find its first outcome). One statement: the
 * command's event by the `(sessionId, commandId)` index, among that user's recent sessions there
 * (it was one lookup per recent session: a user's hundredth session of the day cost a hundred).
 */
export async function findSessionCreatedBy(
  db: Db,
  where: { workspaceId: string; userId: string; commandId: string; since: Date },
): Promise<string | undefined> {
  const row = await db.sessionEvent.findFirst({
    where: {
      commandId: where.commandId,
      session: { workspaceId: where.workspaceId, createdById: where.userId, createdAt: { gte: where.since } },
    },
    select: { sessionId: true },
  });
  return row?.sessionId;
}

/** The live fields of a session row, as they change. */
export interface SessionLiveFields {
  status?: string;
  mode?: string;
  model?: string | null;
  title?: string | null;
  pid?: number | null;
  sidecarId?: string | null;
  lastActivityAt?: Date;
}

/** The column of each live field (a fixed list: field names never reach the SQL from outside). */
const liveColumns: Record<keyof SessionLiveFields, Prisma.Sql> = {
  status: Prisma.sql`"status"`,
  mode: Prisma.sql`"mode"`,
  model: Prisma.sql`"model"`,
  title: Prisma.sql`"title"`,
  pid: Prisma.sql`"pid"`,
  sidecarId: Prisma.sql`"sidecarId"`,
  lastActivityAt: Prisma.sql`"lastActivityAt"`,
};

/**
 * Writes the live fields of a session row (and `updatedAt`, as Prisma would), and adds
 * `searchText` to the history search column when given (see {@link searchTextAppend}). One flat
 * UPDATE: this runs on every state change of every live session, and Prisma's `update` costs
 * several times the CPU (it also reads the whole row back, search text included).
 */
export async function updateSessionLive(
  db: Db,
  sessionId: string,
  fields: SessionLiveFields,
  searchText?: string,
): Promise<void> {
  const sets = (Object.keys(liveColumns) as (keyof SessionLiveFields)[])
    .filter((key) => fields[key] !== undefined)
    .map((key) => Prisma.sql`${liveColumns[key]} = ${fields[key]}`);
  if (searchText !== undefined && searchText !== "") sets.push(searchTextAppend(searchText));
  sets.push(Prisma.sql`"updatedAt" = ${new Date()}`);
  await hotExecute(db, Prisma.sql`UPDATE "Session" SET ${Prisma.join(sets, ", ")} WHERE "id" = ${sessionId}`);
}

/** The USD this session has cost so far: the sum of its cost entries (0 when there are none). */
export async function sumSessionCost(db: Db, sessionId: string): Promise<number> {
  // after every turn: one flat statement (Prisma's aggregate wraps it in a subquery)
  const [row] = await hotRows<{ usd: number | null }>(
    db,
    Prisma.sql`SELECT SUM("usd") AS "usd" FROM "CostEntry" WHERE "sessionId" = ${sessionId}`,
  );
  return row?.usd == null ? 0 : Number(row.usd);
}

/**
 * Pids recorded for live children (of `sidecarId`, or of no recorded sidecar): what a starting
 * sidecar hands to the reaper, since an earlier one may have died without stopping them.
 */
export async function listRecordedPids(db: Db, sidecarId?: string): Promise<number[]> {
  const owner = sidecarId === undefined ? {} : { OR: [{ sidecarId }, { sidecarId: null }] };
  const rows = await db.session.findMany({ where: { pid: { not: null }, ...owner }, select: { pid: true } });
  return rows.map((r) => r.pid).filter((pid): pid is number => pid !== null);
}

/** Statuses that claim a CLI child is alive. */
const liveStatuses: string[] = [...liveSessionStatuses];

/**
 * Marks sessions that claim a live child as stopped: run once when a sidecar starts, since the
 * children of an earlier sidecar are gone (reaped) and a prompt resumes the conversation.
 * With `sidecarId`, only the rows that sidecar owned (or that no sidecar claimed). Returns the count.
 */
export async function markOrphanedSessionsStopped(db: Db, sidecarId?: string): Promise<number> {
  const owner = sidecarId === undefined ? {} : { OR: [{ sidecarId }, { sidecarId: null }] };
  const [stale] = await db.$transaction([
    db.session.updateMany({
      where: { status: { in: liveStatuses }, ...owner },
      data: { status: "stopped", pid: null },
    }),
    db.session.updateMany({ where: { pid: { not: null }, ...owner }, data: { pid: null } }),
  ]);
  return stale.count;
}

/** Display names of users by id (for attributing commands in the log). */
export async function findUserNames(db: Db, userIds: readonly string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.user.findMany({ where: { id: { in: [...userIds] } }, select: { id: true, name: true } });
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** How much of a session's prompts and replies the history search keeps. */
export const SEARCH_TEXT_MAX_CHARS = 20_000;

/**
 * The assignment that adds prompts' and final replies' text (lower-cased, newline-joined) to the
 * session's `searchText`: the history search reads one column per session instead of scanning the
 * event log. The database appends and caps; a column at its cap is left as it is. It rides on the
 * row's live-field write (`updateSessionLive`), so a turn's two texts cost no statement of their own.
 */
function searchTextAppend(text: string): Prisma.Sql {
  const lower = text.toLowerCase();
  return Prisma.sql`"searchText" = CASE WHEN COALESCE(length("searchText"), 0) >= ${SEARCH_TEXT_MAX_CHARS} THEN "searchText"
      ELSE substr(CASE WHEN "searchText" IS NULL OR "searchText" = '' THEN ${lower} ELSE "searchText" || ${`\n${lower}`} END, 1, ${SEARCH_TEXT_MAX_CHARS}) END`;
}

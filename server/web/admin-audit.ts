/**
 * The audit log for administrators: newest first, a page at a time by an (at, id) cursor, never
 * the whole table; filtered by actor (email), workspace (slug), action (exact, or a family such
 * as `member.*`) and UTC date range. Objects are named and linked in bulk for the page
 * (`describeAuditObject`).
 */
import { z } from "zod";
import type { Prisma } from "@/generated/prisma/client";
import { getDb } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { AuditPage } from "@/server/shared/wire/admin";
import { describeAuditObject, sessionIdOf, type AuditLookups } from "@/server/web/admin-audit-links";

/** Rows per page. */
export const AUDIT_PAGE_SIZE = 50;

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "use YYYY-MM-DD");
const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

/** The filter form's fields (all optional; blank means unset). */
export const ZAuditParams = z.object({
  user: z.preprocess(blankToUndefined, z.string().trim().toLowerCase().max(320).optional()),
  workspace: z.preprocess(blankToUndefined, z.string().trim().max(200).optional()),
  action: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[A-Za-z.]+\*?$/, "letters and dots, optionally ending in *")
      .max(100)
      .optional(),
  ),
  from: z.preprocess(blankToUndefined, day.optional()),
  to: z.preprocess(blankToUndefined, day.optional()),
  cursor: z.preprocess(blankToUndefined, z.string().max(200).optional()),
});
export type AuditParams = z.infer<typeof ZAuditParams>;

/** Parses URL search params (first value of each); an invalid value is an `invalid_payload` error. */
export function parseAuditParams(raw: Record<string, string | string[] | undefined>): AuditParams {
  const flat = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const parsed = ZAuditParams.safeParse(flat);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AppError(
      ErrorCode.invalidPayload,
      `${first?.path.join(".") ?? "filter"}: ${first?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

function encodeCursor(at: Date, id: string): string {
  return `${at.toISOString()}_${id}`;
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  const cut = cursor.indexOf("_");
  const at = new Date(cursor.slice(0, cut));
  const id = cursor.slice(cut + 1);
  if (cut < 0 || Number.isNaN(at.getTime()) || id === "")
    throw new AppError(ErrorCode.invalidPayload, "cursor: invalid");
  return { at, id };
}

function nextDay(date: string): Date {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d;
}

/** One page of the audit log matching `params`. */
export async function readAuditLog(params: AuditParams, pageSize = AUDIT_PAGE_SIZE): Promise<AuditPage> {
  const db = getDb();
  const and: Prisma.AuditLogWhereInput[] = [];
  if (params.user) {
    const actor = await db.user.findUnique({ where: { email: params.user }, select: { id: true } });
    if (!actor) return { rows: [], nextCursor: null };
    and.push({ actorId: actor.id });
  }
  if (params.workspace) {
    const ws = await db.workspace.findUnique({ where: { slug: params.workspace }, select: { id: true } });
    if (!ws) return { rows: [], nextCursor: null };
    and.push({ workspaceId: ws.id });
  }
  if (params.action) {
    and.push(
      params.action.endsWith("*") ? { action: { startsWith: params.action.slice(0, -1) } } : { action: params.action },
    );
  }
  if (params.from) and.push({ at: { gte: new Date(`${params.from}T00:00:00.000Z`) } });
  if (params.to) and.push({ at: { lt: nextDay(params.to) } });
  if (params.cursor) {
    const { at, id } = decodeCursor(params.cursor);
    and.push({ OR: [{ at: { lt: at } }, { at, id: { lt: id } }] });
  }
  const rows = await db.auditLog.findMany({
    where: { AND: and },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: pageSize + 1,
    select: {
      id: true,
      at: true,
      action: true,
      objectType: true,
      objectId: true,
      workspaceId: true,
      details: true,
      actor: { select: { id: true, email: true, name: true } },
    },
  });
  const page = rows.slice(0, pageSize);
  const lookups = await lookUp(page);
  return {
    rows: page.map((r) => {
      const ws = r.workspaceId ? lookups.workspaces.get(r.workspaceId) : undefined;
      return {
        id: r.id,
        at: r.at.toISOString(),
        actor: r.actor,
        action: r.action,
        object: describeAuditObject(r, lookups),
        workspace: ws && r.workspaceId ? { id: r.workspaceId, ...ws } : null,
        details: r.details,
      };
    }),
    nextCursor: rows.length > pageSize && page.length > 0 ? encodeCursor(page.at(-1)!.at, page.at(-1)!.id) : null,
  };
}

/** The names a page of rows mentions: three flat statements, whatever the page size. */
async function lookUp(
  rows: { objectType: string; objectId: string; workspaceId: string | null; details: string | null }[],
): Promise<AuditLookups> {
  const db = getDb();
  const sessionIds = new Set<string>();
  const userIds = new Set<string>();
  for (const row of rows) {
    const sessionId = sessionIdOf(row);
    if (sessionId) sessionIds.add(sessionId);
    if (row.objectType === "user" || row.objectType === "membership") userIds.add(row.objectId);
  }
  const [sessions, users] = await Promise.all([
    db.session.findMany({
      where: { id: { in: [...sessionIds] } },
      select: { id: true, title: true, workspaceId: true },
    }),
    db.user.findMany({ where: { id: { in: [...userIds] } }, select: { id: true, email: true } }),
  ]);
  const workspaceIds = new Set<string>(sessions.map((s) => s.workspaceId));
  for (const row of rows) {
    if (row.workspaceId) workspaceIds.add(row.workspaceId);
    if (row.objectType === "workspace") workspaceIds.add(row.objectId);
  }
  const workspaces = await db.workspace.findMany({
    where: { id: { in: [...workspaceIds] } },
    select: { id: true, slug: true, name: true },
  });
  return {
    workspaces: new Map(workspaces.map((w) => [w.id, { slug: w.slug, name: w.name }])),
    sessions: new Map(sessions.map((s) => [s.id, { title: s.title, workspaceId: s.workspaceId }])),
    users: new Map(users.map((u) => [u.id, { email: u.email }])),
  };
}

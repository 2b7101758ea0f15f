/**
 * The history pages' data: the caller's workspaces (or one of them), the people and models to
 * filter by, a page of sessions, and one past session's transcript with its turn costs and
 * approvals. Membership is checked here; a non-member learns nothing.
 */
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { firstPromptsOf } from "@/server/db/session-events";
import type { TranscriptApproval } from "@/server/shared/wire/history";
import { listSessionHistory, listSessionTurnCosts, type HistoryPage, type TurnCost } from "@/server/db/session-history";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { isLiveSessionStatus, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import { findSession, readSessionEvents } from "@/server/web/sessions";
import { resumabilityOf, type Resumability } from "@/server/web/session-resume";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

const ZDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** `?q=&user=&status=&model=&from=&to=&workspace=&cursor=` */
export const ZHistoryParams = z.object({
  q: z.string().max(200).optional(),
  user: z.string().max(100).optional(),
  status: z.string().max(40).optional(),
  model: z.string().max(100).optional(),
  from: ZDay.optional(),
  to: ZDay.optional(),
  workspace: z.string().max(100).optional(),
  cursor: z.string().max(400).optional(),
});
export type HistoryParams = z.infer<typeof ZHistoryParams>;

export interface HistoryData {
  params: HistoryParams;
  page: HistoryPage;
  workspace: { slug: string; name: string } | null;
  people: { id: string; name: string }[];
  models: string[];
  /** The first prompt of each listed session without a title: the page names the session by it, as the workspace's list does. */
  firstPrompts: Record<string, string>;
}

const dayMs = 86_400_000;

/** Parses a page's searchParams; unknown or malformed fields are dropped. */
export function parseHistoryParams(input: Record<string, string | string[] | undefined>): HistoryParams {
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && value.trim() !== "") raw[k] = value.trim();
  }
  const parsed = ZHistoryParams.safeParse(raw);
  if (!parsed.success) throw new AppError(ErrorCode.invalidPayload, parsed.error.issues[0]?.message ?? "bad query");
  return parsed.data;
}

/** A page of the history `userId` may see. */
export async function readHistory(userId: string, params: HistoryParams): Promise<HistoryData> {
  const db = getDb();
  let workspaceIds: string[];
  let workspace: HistoryData["workspace"] = null;
  if (params.workspace) {
    const ws = await requireWorkspaceAccess(userId, params.workspace, "read");
    workspaceIds = [ws.id];
    workspace = { slug: ws.slug, name: ws.name };
  } else {
    const memberships = await db.membership.findMany({ where: { userId }, select: { workspaceId: true } });
    workspaceIds = memberships.map((m) => m.workspaceId);
  }
  const [page, people, models] = await Promise.all([
    listSessionHistory(db, {
      workspaceIds,
      q: params.q,
      userId: params.user,
      status: params.status,
      model: params.model,
      from: params.from ? new Date(`${params.from}T00:00:00Z`) : undefined,
      to: params.to ? new Date(Date.parse(`${params.to}T00:00:00Z`) + dayMs) : undefined,
      cursor: params.cursor,
    }),
    db.user.findMany({
      where: { memberships: { some: { workspaceId: { in: workspaceIds } } } },
      select: { id: true, name: true },
      orderBy: { name: "asc" },
      take: 500,
    }),
    db.session.findMany({
      where: { workspaceId: { in: workspaceIds }, model: { not: null } },
      distinct: ["model"],
      select: { model: true },
      take: 50,
    }),
  ]);
  return {
    params,
    page,
    workspace,
    people,
    models: models.map((m) => m.model).filter((m): m is string => m !== null),
    firstPrompts: await firstPromptsOf(
      db,
      page.rows.filter((r) => !r.title?.trim()).map((r) => r.id),
    ),
  };
}

export interface Transcript {
  workspace: { slug: string; name: string; rootPath: string };
  session: SessionView;
  events: WireEvent[];
  turnCosts: (TurnCost & { userName: string })[];
  approvals: TranscriptApproval[];
  live: boolean;
  /** Whether "Resume" can work (the CLI's conversation id and transcript exist). */
  resume: Resumability;
}

/** The whole transcript of one session, from the event log. */
export async function readTranscript(userId: string, slug: string, sessionId: string): Promise<Transcript> {
  const { workspace, session } = await findSession(userId, slug, sessionId);
  const db = getDb();
  const [events, turnCosts, approvals] = await Promise.all([
    readSessionEvents(userId, slug, sessionId),
    listSessionTurnCosts(db, sessionId),
    db.approval.findMany({
      where: { sessionId },
      orderBy: { createdAt: "asc" },
      include: { decidedBy: { select: { name: true } } },
    }),
  ]);
  const userIds = [...new Set(turnCosts.map((t) => t.userId))];
  const names = new Map(
    (await db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } })).map((u) => [
      u.id,
      u.name,
    ]),
  );
  return {
    workspace: { slug: workspace.slug, name: workspace.name, rootPath: workspace.rootPath },
    session,
    events,
    turnCosts: turnCosts.map((t) => ({ ...t, userName: names.get(t.userId) ?? t.userId })),
    approvals: approvals.map((a) => ({
      id: a.id,
      toolName: a.toolName,
      status: a.status,
      decidedBy: a.decidedBy?.name ?? null,
      createdAt: a.createdAt.toISOString(),
      decidedAt: a.decidedAt?.toISOString() ?? null,
      message: a.message,
    })),
    live: isLiveSessionStatus(session.status),
    resume: await resumabilityOf(
      {
        id: session.id,
        workspaceId: session.workspaceId,
        claudeSessionId:
          (await db.session.findUnique({ where: { id: session.id }, select: { claudeSessionId: true } }))
            ?.claudeSessionId ?? null,
      },
      turnCosts.length > 0 ||
        events.some((e) => e.kind === "cli" && (e.payload as { type?: string })?.type === "result"),
    ),
  };
}

/**
 * The facts the isolation policy reads before a spawn (`server/domain/session/isolation-policy.ts`):
 * how many accounts the instance has, and how many members the session's workspace has.
 */
import type { TenancyFacts } from "@/server/domain/session/isolation-policy";
import type { Db } from "./client";

/** Accounts on the instance and members of the session's workspace (a missing session: its workspace counts 0). */
export async function readTenancy(db: Db, sessionId: string): Promise<TenancyFacts> {
  const [accounts, session] = await Promise.all([
    db.user.count(),
    db.session.findUnique({ where: { id: sessionId }, select: { workspaceId: true } }),
  ]);
  const workspaceMembers = session === null ? 0 : await db.membership.count({ where: { workspaceId: session.workspaceId } });
  return { accounts, workspaceMembers };
}

/**
 * The reads and writes of adopting a dead sidecar's sessions (server/sidecar/cluster/adoption.ts):
 * which sessions it ran, the CLI pids it recorded, its pending approvals cancelled (each a
 * conditional UPDATE of a row still pending), its rows stopped and its leases deleted.
 */
import type { Db } from "./client";
import { liveSessionStatuses } from "@/server/shared/wire/session";

/** Statuses that claim a CLI child is alive. */
const liveStatuses: string[] = [...liveSessionStatuses];

/** Sessions the node ran: its Session rows and those it holds a lease on (not deleted ones). */
export async function sessionIdsOfNode(db: Db, nodeId: string): Promise<string[]> {
  const [rows, leases] = await Promise.all([
    db.session.findMany({ where: { sidecarId: nodeId, deletedAt: null }, select: { id: true } }),
    db.sessionLease.findMany({ where: { ownerId: nodeId }, select: { sessionId: true } }),
  ]);
  return [...new Set([...rows.map((r) => r.id), ...leases.map((l) => l.sessionId)])].sort();
}

/** The CLI pids the node recorded on its Session rows (only its own: never another node's). */
export async function recordedPidsOfNode(db: Db, nodeId: string): Promise<number[]> {
  const rows = await db.session.findMany({ where: { sidecarId: nodeId, pid: { not: null } }, select: { pid: true } });
  return rows.map((r) => r.pid).filter((pid): pid is number => pid !== null);
}

/**
 * Cancels the pending approvals of `sessionIds` with `message`: one conditional UPDATE (rows
 * still pending only, so a decision that won first stands). Returns the ids it cancelled.
 */
export async function cancelPendingApprovalsOf(db: Db, sessionIds: readonly string[], message: string, now: Date): Promise<string[]> {
  if (sessionIds.length === 0) return [];
  const rows = await db.approval.updateManyAndReturn({
    where: { status: "pending", sessionId: { in: [...sessionIds] } },
    data: { status: "cancelled", decidedAt: now, message },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** The members who may decide approvals in each workspace (owners and editors). */
export async function approvalDecidersOf(db: Db, workspaceIds: readonly string[]): Promise<Map<string, string[]>> {
  const rows = await db.membership.findMany({
    where: { workspaceId: { in: [...workspaceIds] }, role: { in: ["owner", "editor"] } },
    select: { workspaceId: true, userId: true },
  });
  const byWorkspace = new Map<string, string[]>();
  for (const row of rows) byWorkspace.set(row.workspaceId, [...(byWorkspace.get(row.workspaceId) ?? []), row.userId]);
  return byWorkspace;
}

/**
 * The node's sessions that still claim a live child become stopped, with no pid (the child is
 * gone, or about to be reaped; a prompt resumes the conversation). Only rows the node still
 * names: a session another node took over meanwhile is left alone. Returns the sessions changed.
 */
export async function stopSessionsOfNode(db: Db, nodeId: string, sessionIds: readonly string[]): Promise<string[]> {
  if (sessionIds.length === 0) return [];
  const rows = await db.session.updateManyAndReturn({
    where: { id: { in: [...sessionIds] }, sidecarId: nodeId, status: { in: liveStatuses } },
    data: { status: "stopped", pid: null },
    select: { id: true },
  });
  await db.session.updateMany({ where: { id: { in: [...sessionIds] }, sidecarId: nodeId, pid: { not: null } }, data: { pid: null } });
  return rows.map((r) => r.id);
}

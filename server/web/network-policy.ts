/**
 * A workspace's network policy as the web app shows and changes it: every member reads it (the
 * session header shows it), owners change it, audited as `workspace.network`. The sidecar reads
 * the columns fresh before each CLI spawn, so a change applies to sessions started or restarted
 * after it. Without a sandbox nothing can enforce a narrowed policy: the view says so, and the
 * sidecar refuses such a spawn rather than run it open.
 */
import { getDb } from "@/server/db/client";
import {
  networkPolicyColumns,
  networkPolicyOf,
  ZNetworkPolicyInput,
  type NetworkPolicy,
} from "@/server/domain/workspace/network-policy";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { sessionsUnisolated } from "@/server/web/sandbox-status";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

export { ZNetworkPolicyInput };

/** The policy, and whether this instance can enforce a narrowed one. */
export interface NetworkPolicyView extends NetworkPolicy {
  /** False when sessions run without a sandbox (a narrowed workspace's sessions are then refused). */
  enforceable: boolean;
}

async function policyOf(workspaceId: string): Promise<NetworkPolicy> {
  const ws = await getDb().workspace.findUnique({ where: { id: workspaceId }, select: { networkPolicy: true, networkDomains: true } });
  if (!ws) throw new AppError(ErrorCode.notFound, "No such workspace.");
  return networkPolicyOf(ws);
}

/** The policy of a workspace (members). */
export async function readNetworkPolicy(userId: string, slug: string): Promise<NetworkPolicyView> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return { ...(await policyOf(ws.id)), enforceable: !(await sessionsUnisolated()) };
}

/** Sets the policy (owners); audited with the old and the new policy. */
export async function setNetworkPolicy(userId: string, slug: string, policy: NetworkPolicy): Promise<NetworkPolicyView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const db = getDb();
  const before = await policyOf(ws.id);
  await db.$transaction([
    db.workspace.update({ where: { id: ws.id }, data: networkPolicyColumns(policy) }),
    db.auditLog.create({
      data: {
        actorId: userId,
        action: "workspace.network",
        objectType: "workspace",
        objectId: ws.id,
        workspaceId: ws.id,
        details: JSON.stringify({ from: before, to: policy }),
      },
    }),
  ]);
  return { ...policy, enforceable: !(await sessionsUnisolated()) };
}

/**
 * What `/api/health` says of the sidecars: `sidecarHealth` asks the first upstream's `/healthz`
 * (server/sidecar/metrics) which sidecar answers (its id) and its live sessions; `clusterHealth`
 * reads every node's heartbeat and unexpired leases from the database: which sidecars are alive
 * and what each owns.
 */
import { z } from "zod";
import type { Db } from "@/server/db/client";
import { readClusterHealth, type ClusterNodeHealth } from "@/server/db/cluster-health";
import { getEnv, sidecarUpstreamsOf } from "@/server/env/env";
import { deriveEdgeVouch, EDGE_VOUCH_HEADER } from "@/server/shared/edge-vouch";

/**
 * `clusterTimings.leaseMs` of server/sidecar/cluster (the web app may not import the sidecar):
 * a node whose heartbeat is older is dead. test/cluster/health.integration.test.ts holds the two equal.
 */
export const clusterLeaseMs = 6_000;

/** The cluster as `/api/health` shows it. */
export interface ClusterHealth {
  leaseMs: number;
  /** How many nodes are alive. */
  alive: number;
  nodes: ClusterNodeHealth[];
}

/** Every sidecar node with a heartbeat in the database: alive or not, and the leases it holds. */
export async function clusterHealth(db: Db, now: Date = new Date()): Promise<ClusterHealth> {
  const nodes = await readClusterHealth(db, clusterLeaseMs, now);
  return { leaseMs: clusterLeaseMs, alive: nodes.filter((n) => n.alive).length, nodes };
}

const ZSidecarHealth = z.object({ sidecarId: z.string(), pid: z.number().int(), liveSessions: z.number().int().min(0) });

/** Public (the health check needs no sign-in): the id and the count, not the process. */
export type SidecarHealth = { alive: true; id: string; liveSessions: number } | { alive: false };

export async function sidecarHealth(timeoutMs = 1000): Promise<SidecarHealth> {
  try {
    // the first of the edge's sidecars (this machine's own unless CONDUIT_SIDECAR_UPSTREAMS says otherwise);
    // it names itself only to a caller with the edge's vouch (server/sidecar/socket/port-gate)
    const env = getEnv();
    const res = await fetch(`${sidecarUpstreamsOf(env)[0]}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
      cache: "no-store",
      headers: env.NEXTAUTH_SECRET ? { [EDGE_VOUCH_HEADER]: await deriveEdgeVouch(env.NEXTAUTH_SECRET) } : {},
    });
    if (!res.ok) return { alive: false };
    const body = ZSidecarHealth.parse(await res.json());
    return { alive: true, id: body.sidecarId, liveSessions: body.liveSessions };
  } catch {
    return { alive: false };
  }
}

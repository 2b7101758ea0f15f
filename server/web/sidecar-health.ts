/**
 * What `/api/health` says of the sidecar: asks its `/healthz` (server/sidecar/metrics)
 * which sidecar is alive (its id) and what it owns (live sessions).
 */
import { z } from "zod";
import { getEnv, sidecarUpstreamsOf } from "@/server/env/env";

const ZSidecarHealth = z.object({ sidecarId: z.string(), pid: z.number().int(), liveSessions: z.number().int().min(0) });

/** Public (the health check needs no sign-in): the id and the count, not the process. */
export type SidecarHealth = { alive: true; id: string; liveSessions: number } | { alive: false };

export async function sidecarHealth(timeoutMs = 1000): Promise<SidecarHealth> {
  try {
    // the first of the edge's sidecars (this machine's own unless CONDUIT_SIDECAR_UPSTREAMS says otherwise)
    const res = await fetch(`${sidecarUpstreamsOf(getEnv())[0]}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
      cache: "no-store",
    });
    if (!res.ok) return { alive: false };
    const body = ZSidecarHealth.parse(await res.json());
    return { alive: true, id: body.sidecarId, liveSessions: body.liveSessions };
  } catch {
    return { alive: false };
  }
}

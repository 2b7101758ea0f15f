/**
 * What `/api/health` says of the sidecar: asks its loopback `/healthz` (server/sidecar/metrics)
 * which sidecar is alive (its id) and what it owns (live sessions).
 */
import { z } from "zod";
import { getEnv } from "@/server/env/env";

const ZSidecarHealth = z.object({ sidecarId: z.string(), pid: z.number().int(), liveSessions: z.number().int().min(0) });

/** Public (the health check needs no sign-in): the id and the count, not the process. */
export type SidecarHealth = { alive: true; id: string; liveSessions: number } | { alive: false };

export async function sidecarHealth(timeoutMs = 1000): Promise<SidecarHealth> {
  try {
    const res = await fetch(`http://127.0.0.1:${getEnv().CONDUIT_SIDECAR_PORT}/healthz`, {
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

import { getDb } from "@/server/db/client";
import { readSandboxStatus } from "@/server/web/sandbox-status";
import { clusterHealth, sidecarHealth } from "@/server/web/sidecar-health";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    const db = getDb();
    await db.user.count();
    // Which isolation the sidecar put in force ("unknown" until it has started).
    const status = await readSandboxStatus();
    const sandbox = status?.mode ?? "unknown";
    // Whether each session's CLI runs under a memory and process cap, by what (cgroups, or the
    // rlimit fallback), and which limits hold (`caps` kept as it was: on | off | unknown).
    const caps = status?.caps === undefined ? "unknown" : status.caps.on ? "on" : "off";
    const capsBy = status?.caps === undefined ? "unknown" : status.caps.on ? (status.caps.kind ?? "cgroup") : "off";
    const limits = status?.caps?.on === true ? (status.caps.limits ?? null) : null;
    // Who may start sessions: sandboxed, operator-off (CONDUIT_SANDBOX=off), or single-tenant (auto without a sandbox).
    const isolation = status?.isolation?.policy ?? "unknown";
    // Which sidecar is alive and what it owns; the web app is healthy without it (sessions wait).
    // `sidecar`: the one the web app reaches; `cluster`: every node's heartbeat and leases.
    const [sidecar, cluster] = await Promise.all([sidecarHealth(), clusterHealth(db)]);
    return Response.json({ ok: true, sandbox, isolation, caps, capsBy, limits, sidecar, cluster });
  } catch {
    return Response.json({ ok: false, error: { code: "unavailable", message: "The database is not reachable." } }, { status: 503 });
  }
}

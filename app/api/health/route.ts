import { getDb } from "@/server/db/client";
import { readSandboxStatus } from "@/server/web/sandbox-status";
import { sidecarHealth } from "@/server/web/sidecar-health";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    await getDb().user.count();
    // Which isolation the sidecar put in force ("unknown" until it has started).
    const status = await readSandboxStatus();
    const sandbox = status?.mode ?? "unknown";
    // Whether each session's CLI runs under a memory and process cap (cgroups).
    const caps = status?.caps === undefined ? "unknown" : status.caps.on ? "on" : "off";
    // Which sidecar is alive and what it owns; the web app is healthy without it (sessions wait).
    const sidecar = await sidecarHealth();
    return Response.json({ ok: true, sandbox, caps, sidecar });
  } catch {
    return Response.json({ ok: false, error: { code: "unavailable", message: "The database is not reachable." } }, { status: 503 });
  }
}

import { getDb } from "@/server/db/client";
import { readSandboxStatus } from "@/server/web/sandbox-status";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    await getDb().user.count();
    // Which isolation the sidecar put in force ("unknown" until it has started).
    const sandbox = (await readSandboxStatus())?.mode ?? "unknown";
    return Response.json({ ok: true, sandbox });
  } catch {
    return Response.json({ ok: false, error: { code: "unavailable", message: "The database is not reachable." } }, { status: 503 });
  }
}

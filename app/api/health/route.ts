import { getDb } from "@/server/db/client";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    await getDb().user.count();
    return Response.json({ ok: true });
  } catch {
    return Response.json({ ok: false, error: { code: "unavailable", message: "The database is not reachable." } }, { status: 503 });
  }
}

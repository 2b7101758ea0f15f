import { requireAdmin } from "@/server/web/admin";
import { readInstance } from "@/server/web/admin-instance";
import { handle } from "@/server/web/http";

export const dynamic = "force-dynamic";

/** Facts about this instance. Admins only: 404 for anyone else signed in, 401 signed out. */
export async function GET() {
  return handle(async () => {
    await requireAdmin();
    return Response.json({ data: await readInstance() });
  });
}

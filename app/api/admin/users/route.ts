import { requireAdmin } from "@/server/web/admin";
import { listAdminUsers } from "@/server/web/admin-users";
import { handle } from "@/server/web/http";

export const dynamic = "force-dynamic";

/** `?q=` searches email and name; `?cursor=` is the last email of the previous page. Admins only: 404 for anyone else signed in, 401 signed out. */
export async function GET(req: Request) {
  return handle(async () => {
    await requireAdmin();
    const url = new URL(req.url);
    const q = url.searchParams.get("q")?.slice(0, 320) ?? undefined;
    const cursor = url.searchParams.get("cursor")?.slice(0, 320) ?? undefined;
    return Response.json({ data: await listAdminUsers({ q, cursor }) });
  });
}

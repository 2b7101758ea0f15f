import { requireAdmin } from "@/server/web/admin";
import { parseAuditParams, readAuditLog } from "@/server/web/admin-audit";
import { handle } from "@/server/web/http";

export const dynamic = "force-dynamic";

/** One page of the audit log: `?user=<email>&workspace=<slug>&action=member.*&from=&to=&cursor=`. Admins only: 404 for anyone else signed in, 401 signed out. */
export async function GET(req: Request) {
  return handle(async () => {
    await requireAdmin();
    const params = parseAuditParams(Object.fromEntries(new URL(req.url).searchParams));
    return Response.json({ data: await readAuditLog(params) });
  });
}

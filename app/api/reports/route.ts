import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { parseReportParams, readReport } from "@/server/web/reports";

export const dynamic = "force-dynamic";

/** `GET /api/reports?from=YYYY-MM-DD&to=YYYY-MM-DD&groupBy=day|week|month&by=user|workspace|model` → `{ data: Report }`. */
export async function GET(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const params = parseReportParams(new URL(req.url).searchParams);
    return Response.json({ data: await readReport(user, params) });
  });
}

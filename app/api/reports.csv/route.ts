import { reportToCsv } from "@/server/db/cost-reports";
import { requireCurrentUser } from "@/server/web/auth";
import { handle } from "@/server/web/http";
import { parseReportParams, readReport } from "@/server/web/reports";

export const dynamic = "force-dynamic";

/** The table of `GET /api/reports` as CSV, with the same parameters. */
export async function GET(req: Request) {
  return handle(async () => {
    const user = await requireCurrentUser();
    const params = parseReportParams(new URL(req.url).searchParams);
    const report = await readReport(user, params);
    const name = `conduit-report-${params.from}-${params.to}-${params.groupBy}-${params.by}.csv`;
    return new Response(reportToCsv(report), {
      headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${name}"` },
    });
  });
}

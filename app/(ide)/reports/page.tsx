import type { Metadata } from "next";
import { ReportView } from "@/components/cost/report-view";
import { AppError } from "@/server/shared/errors/app-error";
import { requirePageUser } from "@/server/web/auth";
import { parseReportParams, readReport } from "@/server/web/reports";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Reports" };

export default async function ReportsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requirePageUser();
  let params;
  try {
    params = parseReportParams(await searchParams);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return (
      <p role="alert" className="text-sm text-red-600">
        {err.message}
      </p>
    );
  }
  const report = await readReport(user, params);
  return (
    <div className="space-y-4" data-testid="reports-page">
      <div>
        <h1 className="text-xl font-semibold">Reports</h1>
        <p className="text-sm text-zinc-500">
          {user.isAdmin
            ? "Everyone's cost and usage (you are an administrator)."
            : "Your own spend and your workspaces' spend."}{" "}
          Days are UTC. The same data as JSON:{" "}
          <code className="font-mono">/api/reports?{new URLSearchParams({ ...params }).toString()}</code>
        </p>
      </div>
      <ReportView report={report} params={params} />
    </div>
  );
}

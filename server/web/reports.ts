/**
 * Reports as the web app serves them: the query string parsed once with zod, the caller's scope
 * (admins everything; others their own spend and their workspaces'), then `buildReport`.
 */
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { buildReport, ReportBy, ReportGroupBy, type Report, type ReportScope } from "@/server/db/cost-reports";
import { getEnv } from "@/server/env/env";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { CurrentUser } from "@/server/web/auth";

const ZDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "use YYYY-MM-DD");

/** `?from=YYYY-MM-DD&to=YYYY-MM-DD&groupBy=day|week|month&by=user|workspace|model`; `to` is inclusive. */
export const ZReportParams = z.object({
  from: ZDay.optional(),
  to: ZDay.optional(),
  groupBy: z.enum([ReportGroupBy.day, ReportGroupBy.week, ReportGroupBy.month]).default("day"),
  by: z.enum([ReportBy.user, ReportBy.workspace, ReportBy.model]).default("user"),
});
export type ReportParams = z.infer<typeof ZReportParams>;

/** The parameters with defaults filled in: the current UTC month. */
export interface ResolvedReportParams {
  from: string;
  to: string;
  groupBy: ReportGroupBy;
  by: ReportBy;
}

const dayMs = 86_400_000;
/** Longest range a report covers: a little over two years of days. */
const maxRangeDays = 800;

/** Parses query parameters (a URLSearchParams or a page's searchParams object). */
export function parseReportParams(
  input: URLSearchParams | Record<string, string | string[] | undefined>,
): ResolvedReportParams {
  const raw: Record<string, string> = {};
  const entries = input instanceof URLSearchParams ? [...input.entries()] : Object.entries(input);
  for (const [k, v] of entries) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && value !== "") raw[k] = value;
  }
  const parsed = ZReportParams.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AppError(ErrorCode.invalidPayload, `${first?.path.join(".") ?? "query"}: ${first?.message ?? "invalid"}`);
  }
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0));
  const from = parsed.data.from ?? monthStart.toISOString().slice(0, 10);
  const to = parsed.data.to ?? monthEnd.toISOString().slice(0, 10);
  if (to < from) throw new AppError(ErrorCode.invalidPayload, "to: the range ends before it starts.");
  if ((Date.parse(to) - Date.parse(from)) / dayMs > maxRangeDays) {
    throw new AppError(ErrorCode.invalidPayload, `A report covers at most ${maxRangeDays} days.`);
  }
  return { from, to, groupBy: parsed.data.groupBy, by: parsed.data.by };
}

/** The report `user` may see for `params`. */
export async function readReport(user: CurrentUser, params: ResolvedReportParams): Promise<Report> {
  const db = getDb();
  let scope: ReportScope = { all: true };
  if (!user.isAdmin) {
    const memberships = await db.membership.findMany({ where: { userId: user.id }, select: { workspaceId: true } });
    scope = { userId: user.id, workspaceIds: memberships.map((m) => m.workspaceId) };
  }
  const provider = /^postgres(ql)?:\/\//.test(getEnv().DATABASE_URL ?? "") ? "postgresql" : "sqlite";
  return buildReport(db, provider, {
    from: new Date(`${params.from}T00:00:00Z`),
    to: new Date(Date.parse(`${params.to}T00:00:00Z`) + dayMs),
    groupBy: params.groupBy,
    by: params.by,
    scope,
  });
}

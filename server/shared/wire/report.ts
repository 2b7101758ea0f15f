/**
 * The shape of a cost and usage report, as `GET /api/reports` returns it and the reports page
 * draws it. Types only; the queries are `server/db/cost-reports.ts`.
 */

/** How rows are bucketed in time (UTC; weeks start on Monday). */
export const ReportGroupBy = { day: "day", week: "week", month: "month" } as const;
/** One of {@link ReportGroupBy}. */
export type ReportGroupBy = (typeof ReportGroupBy)[keyof typeof ReportGroupBy];

/** What each row is about. */
export const ReportBy = { user: "user", workspace: "workspace", model: "model" } as const;
/** One of {@link ReportBy}. */
export type ReportBy = (typeof ReportBy)[keyof typeof ReportBy];

/** Cost and usage figures of one bucket. */
export interface ReportFigures {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Results (turns as the user sees them). */
  turns: number;
  /** Sessions started. */
  sessions: number;
}

/** One table row: a period and a key (user, workspace or model). */
export interface ReportRow extends ReportFigures {
  /** `2026-11-30` (day), `2026-11-23` (the Monday of a week), `2026-11` (month). */
  period: string;
  /** The user id, workspace id or model name. */
  key: string;
  /** The user's or workspace's name; the model name. */
  label: string;
}

/** Approvals created in the range. */
export interface ApprovalStats {
  allowed: number;
  denied: number;
  expired: number;
  /** Median of decidedAt − createdAt over allowed and denied approvals; null when none. */
  medianDecideMs: number | null;
}

/** A whole report. */
export interface Report {
  /** ISO instant, inclusive. */
  from: string;
  /** ISO instant, exclusive. */
  to: string;
  groupBy: ReportGroupBy;
  by: ReportBy;
  rows: ReportRow[];
  totals: ReportFigures;
  approvals: ApprovalStats;
}

"use client";

import { useMemo } from "react";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { FilterDate, FilterSelect } from "@/components/filter-select";
import { formatCount, formatUsd } from "@/components/format/money";
import type { Report, ReportRow } from "@/server/shared/wire/report";

const palette = ["#4f46e5", "#0891b2", "#16a34a", "#ca8a04", "#dc2626", "#9333ea", "#db2777", "#64748b"];

function formatWait(ms: number | null): string {
  if (ms === null) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** The chart's data: one object per period, one USD field per key (stacked bars). */
function chartData(rows: readonly ReportRow[]): {
  data: Record<string, string | number>[];
  series: { key: string; label: string }[];
} {
  const byPeriod = new Map<string, Record<string, string | number>>();
  const series = new Map<string, string>();
  for (const row of rows) {
    series.set(row.key, row.label);
    const point = byPeriod.get(row.period) ?? { period: row.period };
    point[row.key] = Number(point[row.key] ?? 0) + row.usd;
    byPeriod.set(row.period, point);
  }
  return { data: [...byPeriod.values()], series: [...series].map(([key, label]) => ({ key, label })) };
}

/** The reports page's body: range form, totals, chart, table, CSV link. */
export function ReportView(props: {
  report: Report;
  params: { from: string; to: string; groupBy: string; by: string };
}) {
  const { report, params } = props;
  const { data, series } = useMemo(() => chartData(report.rows), [report.rows]);
  const query = new URLSearchParams(params).toString();
  const t = report.totals;
  return (
    <div className="space-y-6">
      <form
        method="get"
        data-testid="report-range"
        className="card flex flex-wrap items-end gap-3"
        aria-label="Report range"
      >
        <FilterDate label="From" name="from" value={params.from} testId="report-from" />
        <FilterDate label="To (inclusive)" name="to" value={params.to} testId="report-to" />
        <FilterSelect
          label="Per"
          name="groupBy"
          value={params.groupBy}
          options={[
            ["day", "day"],
            ["week", "week"],
            ["month", "month"],
          ]}
        />
        <FilterSelect
          label="By"
          name="by"
          value={params.by}
          options={[
            ["user", "user"],
            ["workspace", "workspace"],
            ["model", "model"],
          ]}
        />
        <button type="submit" className="btn py-1.5">
          Show
        </button>
        <a href={`/api/reports.csv?${query}`} download data-testid="report-csv" className="btn-quiet ml-auto py-1.5">
          Download CSV
        </a>
      </form>

      <section className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4" aria-label="Totals">
        <Figure label="Cost" value={formatUsd(t.usd)} testId="report-total-usd" />
        <Figure label="Turns" value={formatCount(t.turns)} />
        <Figure label="Sessions started" value={formatCount(t.sessions)} />
        <Figure label="Tokens in / out" value={`${formatCount(t.inputTokens)} / ${formatCount(t.outputTokens)}`} />
        <Figure
          label="Cache read / write"
          value={`${formatCount(t.cacheReadTokens)} / ${formatCount(t.cacheWriteTokens)}`}
        />
        <Figure
          label="Approvals allowed / denied / expired"
          value={`${report.approvals.allowed} / ${report.approvals.denied} / ${report.approvals.expired}`}
        />
        <Figure label="Median time to decide" value={formatWait(report.approvals.medianDecideMs)} />
      </section>

      <section className="card" data-testid="report-chart" aria-label="Cost chart">
        <h2 className="mb-3 text-sm font-medium text-zinc-500">
          Cost per {report.groupBy} by {report.by} (USD)
        </h2>
        {data.length === 0 ? (
          <p className="text-sm text-zinc-500">Nothing was spent in this range.</p>
        ) : (
          <div className="h-72 w-full">
            <ResponsiveContainer width="100%" height="100%">
              <BarChart data={data}>
                <CartesianGrid strokeDasharray="3 3" opacity={0.3} />
                <XAxis dataKey="period" fontSize={11} />
                <YAxis fontSize={11} tickFormatter={(v: number) => `$${v}`} />
                <Tooltip formatter={(v) => formatUsd(Number(v))} />
                <Legend />
                {series.map((s, i) => (
                  <Bar key={s.key} dataKey={s.key} name={s.label} stackId="usd" fill={palette[i % palette.length]} />
                ))}
              </BarChart>
            </ResponsiveContainer>
          </div>
        )}
      </section>

      <section className="card overflow-x-auto" aria-label="Report table">
        {/* cells padded and kept on one line: on a phone the figures scroll inside the card, never run together */}
        <table
          data-testid="report-table"
          className="w-full text-sm [&_td]:px-2 [&_td]:whitespace-nowrap [&_td:first-child]:pl-0 [&_td:last-child]:pr-0 [&_th]:px-2 [&_th]:whitespace-nowrap [&_th:first-child]:pl-0 [&_th:last-child]:pr-0"
        >
          <thead className="text-left text-xs text-zinc-500">
            <tr>
              <th className="py-1">Period</th>
              <th className="capitalize">{report.by}</th>
              <th className="text-right">USD</th>
              <th className="text-right">Input</th>
              <th className="text-right">Output</th>
              <th className="text-right">Cache read</th>
              <th className="text-right">Cache write</th>
              <th className="text-right">Turns</th>
              <th className="text-right">Sessions</th>
            </tr>
          </thead>
          <tbody>
            {report.rows.map((r) => (
              <tr
                key={`${r.period}-${r.key}`}
                data-testid="report-row"
                className="border-t border-zinc-100 dark:border-zinc-800"
              >
                <td className="py-1 font-mono text-xs">{r.period}</td>
                <td>{r.label}</td>
                <FigureCells of={r} />
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr data-testid="report-total" className="border-t-2 border-zinc-300 font-medium dark:border-zinc-700">
              <td className="py-1">Total</td>
              <td />
              <FigureCells of={t} usdTestId="report-total-cell-usd" />
            </tr>
          </tfoot>
        </table>
      </section>
    </div>
  );
}

function Figure(props: { label: string; value: string; testId?: string }) {
  return (
    <div className="rounded-md border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900">
      <div className="text-xs text-zinc-500">{props.label}</div>
      <div className="font-mono" data-testid={props.testId}>
        {props.value}
      </div>
    </div>
  );
}

/** A row's figures, a row of the report and its total alike: dollars, then the counts. */
function FigureCells({ of: f, usdTestId }: { of: FigureRow; usdTestId?: string }) {
  return (
    <>
      <Usd usd={f.usd} testId={usdTestId} />
      <Count n={f.inputTokens} />
      <Count n={f.outputTokens} />
      <Count n={f.cacheReadTokens} />
      <Count n={f.cacheWriteTokens} />
      <Count n={f.turns} />
      <Count n={f.sessions} />
    </>
  );
}

type FigureRow = Record<"usd" | "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "turns" | "sessions", number>;

/** A table's dollar cell: formatted as everywhere else, the exact figure (as in the CSV) in `data-usd` and on hover. */
function Usd({ usd, testId }: { usd: number; testId?: string }) {
  return (
    <td className="text-right font-mono" data-testid={testId} data-usd={usd} title={`$${usd}`}>
      {formatUsd(usd)}
    </td>
  );
}

function Count({ n }: { n: number }) {
  return <td className="text-right font-mono">{formatCount(n)}</td>;
}

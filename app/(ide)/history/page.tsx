import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { FilterDate, FilterSelect } from "@/components/filter-select";
import { formatUsd } from "@/components/format/money";
import { sessionTitle } from "@/components/session/format";
import { statusLabel } from "@/components/session/status-badge";
import { checkHistoryFilters, historyStatuses } from "./filters";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requirePageUser } from "@/server/web/auth";
import { parseHistoryParams, readHistory, type HistoryParams } from "@/server/web/history";

export const dynamic = "force-dynamic";

const statuses = [["", "any status"], ...historyStatuses.map((s) => [s, s] as const)] as const;

function hrefWith(params: HistoryParams, change: Partial<HistoryParams>): string {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...params, ...change })) if (v) merged[k] = v;
  return `/history?${new URLSearchParams(merged).toString()}`;
}

export const metadata: Metadata = { title: "History" };

export default async function HistoryPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requirePageUser();
  const { clean, problems } = checkHistoryFilters(await searchParams);
  let params: HistoryParams;
  try {
    params = parseHistoryParams(clean);
  } catch (err) {
    problems.push(
      err instanceof AppError ? `The filters could not be read: ${err.message}.` : "The filters could not be read.",
    );
    params = clean.workspace ? parseHistoryParams({ workspace: clean.workspace.slice(0, 100) }) : {};
  }
  const data = await readHistory(user.id, params).catch((err: unknown) => {
    if (err instanceof AppError && err.code === ErrorCode.notFound) notFound();
    throw err;
  });
  const { page, people, models } = data;
  return (
    <div className="space-y-4" data-testid="history-page">
      <div>
        <h1 className="text-xl font-semibold [overflow-wrap:anywhere]">History{data.workspace ? ` · ${data.workspace.name}` : ""}</h1>
        <p className="text-sm text-zinc-500">
          {data.workspace ? (
            <Link href="/history" className="hover:underline">
              All your workspaces
            </Link>
          ) : (
            "Sessions of all your workspaces, newest first."
          )}
        </p>
      </div>
      <form method="get" className="card flex flex-wrap items-end gap-3" aria-label="Search history">
        {data.workspace && <input type="hidden" name="workspace" value={data.workspace.slug} />}
        <label className="min-w-48 flex-1 space-y-1 text-sm">
          <span className="block text-xs text-zinc-500">Prompts and replies contain</span>
          <input data-testid="history-search" name="q" defaultValue={params.q} type="search" className="field py-1.5" />
        </label>
        <FilterSelect
          label="Started by"
          name="user"
          value={params.user ?? ""}
          options={[["", "anyone"], ...people.map((p) => [p.id, p.name] as const)]}
          testId="history-filter-user"
        />
        <FilterSelect
          label="Status"
          name="status"
          value={params.status ?? ""}
          options={statuses}
          testId="history-filter-status"
        />
        <FilterSelect
          label="Model"
          name="model"
          value={params.model ?? ""}
          options={[["", "any model"], ...models.map((m) => [m, m] as const)]}
          testId="history-filter-model"
        />
        <FilterDate label="From" name="from" value={params.from} testId="history-from" />
        <FilterDate label="To" name="to" value={params.to} testId="history-to" />
        <button type="submit" data-testid="history-submit" className="btn py-1.5">
          Search
        </button>
      </form>
      {problems.length > 0 && (
        <div
          role="alert"
          data-testid="history-filter-error"
          className="card border-red-300 text-sm dark:border-red-900"
        >
          <p className="font-medium text-red-700 dark:text-red-400">These filters cannot be used:</p>
          <ul className="mt-1 list-disc pl-5 text-red-700 dark:text-red-400">
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
          <p className="mt-2 text-zinc-600 dark:text-zinc-400">
            Correct them above, or{" "}
            <Link
              href={data.workspace ? `/history?workspace=${encodeURIComponent(data.workspace.slug)}` : "/history"}
              className="text-indigo-600 hover:underline dark:text-indigo-400"
            >
              clear all filters
            </Link>
            .
          </p>
        </div>
      )}
      {problems.length === 0 && (
        <section className="card overflow-x-auto">
          {page.rows.length === 0 ? (
            <p className="text-sm text-zinc-500" data-testid="history-empty">
              No sessions match.
            </p>
          ) : (
            <table data-testid="history-list" className="w-full text-sm [&_td]:pr-3 [&_td]:align-top [&_th]:pr-3 [&_th]:whitespace-nowrap">
              <thead className="text-left text-xs text-zinc-500">
                <tr>
                  <th className="py-1">Session</th>
                  <th className="hidden sm:table-cell">Workspace</th>
                  <th>Started by</th>
                  <th>Status</th>
                  <th className="hidden md:table-cell">Model</th>
                  <th>Started</th>
                  <th className="hidden text-right sm:table-cell">Turns</th>
                  <th className="text-right !pr-0">Cost</th>
                </tr>
              </thead>
              <tbody>
                {page.rows.map((r) => (
                  <tr key={r.id} data-testid="history-row" className="border-t border-zinc-100 dark:border-zinc-800">
                    <td className="py-1">
                      <Link
                        href={`/history/${encodeURIComponent(r.workspace.slug)}/${encodeURIComponent(r.id)}`}
                        className="text-indigo-600 hover:underline dark:text-indigo-400"
                      >
                        {sessionTitle(r, data.firstPrompts[r.id])}
                      </Link>
                      {/* on a phone the hidden columns' facts go under the title */}
                      <span className="block text-xs text-zinc-500 sm:hidden">
                        {r.workspace.name} · {r.turns} {r.turns === 1 ? "turn" : "turns"}
                      </span>
                    </td>
                    <td className="hidden sm:table-cell">{r.workspace.name}</td>
                    <td>{r.createdBy.name}</td>
                    <td data-status={r.status}>{statusLabel(r.status)}</td>
                    <td className="hidden font-mono text-xs md:table-cell">{r.model ?? "default"}</td>
                    <td className="whitespace-nowrap font-mono text-xs">
                      <span className="hidden sm:inline">{r.createdAt.slice(0, 10)} </span>
                      {r.createdAt.slice(11, 16)}
                      <span className="block sm:hidden">{r.createdAt.slice(5, 10)}</span>
                    </td>
                    <td className="hidden text-right sm:table-cell">{r.turns}</td>
                    <td className="whitespace-nowrap text-right font-mono !pr-0">{formatUsd(r.costUsd)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <div className="mt-3 flex gap-3 text-sm">
            {params.cursor && (
              <Link href={hrefWith(params, { cursor: undefined })} className="btn-quiet py-1">
                First page
              </Link>
            )}
            {page.nextCursor && (
              <Link
                data-testid="history-next"
                href={hrefWith(params, { cursor: page.nextCursor })}
                className="btn-quiet py-1"
              >
                Older sessions
              </Link>
            )}
          </div>
        </section>
      )}
    </div>
  );
}

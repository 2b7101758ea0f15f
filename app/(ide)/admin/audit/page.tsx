import Link from "next/link";
import { FilterDate, FilterSelect } from "@/components/filter-select";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requireAdminPage } from "@/server/web/admin";
import { parseAuditParams, readAuditLog, type AuditParams } from "@/server/web/admin-audit";

export const dynamic = "force-dynamic";

const actionFamilies = [
  ["", "any action"],
  ["approval.*", "approvals"],
  ["member.*", "member changes"],
  ["user.*", "accounts"],
  ["invitation.*", "invitations"],
  ["workspace.*", "workspace settings"],
  ["permissionRule.*", "permission rules"],
] as const;

function hrefWith(params: AuditParams, change: Partial<AuditParams>): string {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...params, ...change })) if (v) merged[k] = v;
  return `/admin/audit?${new URLSearchParams(merged).toString()}`;
}

/** Who did what to which object, when: filtered, newest first, a page at a time. */
export default async function AdminAuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  await requireAdminPage();
  let params: AuditParams;
  let problem: string | undefined;
  try {
    params = parseAuditParams(await searchParams);
  } catch (err) {
    params = {};
    problem = err instanceof AppError && err.code === ErrorCode.invalidPayload ? err.message : "Invalid filter.";
  }
  const page = await readAuditLog(params);
  const known = actionFamilies.some(([value]) => value === (params.action ?? ""));
  const actions = known ? actionFamilies : [...actionFamilies, [params.action!, params.action!] as const];
  return (
    <div className="space-y-4" data-testid="admin-audit">
      <form
        method="get"
        action="/admin/audit"
        className="card flex flex-wrap items-end gap-3"
        aria-label="Filter the audit log"
      >
        <label className="space-y-1 text-sm">
          <span className="block text-xs text-zinc-500">By (email)</span>
          <input
            data-testid="audit-filter-user"
            name="user"
            type="email"
            defaultValue={params.user}
            className="field py-1.5"
          />
        </label>
        <label className="space-y-1 text-sm">
          <span className="block text-xs text-zinc-500">Workspace (slug)</span>
          <input
            data-testid="audit-filter-workspace"
            name="workspace"
            defaultValue={params.workspace}
            className="field py-1.5"
          />
        </label>
        <FilterSelect
          label="Action"
          name="action"
          value={params.action ?? ""}
          options={actions}
          testId="audit-filter-action"
        />
        <FilterDate label="From" name="from" value={params.from} testId="audit-filter-from" />
        <FilterDate label="To" name="to" value={params.to} testId="audit-filter-to" />
        <button type="submit" data-testid="audit-filter-submit" className="btn py-1.5">
          Filter
        </button>
        <Link href="/admin/audit" className="btn-quiet py-1.5">
          Clear
        </Link>
      </form>
      {problem && (
        <p role="alert" data-testid="audit-filter-error" className="text-sm text-red-600 dark:text-red-400">
          {problem}
        </p>
      )}
      <section className="card overflow-x-auto">
        {page.rows.length === 0 ? (
          <p className="text-sm text-zinc-500" data-testid="audit-empty">
            Nothing recorded matches.
          </p>
        ) : (
          <table className="w-full text-sm [&_td]:pr-3 [&_th]:pr-3" data-testid="audit-list">
            <thead className="text-left text-xs text-zinc-500">
              <tr>
                <th className="py-1">When (UTC)</th>
                <th>Who</th>
                <th>Action</th>
                <th>Object</th>
                <th>Workspace</th>
              </tr>
            </thead>
            <tbody>
              {page.rows.map((row) => (
                <tr
                  key={row.id}
                  data-testid="audit-row"
                  data-action={row.action}
                  data-object-type={row.object.type}
                  data-object-id={row.object.id}
                  className="border-t border-zinc-200 align-top dark:border-zinc-800"
                >
                  <td className="py-2 font-mono text-xs whitespace-nowrap" title={row.at}>
                    {row.at.slice(0, 19).replace("T", " ")}
                  </td>
                  <td className="py-2 text-xs">
                    {row.actor ? row.actor.email : <span className="text-zinc-500">Conduit</span>}
                  </td>
                  <td className="py-2 font-mono text-xs">{row.action}</td>
                  <td className="py-2 text-xs">
                    {row.object.href ? (
                      <Link
                        href={row.object.href}
                        data-testid="audit-object-link"
                        className="text-indigo-700 hover:underline dark:text-indigo-300"
                      >
                        {row.object.label}
                      </Link>
                    ) : (
                      row.object.label
                    )}
                    <span className="ml-1 text-zinc-500">
                      ({row.object.type} {row.object.id.slice(0, 8)})
                    </span>
                    {row.details && (
                      <details className="mt-1">
                        <summary className="cursor-pointer text-zinc-500">details</summary>
                        <pre className="mt-1 max-h-48 max-w-md overflow-auto text-xs break-all whitespace-pre-wrap">
                          {row.details}
                        </pre>
                      </details>
                    )}
                  </td>
                  <td className="py-2 text-xs">
                    {row.workspace ? (
                      <Link href={`/w/${encodeURIComponent(row.workspace.slug)}`} className="hover:underline">
                        {row.workspace.name}
                      </Link>
                    ) : (
                      "—"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div className="mt-3 flex gap-3 text-sm">
          {params.cursor && (
            <Link href={hrefWith(params, { cursor: undefined })} className="hover:underline">
              Newest
            </Link>
          )}
          {page.nextCursor && (
            <Link
              href={hrefWith(params, { cursor: page.nextCursor })}
              data-testid="audit-next"
              className="hover:underline"
            >
              Older
            </Link>
          )}
        </div>
      </section>
    </div>
  );
}

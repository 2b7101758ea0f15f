import Link from "next/link";
import { UserRowActions } from "@/components/admin/user-row-actions";
import { formatRelative, formatUsd } from "@/components/session/format";
import { requireAdminPage } from "@/server/web/admin";
import { listAdminUsers } from "@/server/web/admin-users";

export const dynamic = "force-dynamic";

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.trim() ? v.trim().slice(0, 320) : undefined;
}

/** The admin's user list: search, roles, last sign-in, workspaces, this month's spend and budget. */
export default async function AdminUsersPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const admin = await requireAdminPage();
  const raw = await searchParams;
  const q = first(raw.q);
  const cursor = first(raw.cursor);
  const page = await listAdminUsers({ q, cursor });
  const now = Date.now();
  const withQ = (extra: Record<string, string>) =>
    `/admin?${new URLSearchParams({ ...(q ? { q } : {}), ...extra }).toString()}`;
  return (
    <div className="space-y-4" data-testid="admin-users">
      <form method="get" action="/admin" role="search" className="card flex flex-wrap items-end gap-3">
        <label className="min-w-48 flex-1 space-y-1 text-sm">
          <span className="block text-xs text-zinc-500">Email or name contains</span>
          <input data-testid="admin-user-search" name="q" type="search" defaultValue={q} className="field py-1.5" />
        </label>
        <button type="submit" data-testid="admin-user-search-submit" className="btn py-1.5">
          Search
        </button>
        {q && (
          <Link href="/admin" className="btn-quiet py-1.5">
            Clear
          </Link>
        )}
      </form>
      <section className="card overflow-x-auto">
        {page.users.length === 0 ? (
          <p className="text-sm text-zinc-500" data-testid="admin-users-empty">
            No account matches.
          </p>
        ) : (
          <table className="w-full text-sm [&_td]:pr-3 [&_th]:pr-3" data-testid="admin-user-list">
            <thead className="text-left text-xs text-zinc-500">
              <tr>
                <th className="py-1">Account</th>
                <th>Role</th>
                <th>Last sign-in</th>
                <th>Workspaces</th>
                <th className="text-right">This month</th>
                <th className="text-right">Manage</th>
              </tr>
            </thead>
            <tbody>
              {page.users.map((u) => (
                <tr
                  key={u.id}
                  data-testid="admin-user-row"
                  data-email={u.email}
                  data-admin={u.isAdmin ? "true" : "false"}
                  data-disabled={u.disabledAt ? "true" : "false"}
                  className="border-t border-zinc-200 align-top dark:border-zinc-800"
                >
                  <td className="py-2">
                    <div className="font-medium">{u.name}</div>
                    <div className="text-xs text-zinc-500">{u.email}</div>
                  </td>
                  <td className="py-2">
                    <span data-testid="admin-user-role">{u.isAdmin ? "admin" : "member"}</span>
                    {u.disabledAt && (
                      <span
                        data-testid="admin-user-disabled"
                        className="ml-1 rounded bg-red-100 px-1 text-xs text-red-800 dark:bg-red-950 dark:text-red-200"
                      >
                        disabled
                      </span>
                    )}
                  </td>
                  <td className="py-2 text-xs" title={u.lastSignInAt ?? undefined}>
                    {u.lastSignInAt ? formatRelative(u.lastSignInAt, now) : "never"}
                  </td>
                  <td className="py-2 text-xs">
                    {u.workspaceCount === 0
                      ? "none"
                      : u.workspaces.map((w, i) => (
                          <span key={w.slug}>
                            {i > 0 && ", "}
                            <Link href={`/w/${encodeURIComponent(w.slug)}`} className="hover:underline">
                              {w.name}
                            </Link>{" "}
                            <span className="text-zinc-500">({w.role})</span>
                          </span>
                        ))}
                    {u.workspaceCount > u.workspaces.length && ` and ${u.workspaceCount - u.workspaces.length} more`}
                  </td>
                  <td className="py-2 text-right tabular-nums" data-testid="admin-user-spend">
                    {formatUsd(u.monthSpentUsd)}
                    <div className="text-xs text-zinc-500" data-testid="admin-user-budget-shown">
                      {u.monthlyBudgetUsd === null ? "no budget" : `of ${formatUsd(u.monthlyBudgetUsd)}`}
                    </div>
                  </td>
                  <td className="py-2">
                    <UserRowActions
                      userId={u.id}
                      email={u.email}
                      isAdmin={u.isAdmin}
                      disabled={u.disabledAt !== null}
                      isSelf={u.id === admin.id}
                      monthlyBudgetUsd={u.monthlyBudgetUsd}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <div className="mt-3 flex gap-3 text-sm">
          {cursor && (
            <Link href={withQ({})} className="hover:underline">
              First page
            </Link>
          )}
          {page.nextCursor && (
            <Link href={withQ({ cursor: page.nextCursor })} data-testid="admin-users-next" className="hover:underline">
              Next page
            </Link>
          )}
        </div>
      </section>
    </div>
  );
}

import type { Metadata } from "next";
import Link from "next/link";
import { WorkspaceCreateForm } from "@/components/workspace-create-form";
import { requirePageUser } from "@/server/web/auth";
import { formatRelative } from "@/components/session/format";
import { listWorkspaceActivity, listWorkspaces, type WorkspaceActivity } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Workspaces" };

export default async function WorkspacesPage() {
  const user = await requirePageUser();
  const workspaces = await listWorkspaces(user.id);
  const activity = await listWorkspaceActivity(workspaces.map((w) => w.id));
  return (
    <div className="space-y-6">
      <h1 className="text-xl font-semibold">Workspaces</h1>
      <WorkspaceCreateForm />
      <section className="card">
        <h2 className="mb-3 text-sm font-medium text-zinc-500">Yours</h2>
        {workspaces.length === 0 ? (
          <p data-testid="workspace-list" className="text-sm text-zinc-500">
            No workspaces yet. Create one above: it is a directory on the server where Claude Code works.
          </p>
        ) : (
          <ul data-testid="workspace-list" className="divide-y divide-zinc-200 dark:divide-zinc-800">
            {workspaces.map((w) => (
              <li key={w.id} className="flex flex-wrap items-center justify-between gap-x-4 gap-y-1 py-2">
                <div className="min-w-0">
                  <Link data-testid="workspace-link" href={`/w/${w.slug}`} className="font-medium [overflow-wrap:anywhere] text-indigo-600 hover:underline">
                    {w.name}
                  </Link>
                  <p data-testid="workspace-activity" className="text-xs text-zinc-500">
                    {describeActivity(activity[w.id])}
                  </p>
                </div>
                <span className="min-w-0 text-xs text-zinc-500">
                  <span className="mr-3 font-mono break-all">{w.rootPath}</span>
                  {w.role}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

/** "3 sessions · 1 working · active 5 min ago", or "no sessions yet". */
function describeActivity(a: WorkspaceActivity | undefined): string {
  if (!a || a.sessions === 0) return "no sessions yet";
  const parts = [`${a.sessions} session${a.sessions === 1 ? "" : "s"}`];
  if (a.working > 0) parts.push(`${a.working} working`);
  if (a.lastActivityAt) parts.push(`active ${formatRelative(a.lastActivityAt)}`);
  return parts.join(" · ");
}

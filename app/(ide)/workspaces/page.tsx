import Link from "next/link";
import { WorkspaceCreateForm } from "@/components/workspace-create-form";
import { requirePageUser } from "@/server/web/auth";
import { listWorkspaces } from "@/server/web/workspaces";

export const dynamic = "force-dynamic";

export default async function WorkspacesPage() {
  const user = await requirePageUser();
  const workspaces = await listWorkspaces(user.id);
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
              <li key={w.id} className="flex items-center justify-between py-2">
                <Link data-testid="workspace-link" href={`/w/${w.slug}`} className="font-medium text-indigo-600 hover:underline">
                  {w.name}
                </Link>
                <span className="text-xs text-zinc-500">
                  <span className="mr-3 font-mono">{w.rootPath}</span>
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

import Link from "next/link";

/** Any page that does not exist, or that the reader may not see (non-members get the same answer). */
export default function NotFound() {
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div className="card max-w-md space-y-3 text-center" data-testid="not-found">
        <p className="font-mono text-sm text-zinc-500">404</p>
        <h1 className="text-lg font-semibold tracking-tight">Page not found</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          This page does not exist, or you are not a member of the workspace it belongs to.
        </p>
        <Link href="/workspaces" className="btn">
          Your workspaces
        </Link>
      </div>
    </main>
  );
}

"use client";

import Link from "next/link";

/** A page that failed while rendering: says so, offers a retry, and shows the digest to quote to an admin. */
export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div role="alert" className="card max-w-md space-y-3 text-center" data-testid="error-page">
        <h1 className="text-lg font-semibold tracking-tight">Something went wrong</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          This page could not be shown. Nothing you typed elsewhere is lost; try again, or go back to your workspaces.
        </p>
        {error.digest && (
          <p className="text-xs text-zinc-500">
            Reference for an admin: <span className="font-mono">{error.digest}</span>
          </p>
        )}
        <div className="flex justify-center gap-2">
          <button type="button" className="btn" onClick={() => reset()}>
            Try again
          </button>
          <Link href="/workspaces" className="btn-quiet">
            Your workspaces
          </Link>
        </div>
      </div>
    </main>
  );
}

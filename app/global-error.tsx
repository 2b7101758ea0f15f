"use client";

import "./globals.css";

/** The root layout itself failed: a whole document in the app's style, with a retry. */
export default function GlobalError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        <main className="flex min-h-screen items-center justify-center p-6">
          <div role="alert" className="card max-w-md space-y-3 text-center">
            <h1 className="text-lg font-semibold tracking-tight">Conduit could not load this page</h1>
            <p className="text-sm text-zinc-600 dark:text-zinc-400">Try again in a moment.</p>
            {error.digest && (
              <p className="text-xs text-zinc-500">
                Reference for an admin: <span className="font-mono">{error.digest}</span>
              </p>
            )}
            <div className="flex justify-center gap-2">
              <button type="button" className="btn" onClick={() => reset()}>
                Try again
              </button>
              {/* a plain link: the app's router may be what failed */}
              <a href="/workspaces" className="btn-quiet">
                Your workspaces
              </a>
            </div>
          </div>
        </main>
      </body>
    </html>
  );
}

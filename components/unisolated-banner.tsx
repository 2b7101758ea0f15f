export function UnisolatedBanner() {
  return (
    <div
      data-testid="unisolated-banner"
      role="alert"
      className="bg-red-100 px-4 py-2 text-center text-sm text-red-900 dark:bg-red-900/40 dark:text-red-100"
    >
      Sessions are not isolated on this server: every session can read the other workspaces and Conduit&apos;s own data.
      The administrator should install bubblewrap (<code className="font-mono">bwrap</code>) and restart Conduit.
    </div>
  );
}

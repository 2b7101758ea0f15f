export function DemoBanner() {
  return (
    <div
      data-testid="demo-banner"
      role="status"
      className="bg-amber-100 px-4 py-2 text-center text-sm text-amber-900 dark:bg-amber-900/40 dark:text-amber-100"
    >
      Offline demo model: Claude Code is talking to Conduit&apos;s scripted model, not to Anthropic. Set{" "}
      <code className="font-mono">ANTHROPIC_API_KEY</code> to use the real one.
    </div>
  );
}

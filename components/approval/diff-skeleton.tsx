/** The editor's place while Monaco loads, the same height so nothing jumps. */
export function DiffSkeleton({ height }: { height: number }) {
  return (
    <div
      style={{ height }}
      className="flex w-full items-center justify-center bg-zinc-50 text-xs text-zinc-400 dark:bg-zinc-950"
    >
      Loading editor…
    </div>
  );
}

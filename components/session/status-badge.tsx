import type { SessionStatus } from "@/server/shared/wire/session";

const look: Record<SessionStatus, { label: string; className: string; dot: string; pulse?: boolean }> = {
  starting: {
    label: "starting",
    className: "bg-sky-50 text-sky-800 ring-sky-200 dark:bg-sky-950 dark:text-sky-300 dark:ring-sky-900",
    dot: "bg-sky-500",
    pulse: true,
  },
  running: {
    label: "running",
    className:
      "bg-indigo-50 text-indigo-800 ring-indigo-200 dark:bg-indigo-950 dark:text-indigo-300 dark:ring-indigo-900",
    dot: "bg-indigo-500",
    pulse: true,
  },
  "awaiting-approval": {
    label: "awaiting approval",
    className: "bg-amber-50 text-amber-900 ring-amber-200 dark:bg-amber-950 dark:text-amber-300 dark:ring-amber-900",
    dot: "bg-amber-500",
    pulse: true,
  },
  idle: {
    label: "idle",
    className:
      "bg-emerald-50 text-emerald-800 ring-emerald-200 dark:bg-emerald-950 dark:text-emerald-300 dark:ring-emerald-900",
    dot: "bg-emerald-500",
  },
  stalled: {
    label: "stalled",
    className:
      "bg-orange-50 text-orange-900 ring-orange-200 dark:bg-orange-950 dark:text-orange-300 dark:ring-orange-900",
    dot: "bg-orange-500",
  },
  stopped: {
    label: "stopped",
    className: "bg-zinc-100 text-zinc-700 ring-zinc-200 dark:bg-zinc-800 dark:text-zinc-300 dark:ring-zinc-700",
    dot: "bg-zinc-400",
  },
  crashed: {
    label: "crashed",
    className: "bg-red-50 text-red-800 ring-red-200 dark:bg-red-950 dark:text-red-300 dark:ring-red-900",
    dot: "bg-red-500",
  },
  dead: {
    label: "dead",
    className: "bg-red-100 text-red-900 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
    dot: "bg-red-700",
  },
};

/** A session's status in words ("awaiting approval"), for tables and text. */
export function statusLabel(status: string): string {
  return (look as Record<string, { label: string } | undefined>)[status]?.label ?? status;
}

/** A session's status as a coloured pill; `data-status` carries the raw value. */
export function StatusBadge({ status, testId }: { status: SessionStatus; testId?: string }) {
  const l = look[status] ?? look.idle;
  return (
    <span
      data-testid={testId}
      data-status={status}
      className={`inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${l.className}`}
    >
      <span aria-hidden className={`size-1.5 rounded-full ${l.dot} ${l.pulse ? "motion-safe:animate-pulse" : ""}`} />
      {l.label}
    </span>
  );
}

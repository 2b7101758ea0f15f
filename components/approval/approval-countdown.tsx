"use client";

import { useSyncExternalStore } from "react";

// One clock for every card on the page: a single interval, stopped when the last card goes.
let now = 0;
let timer: ReturnType<typeof setInterval> | undefined;
const ticks = new Set<() => void>();

function subscribeClock(listener: () => void): () => void {
  ticks.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const tick of ticks) tick();
    }, 1000);
  }
  return () => {
    ticks.delete(listener);
    if (ticks.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** The current time, updated every second; 0 while rendering on the server. */
export function useNow(): number {
  return useSyncExternalStore(
    subscribeClock,
    () => now || Date.now(),
    () => 0,
  );
}

/** "9:41", "1:02:03": time left, rounded up to the second so 0:00 is the moment it expires. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/**
 * Time left before the server answers for everyone. The server owns the deadline: at zero this
 * only says "expired"; the card's status changes when `approval:resolved` arrives.
 */
export function ApprovalCountdown({ expiresAt }: { expiresAt: string | null }) {
  const clock = useNow();
  const base =
    "inline-flex items-center gap-1 rounded px-1.5 py-0.5 font-mono text-[11px] tabular-nums whitespace-nowrap";
  if (expiresAt === null) {
    return (
      <span data-testid="approval-countdown" data-remaining="none" className={`${base} text-zinc-500`}>
        no deadline
      </span>
    );
  }
  const deadline = Date.parse(expiresAt);
  if (clock === 0 || Number.isNaN(deadline)) return <span data-testid="approval-countdown" className={base} />;
  const left = deadline - clock;
  if (left <= 0) {
    return (
      <span
        data-testid="approval-countdown"
        data-remaining="0"
        className={`${base} bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300`}
      >
        expired
      </span>
    );
  }
  const tone =
    left < 60_000
      ? "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300"
      : left < 180_000
        ? "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-300"
        : "bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300";
  return (
    <span
      data-testid="approval-countdown"
      data-remaining={Math.ceil(left / 1000)}
      title={`Answered "deny" automatically at ${new Date(deadline).toLocaleTimeString()}`}
      className={`${base} ${tone}`}
    >
      <svg aria-hidden viewBox="0 0 16 16" className="size-3" fill="none" stroke="currentColor" strokeWidth="1.6">
        <circle cx="8" cy="9" r="5.5" />
        <path d="M8 6v3l2 1.5M6.5 1.5h3" strokeLinecap="round" />
      </svg>
      expires in {formatCountdown(left)}
    </span>
  );
}

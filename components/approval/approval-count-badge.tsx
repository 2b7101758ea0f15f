"use client";

import Link from "next/link";
import { useApprovals } from "./use-approvals";

/** The header's link to the inbox with the live number of approvals waiting for the caller. */
export function ApprovalCountBadge() {
  const { pending } = useApprovals();
  return (
    <Link
      href="/inbox"
      data-testid="approval-inbox-link"
      aria-label={pending === 1 ? "Approvals: 1 waiting" : `Approvals: ${pending} waiting`}
      className="inline-flex items-center gap-1.5 hover:text-zinc-900 dark:hover:text-zinc-100"
    >
      Approvals
      <span
        data-testid="approval-count"
        data-count={pending}
        className={`min-w-5 rounded-full px-1.5 text-center text-[11px] leading-[18px] font-semibold tabular-nums ${
          pending > 0
            ? "bg-amber-500 text-white dark:bg-amber-500 dark:text-zinc-950"
            : "bg-zinc-200 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-400"
        }`}
      >
        {pending}
      </span>
    </Link>
  );
}

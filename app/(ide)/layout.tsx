import Link from "next/link";
import type { ReactNode } from "react";
import { ApprovalCountBadge } from "@/components/approval/approval-count-badge";
import { DemoBanner } from "@/components/demo-banner";
import { SignOutButton } from "@/components/sign-out-button";
import { UnisolatedBanner } from "@/components/unisolated-banner";
import { requirePageUser } from "@/server/web/auth";
import { isDemoModel } from "@/server/web/demo";
import { unisolatedReason } from "@/server/web/sandbox-status";

export const dynamic = "force-dynamic";

export default async function IdeLayout({ children }: { children: ReactNode }) {
  // signed out: to sign-in, and back to this page afterwards
  const user = await requirePageUser();
  const unisolated = await unisolatedReason();
  return (
    <div className="flex min-h-screen flex-col">
      {unisolated !== undefined && <UnisolatedBanner reason={unisolated} />}
      {isDemoModel() && <DemoBanner />}
      <header className="flex flex-wrap items-center gap-x-4 gap-y-1 border-b border-zinc-200 bg-white px-3 py-2 sm:px-4 dark:border-zinc-800 dark:bg-zinc-900">
        <Link href="/workspaces" className="font-semibold tracking-tight">
          Conduit
        </Link>
        <nav className="order-last flex w-full flex-wrap items-center gap-x-3 gap-y-1 text-sm text-zinc-600 sm:order-none sm:w-auto dark:text-zinc-400">
          <Link href="/workspaces" className="hover:text-zinc-900 dark:hover:text-zinc-100">
            Workspaces
          </Link>
          <Link href="/history" className="hover:text-zinc-900 dark:hover:text-zinc-100">
            History
          </Link>
          <Link href="/reports" className="hover:text-zinc-900 dark:hover:text-zinc-100">
            Reports
          </Link>
          {user.isAdmin && (
            <Link href="/admin" data-testid="admin-link" className="hover:text-zinc-900 dark:hover:text-zinc-100">
              Admin
            </Link>
          )}
          <ApprovalCountBadge />
        </nav>
        <div className="ml-auto flex items-center gap-3 text-sm">
          <span data-testid="current-user" title={user.email} className="max-w-32 truncate sm:max-w-none">
            {user.name}
            {/* the name, not a cut badge, on a phone (Admin is in the nav there) */}
            {user.isAdmin && <span className="ml-1 hidden rounded bg-zinc-200 px-1 text-xs sm:inline dark:bg-zinc-700">admin</span>}
          </span>
          <Link href="/account" data-testid="nav-account" className="text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100">
            Account
          </Link>
          <SignOutButton />
        </div>
      </header>
      <main className="mx-auto w-full min-w-0 max-w-5xl flex-1 p-3 sm:p-6">{children}</main>
    </div>
  );
}

import type { Metadata } from "next";
import { AccountSettings } from "@/components/account/account-settings";
import { PushToggle } from "@/components/account/push-toggle";
import { formatUsd } from "@/components/format/money";
import { readAccount } from "@/server/web/account";
import { requirePageUser } from "@/server/web/auth";
import { readPushState } from "@/server/web/push";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Account" };

export default async function AccountPage() {
  const user = await requirePageUser();
  const [account, push] = await Promise.all([readAccount(user), readPushState(user)]);
  const month = new Date(account.from).toLocaleDateString("en", { month: "long", year: "numeric", timeZone: "UTC" });
  const share = account.monthlyBudgetUsd ? Math.min(100, (account.spentUsd / account.monthlyBudgetUsd) * 100) : undefined;
  return (
    <div className="space-y-6" data-testid="account-page">
      <div>
        <h1 className="text-xl font-semibold">Your account</h1>
        <p className="text-sm text-zinc-500">
          {account.email}
          {account.isAdmin && " · administrator"}
        </p>
      </div>
      <section className="card space-y-2" aria-label="Spend this month">
        <h2 className="text-sm font-medium text-zinc-500">Spend in {month} (UTC)</h2>
        <p className="text-2xl font-semibold" data-testid="account-spend">
          {formatUsd(account.spentUsd)}
          <span className="ml-2 text-sm font-normal text-zinc-500" data-testid="account-budget">
            {account.monthlyBudgetUsd === null ? "no monthly budget set" : `of ${formatUsd(account.monthlyBudgetUsd)} budget`}
          </span>
        </p>
        {share !== undefined && (
          <div className="h-2 w-full rounded bg-zinc-200 dark:bg-zinc-800" role="progressbar" aria-valuenow={Math.round(share)} aria-valuemin={0} aria-valuemax={100}>
            <div className={`h-2 rounded ${share >= 100 ? "bg-red-500" : share >= 80 ? "bg-amber-500" : "bg-emerald-500"}`} style={{ width: `${share}%` }} />
          </div>
        )}
        <p className="text-xs text-zinc-500">Your budget is set by an admin; prompts stop starting once the month&apos;s spend reaches it.</p>
      </section>
      <AccountSettings email={account.email} name={account.name} hasPassword={account.hasPassword} />
      <PushToggle publicKey={push.publicKey} initialSettings={push.settings} />
    </div>
  );
}

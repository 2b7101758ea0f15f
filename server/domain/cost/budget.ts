import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/**
 * Monthly budgets, per user (set by the admin) and per workspace (set by its owners).
 *
 * - A month is a calendar month in UTC: from 00:00 UTC on the 1st to 00:00 UTC on the 1st of
 *   the next month. Every sidecar and web server then agrees on which month a cost entry falls
 *   in, whatever its time zone.
 * - A prompt that would start a turn is refused once the spend has reached the limit
 *   (`spent >= limit`): the next turn's cost is unknown until it ends, so "would go over" can only
 *   mean "nothing left". A turn already running finishes; its cost counts, and may take the
 *   spend past the limit.
 * - No limit (null/undefined) means unlimited; a limit of 0 refuses every turn.
 */

/** Whose budget a check is about. */
export const BudgetScope = { user: "user", workspace: "workspace" } as const;

/** One of {@link BudgetScope}. */
export type BudgetScope = (typeof BudgetScope)[keyof typeof BudgetScope];

/** The figures of one budget check. */
export interface BudgetCheck {
  /** The monthly limit in USD; null/undefined for none. */
  limitUsd: number | null | undefined;
  /** What was spent this month (sum of cost entries). */
  spentUsd: number;
  /** Default `user`. */
  scope?: BudgetScope;
}

/** The outcome of a check. */
export type BudgetDecision =
  | { allowed: true }
  | {
      allowed: false;
      code: typeof ErrorCode.budgetExceeded;
      scope: BudgetScope;
      limitUsd: number;
      spentUsd: number;
      /** For the person whose prompt was refused: names the limit and the spend. */
      message: string;
    };

/** Whether a new turn may start under one budget. */
export function checkBudget(check: BudgetCheck): BudgetDecision {
  const limit = check.limitUsd;
  if (limit === null || limit === undefined || Number.isNaN(limit) || limit === Infinity) return { allowed: true };
  const limitUsd = Math.max(0, limit);
  const spentUsd = Math.max(0, check.spentUsd);
  if (spentUsd < limitUsd) return { allowed: true };
  const scope = check.scope ?? BudgetScope.user;
  const whose = scope === BudgetScope.workspace ? "This workspace's" : "Your";
  const who = scope === BudgetScope.workspace ? "a workspace owner" : "an administrator";
  return {
    allowed: false,
    code: ErrorCode.budgetExceeded,
    scope,
    limitUsd,
    spentUsd,
    message:
      `${whose} monthly budget of ${formatUsd(limitUsd)} is used up: ${formatUsd(spentUsd)} spent this month (UTC). ` +
      `New turns are refused until ${who} raises the limit or the month ends.`,
  };
}

/** Checks several budgets (user, workspace); the first refusal wins. */
export function checkBudgets(checks: readonly BudgetCheck[]): BudgetDecision {
  for (const check of checks) {
    const decision = checkBudget(check);
    if (!decision.allowed) return decision;
  }
  return { allowed: true };
}

/** Throws the refusal as an `AppError` (`budget_exceeded`), for socket acks and HTTP answers. */
export function assertWithinBudget(decision: BudgetDecision): void {
  if (decision.allowed) return;
  throw new AppError(ErrorCode.budgetExceeded, decision.message, {
    scope: decision.scope,
    limitUsd: decision.limitUsd,
    spentUsd: decision.spentUsd,
  });
}

/** The UTC calendar month containing `now`: `[from, to)`. */
export function monthRange(now: Date): { from: Date; to: Date } {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return { from: new Date(Date.UTC(year, month, 1)), to: new Date(Date.UTC(year, month + 1, 1)) };
}

/** `$12.50`; amounts under a dollar keep four decimals (`$0.0008`) so small spends are visible. */
export function formatUsd(usd: number): string {
  return usd >= 1 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

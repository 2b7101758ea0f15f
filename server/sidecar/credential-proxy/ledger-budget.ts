/**
 * The credential proxy's budgets, on the cost ledger: the monthly budgets of a session's user
 * (its creator) and workspace, checked as a prompt's are (`checkMonthlyBudgets`) with the proxy's
 * unreported spend added; a settled period's unreported spend stored as one `CostEntry` usage
 * row (`proxy-unreported-<uuid>#<model>`: a usage row, so it adds tokens and USD to every sum
 * and no result to the turn counts).
 */
import { randomUUID } from "node:crypto";
import type { Db } from "@/server/db/client";
import { checkMonthlyBudgets, recordCostEntries } from "@/server/db/cost-entries";
import { UNKNOWN_MODEL, usageRowId } from "@/server/domain/cost/build-cost-entries";
import type { ProxyBudget } from "./credential-proxy";

/** Who a session's proxied spend is charged to. */
interface Payer {
  userId: string;
  workspaceId: string;
}

/** How many sessions' payers are remembered (a session's creator and workspace never change). */
const rememberedPayers = 2000;

/** A {@link ProxyBudget} on `db`. */
export function ledgerBudget(db: Db, now: () => number = Date.now): ProxyBudget {
  const payers = new Map<string, Payer>();
  const payerOf = async (sessionId: string): Promise<Payer | undefined> => {
    const known = payers.get(sessionId);
    if (known !== undefined) return known;
    const row = await db.session.findUnique({ where: { id: sessionId }, select: { createdById: true, workspaceId: true } });
    if (row === null) return undefined;
    const payer = { userId: row.createdById, workspaceId: row.workspaceId };
    payers.set(sessionId, payer);
    if (payers.size > rememberedPayers) payers.delete(payers.keys().next().value as string);
    return payer;
  };
  return {
    async check(sessionId, unreportedUsd) {
      const payer = await payerOf(sessionId);
      // A token of a session that is gone spends nothing.
      if (payer === undefined) return { allowed: false, message: "This session no longer exists." };
      const decision = await checkMonthlyBudgets(db, payer, new Date(now()), unreportedUsd);
      return decision.allowed ? { allowed: true } : { allowed: false, message: decision.message };
    },
    async recordUnreported(sessionId, spend) {
      const payer = await payerOf(sessionId);
      if (payer === undefined) return;
      await recordCostEntries(db, [
        {
          resultId: usageRowId(`proxy-unreported-${randomUUID()}`, spend.model ?? UNKNOWN_MODEL),
          sessionId,
          ...payer,
          model: spend.model ?? UNKNOWN_MODEL,
          inputTokens: spend.inputTokens,
          outputTokens: spend.outputTokens,
          cacheReadTokens: spend.cacheReadTokens,
          cacheWriteTokens: spend.cacheWriteTokens,
          usd: spend.usd,
          numTurns: 0,
          durationMs: 0,
          durationApiMs: 0,
          isError: false,
          permissionDenials: 0,
          at: new Date(now()),
        },
      ]);
    },
  };
}

import type { CostTurn } from "./cost-reducer";

/**
 * How a turn becomes `CostEntry` rows (schema unchanged; `resultId` is the unique key).
 *
 * Each result gives one **turn row** and one **usage row** per model it used:
 * - turn row: `resultId` = the result's uuid; `model` = the turn's main-loop model; carries the
 *   per-result figures (`numTurns`, `durationMs`, `durationApiMs`, `permissionDenials`,
 *   `isError`) and zero tokens and USD.
 * - usage row: `resultId` = `<result uuid>#<model>`; tokens by kind and USD of that model in that
 *   turn; zero per-result figures, `isError` false.
 *
 * So every figure lives on exactly one row and any SUM over any filter counts it once (several
 * models in one turn do not multiply `numTurns`); results are counted as the rows whose
 * `resultId` has no `#`. Every key depends only on the result and the model name, so a replay
 * writes the same keys and the store ignores them.
 */

/** Who a turn is charged to. */
export interface CostAttribution {
  /** Conduit's Session.id. */
  sessionId: string;
  /** The member whose prompt started the turn (the session's creator for unsolicited turns). */
  userId: string;
  workspaceId: string;
}

/** One `CostEntry` row to store (the Prisma model without `id`). */
export interface CostEntryInput {
  resultId: string;
  sessionId: string;
  userId: string;
  workspaceId: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  usd: number;
  numTurns: number;
  durationMs: number;
  durationApiMs: number;
  isError: boolean;
  permissionDenials: number;
  at: Date;
}

/** Separates a result uuid from a model name in a usage row's `resultId`. */
export const USAGE_ROW_SEPARATOR = "#";

/** The `resultId` of a turn's usage row for `model`. */
export function usageRowId(resultId: string, model: string): string {
  return `${resultId}${USAGE_ROW_SEPARATOR}${model}`;
}

/** True for a turn row (one per result), false for a usage row. */
export function isTurnRow(resultId: string): boolean {
  return !resultId.includes(USAGE_ROW_SEPARATOR);
}

/** The model name a turn with no known model is filed under. */
export const UNKNOWN_MODEL = "unknown";

/** The rows that record `turn`: its turn row first, then one usage row per model. */
export function buildCostEntries(turn: CostTurn, who: CostAttribution): CostEntryInput[] {
  const at = new Date(turn.at);
  const base = { sessionId: who.sessionId, userId: who.userId, workspaceId: who.workspaceId, at };
  const turnRow: CostEntryInput = {
    ...base,
    resultId: turn.resultId,
    model: turn.model ?? turn.models[0]?.model ?? UNKNOWN_MODEL,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    usd: 0,
    numTurns: turn.numTurns,
    durationMs: turn.durationMs,
    durationApiMs: turn.durationApiMs,
    isError: turn.isError,
    permissionDenials: turn.permissionDenials,
  };
  const usageRows = turn.models.map(
    (m): CostEntryInput => ({
      ...base,
      resultId: usageRowId(turn.resultId, m.model),
      model: m.model,
      inputTokens: m.inputTokens,
      outputTokens: m.outputTokens,
      cacheReadTokens: m.cacheReadTokens,
      cacheWriteTokens: m.cacheWriteTokens,
      usd: m.usd,
      numTurns: 0,
      durationMs: 0,
      durationApiMs: 0,
      isError: false,
      permissionDenials: 0,
    }),
  );
  return [turnRow, ...usageRows];
}

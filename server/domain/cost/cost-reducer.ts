import { resultTotalCostUsd, type CliMessage, type ModelUsage, type ResultMessage } from "@/server/shared/claude-protocol/messages";

/**
 * Exact cost accounting for one CLI process lineage (one Conduit session: its first process,
 * every resume after a crash or a cull, `/clear`s inside them), as a pure reducer. It turns each
 * `result` into what that turn cost, per model, so that stored entries can simply be summed.
 *
 * What the CLI reports (protocol reference §4.4, §9, §11; CLI 2.1.332):
 * - `total_cost_usd` and `modelUsage` are cumulative per process and conversation. They restart
 *   at 0 on `/clear` (`conversation_reset`, then a new session id) and when a crashed process is
 *   resumed (cost state is only written to the transcript at a graceful exit). After a graceful
 *   exit, `--resume` continues from the saved total, and so does `--fork-session`
 *   (`resume-continue-fork`: the fork's first result reports 0.0016 cumulative for a 0.0008 turn),
 *   even though the fork has a new session id.
 * - `model_usage_since_last_result` is the per-turn delta per model, already net of all of the
 *   above. When present it is used as is and nothing else matters; it is `{}` on local commands.
 * - Without it (an older or newer CLI), the delta is the difference of cumulative `modelUsage`
 *   against the counters this state holds. Resets are then detected three ways: an explicit event
 *   (`conversation_reset`, a process spawn, a session id that changes without a fork), and a
 *   cumulative figure lower than the last one seen (the new cumulative is then the delta).
 *   A reset whose new figures all exceed the old ones cannot be seen in the numbers; the events
 *   cover the known cases.
 * - `duration_api_ms` is process-cumulative on normal turns and 0 on local or aborted results
 *   (155 → 187 → 213 over three turns in `startup-multiturn`). The turn carries the per-turn
 *   delta; a 0 is "not reported" (delta 0, counter kept), a lower figure is a reset. It is assumed
 *   to be saved and restored with the cost state (the CLI keeps both in the same record), so it
 *   continues after a graceful resume or fork like the cost does.
 * - CLI 1.0.x reports no per-model usage at all, only the cumulative total under its old names
 *   `total_cost` / `cost_usd` (recordings 01–09 of `../shared/transcripts-real`). Such a result
 *   (no `modelUsage`, no `model_usage_since_last_result`) is costed from the cumulative total
 *   (`total_cost_usd`, else the old names) against the last total seen, a lower total being a
 *   reset, and filed under the turn's main-loop model with the result's per-turn `usage` tokens.
 *
 * Replays: each result is keyed by its `uuid`; a result already counted yields no turn and leaves
 * the state untouched (a late replay of an old result must not move the counters back either).
 * The memory of counted ids is bounded ({@link MAX_REMEMBERED_RESULTS}); the store's unique
 * `resultId` is the second line of defence.
 *
 * The state is plain JSON data. After a sidecar restart, rebuild it by folding the session's
 * event log through the reducer, or start from {@link createCostState} seeded with the result ids
 * already stored; the next spawn is then a resume after a crash.
 */

/** Tokens by kind and USD of one model. */
export interface ModelCost {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** `cacheCreationInputTokens` on the wire: tokens written to the prompt cache. */
  cacheWriteTokens: number;
  usd: number;
}

/** What the running process has reported so far: its cumulative counters. */
export interface CostCounters {
  /** Cumulative usage per requested model name (as `modelUsage` keys it). */
  models: Record<string, ModelCost>;
  /** The last non-zero `duration_api_ms`. */
  apiMs: number;
  /** The last cumulative total in USD (`total_cost_usd` or a CLI 1.0.x name); absent in older states. */
  totalUsd?: number;
}

/** How the process that last wrote a conversation ended. */
export type PreviousExit = "graceful" | "crashed";

/** The reducer's state: plain data. */
export interface CostState {
  /** The conversation the running process is in; null until known (fresh spawn, after `/clear`). */
  claudeSessionId: string | null;
  /** The main-loop model from the last `system/init` (or the spawn). */
  model: string | null;
  /** Cumulative counters of the running process, as of its last result or its start. */
  counters: CostCounters;
  /** A fork was spawned: its first `system/init` brings a new session id that is not a reset. */
  awaitingForkSessionId: boolean;
  /** Counters the CLI saved at a graceful exit, per claude session id: what a resume restores. */
  saved: Record<string, CostCounters>;
  /** Keys of results already counted, oldest first, at most {@link MAX_REMEMBERED_RESULTS}. */
  countedResultIds: string[];
}

/** How many counted result ids the state remembers. */
export const MAX_REMEMBERED_RESULTS = 1000;

/** What the sidecar tells the reducer, in the order it happened. */
export type CostEvent =
  /**
   * A CLI child was spawned. `resume` when it was started with `--resume <claudeSessionId>`
   * (`fork` with `--fork-session`); `previousExit` says how the last process of this lineage
   * ended: exited by itself after stdin closed (`graceful`, the CLI saved its cost) or anything
   * else (`crashed`: killed, reaped after a sidecar restart). `claudeSessionId` for a fresh
   * child started with `--session-id`.
   */
  | {
      type: "process-spawned";
      resume?: { claudeSessionId: string; fork?: boolean; previousExit: PreviousExit };
      claudeSessionId?: string;
      model?: string;
    }
  /** A decoded stdout line; only `system/init`, `conversation_reset` and `result` matter here. */
  | { type: "message"; message: CliMessage };

/** Where a turn's per-model figures came from. */
export type CostSource = "since-last-result" | "cumulative" | "total" | "none";

/** Usage of one model in one turn. */
export interface ModelTurnCost extends ModelCost {
  model: string;
}

/** What one `result` cost: the per-turn deltas. */
export interface CostTurn {
  /** The result's `uuid` (or a stand-in built from its fields, see {@link resultKeyOf}). */
  resultId: string;
  claudeSessionId: string | null;
  /** The main-loop model of the turn, when known. */
  model: string | null;
  /** When the result arrived (ms), from the injected clock. */
  at: number;
  /** Per model, sorted by name; models with nothing to report are left out. */
  models: ModelTurnCost[];
  /** Sum of `models[].usd`. */
  usd: number;
  numTurns: number;
  durationMs: number;
  /** Per-turn delta of the process-cumulative `duration_api_ms`. */
  durationApiMs: number;
  isError: boolean;
  permissionDenials: number;
  source: CostSource;
  /** The cumulative counters had gone down: the process's counter restarted. */
  resetDetected: boolean;
}

/** The reducer's output: the next state and, for a result not counted before, its turn. */
export interface CostStep {
  state: CostState;
  turn: CostTurn | null;
}

const zeroCounters = (): CostCounters => ({ models: {}, apiMs: 0 });

/** A fresh state; `countedResultIds` seeds the replay guard (e.g. ids already stored). */
export function createCostState(seed: { countedResultIds?: readonly string[] } = {}): CostState {
  return {
    claudeSessionId: null,
    model: null,
    counters: zeroCounters(),
    awaitingForkSessionId: false,
    saved: {},
    countedResultIds: (seed.countedResultIds ?? []).slice(-MAX_REMEMBERED_RESULTS),
  };
}

/**
 * Applies one event. Returns the same state object when the event changes nothing (other
 * message types, a replayed result), so callers can tell.
 */
export function reduceCost(state: CostState, event: CostEvent, now: number): CostStep {
  if (event.type === "process-spawned") return { state: onSpawned(state, event), turn: null };
  const message = event.message;
  switch (message.type) {
    case "system":
      return {
        state: message.subtype === "init" ? onInit(state, message.session_id, message.model) : state,
        turn: null,
      };
    case "conversation_reset":
      // The frame still carries the old id; the new one comes with the next system/init.
      return {
        state: { ...state, claudeSessionId: null, counters: zeroCounters(), awaitingForkSessionId: false },
        turn: null,
      };
    case "result":
      return onResult(state, message, now);
    default:
      return { state, turn: null };
  }
}

function onSpawned(state: CostState, event: Extract<CostEvent, { type: "process-spawned" }>): CostState {
  const saved = { ...state.saved };
  const resume = event.resume;
  // The previous process wrote its cost state into its conversation's transcript on the way out.
  if (resume?.previousExit === "graceful" && state.claudeSessionId !== null) {
    saved[state.claudeSessionId] = state.counters;
  }
  // A resume restores the last saved state of that conversation (none after a crash with no
  // earlier graceful exit: the counter starts at 0).
  const counters = resume ? (saved[resume.claudeSessionId] ?? zeroCounters()) : zeroCounters();
  return {
    ...state,
    claudeSessionId: resume ? resume.claudeSessionId : (event.claudeSessionId ?? null),
    model: event.model ?? state.model,
    counters,
    awaitingForkSessionId: resume?.fork === true,
    saved,
  };
}

function onInit(state: CostState, sessionId: string, model: string): CostState {
  if (state.claudeSessionId === sessionId && state.model === model && !state.awaitingForkSessionId) return state;
  const changed = state.claudeSessionId !== null && state.claudeSessionId !== sessionId;
  // A new id that no fork or /clear explains: the CLI started a new conversation, whose cost
  // starts at 0.
  const counters = changed && !state.awaitingForkSessionId ? zeroCounters() : state.counters;
  return { ...state, claudeSessionId: sessionId, model, counters, awaitingForkSessionId: false };
}

function onResult(state: CostState, result: ResultMessage, now: number): CostStep {
  const resultId = resultKeyOf(result);
  if (state.countedResultIds.includes(resultId)) return { state, turn: null };

  const cumulative = isRecord(result.modelUsage) ? toCostMap(result.modelUsage) : null;
  const total = resultTotalCostUsd(result);
  const since = isRecord(result.model_usage_since_last_result) ? toCostMap(result.model_usage_since_last_result) : null;
  let resetDetected = cumulative !== null && wentDown(cumulative, state.counters.models);

  let deltas: Record<string, ModelCost>;
  let source: CostSource;
  if (since !== null) {
    deltas = since;
    source = "since-last-result";
  } else if (cumulative !== null) {
    deltas = subtract(cumulative, resetDetected ? {} : state.counters.models);
    source = "cumulative";
  } else if (total !== undefined) {
    // CLI 1.0.x: only the cumulative total; a lower one is a new process's
    const last = state.counters.totalUsd ?? 0;
    resetDetected = total < last - 1e-9;
    const usd = resetDetected ? total : Math.max(0, roundUsd(total - last));
    deltas = { [state.model ?? "unknown"]: { ...usageTokens(result.usage), usd } };
    source = "total";
  } else {
    deltas = {};
    source = "none";
  }

  const apiMs = nonNegative(result.duration_api_ms);
  let durationApiMs = 0;
  let nextApiMs = state.counters.apiMs;
  if (apiMs > 0) {
    durationApiMs = apiMs >= state.counters.apiMs ? apiMs - state.counters.apiMs : apiMs;
    nextApiMs = apiMs;
  }

  // The CLI's own cumulative figures are the truth for the next difference; without them, add.
  const nextModels = cumulative ?? add(state.counters.models, deltas);
  const models = Object.keys(deltas)
    .sort()
    .map((model) => ({ model, ...(deltas[model] as ModelCost) }))
    .filter((m) => !isZero(m));

  const turn: CostTurn = {
    resultId,
    claudeSessionId: result.session_id ?? state.claudeSessionId,
    model: state.model,
    at: now,
    models,
    usd: roundUsd(models.reduce((sum, m) => sum + m.usd, 0)),
    numTurns: nonNegative(result.num_turns),
    durationMs: nonNegative(result.duration_ms),
    durationApiMs,
    isError: result.is_error,
    permissionDenials: Array.isArray(result.permission_denials) ? result.permission_denials.length : 0,
    source,
    resetDetected,
  };
  const next: CostState = {
    ...state,
    counters: { models: nextModels, apiMs: nextApiMs, ...(total !== undefined ? { totalUsd: total } : withTotal(state.counters)) },
    countedResultIds: [...state.countedResultIds, resultId].slice(-MAX_REMEMBERED_RESULTS),
  };
  return { state: next, turn };
}

/**
 * The key a result is counted under: its `uuid`. The CLI always sends one; should it not, a
 * stand-in from fields that a replay of the same line repeats and the next result changes.
 */
export function resultKeyOf(result: ResultMessage): string {
  if (typeof result.uuid === "string" && result.uuid.length > 0) return result.uuid;
  return `result:${result.session_id ?? "?"}:${result.result_index ?? "?"}:${resultTotalCostUsd(result) ?? "?"}:${result.duration_ms ?? "?"}`;
}

function withTotal(counters: CostCounters): { totalUsd?: number } {
  return counters.totalUsd === undefined ? {} : { totalUsd: counters.totalUsd };
}

/** A result's per-turn `usage` as token counts (CLI 1.0.x has no per-model figures). */
function usageTokens(usage: unknown): Omit<ModelCost, "usd"> {
  const u = (typeof usage === "object" && usage !== null ? usage : {}) as Record<string, unknown>;
  return {
    inputTokens: nonNegative(u.input_tokens),
    outputTokens: nonNegative(u.output_tokens),
    cacheReadTokens: nonNegative(u.cache_read_input_tokens),
    cacheWriteTokens: nonNegative(u.cache_creation_input_tokens),
  };
}

function toCostMap(usage: Record<string, ModelUsage>): Record<string, ModelCost> {
  const out: Record<string, ModelCost> = {};
  for (const [model, u] of Object.entries(usage)) {
    if (!isRecord(u)) continue;
    out[model] = {
      inputTokens: nonNegative(u.inputTokens),
      outputTokens: nonNegative(u.outputTokens),
      cacheReadTokens: nonNegative(u.cacheReadInputTokens),
      cacheWriteTokens: nonNegative(u.cacheCreationInputTokens),
      usd: nonNegativeUsd(u.costUSD),
    };
  }
  return out;
}

const KINDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "usd"] as const;

/** Some model vanished or some figure fell: the counter restarted since `before`. */
function wentDown(now: Record<string, ModelCost>, before: Record<string, ModelCost>): boolean {
  for (const [model, old] of Object.entries(before)) {
    const current = now[model];
    if (current === undefined) return true;
    // USD is compared with a tolerance: sums of floats can wobble in the last bits.
    if (KINDS.some((k) => (k === "usd" ? current.usd < old.usd - 1e-9 : current[k] < old[k]))) return true;
  }
  return false;
}

function subtract(now: Record<string, ModelCost>, before: Record<string, ModelCost>): Record<string, ModelCost> {
  const out: Record<string, ModelCost> = {};
  for (const [model, current] of Object.entries(now)) {
    const old = before[model];
    out[model] = old
      ? {
          inputTokens: current.inputTokens - old.inputTokens,
          outputTokens: current.outputTokens - old.outputTokens,
          cacheReadTokens: current.cacheReadTokens - old.cacheReadTokens,
          cacheWriteTokens: current.cacheWriteTokens - old.cacheWriteTokens,
          usd: Math.max(0, roundUsd(current.usd - old.usd)),
        }
      : current;
  }
  return out;
}

function add(a: Record<string, ModelCost>, b: Record<string, ModelCost>): Record<string, ModelCost> {
  const out: Record<string, ModelCost> = { ...a };
  for (const [model, delta] of Object.entries(b)) {
    const old = out[model];
    out[model] = old
      ? {
          inputTokens: old.inputTokens + delta.inputTokens,
          outputTokens: old.outputTokens + delta.outputTokens,
          cacheReadTokens: old.cacheReadTokens + delta.cacheReadTokens,
          cacheWriteTokens: old.cacheWriteTokens + delta.cacheWriteTokens,
          usd: roundUsd(old.usd + delta.usd),
        }
      : delta;
  }
  return out;
}

function isZero(m: ModelCost): boolean {
  return KINDS.every((k) => m[k] === 0);
}

/**
 * USD rounded to 1e-12: differences of cumulative floats (0.0024000000000000002 − 0.0016) must
 * not leave noise that sums drift on. Far below any price step (tokens cost ≥ 1e-8 USD).
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e12) / 1e12;
}

function nonNegative(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

function nonNegativeUsd(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

function isRecord(v: unknown): v is Record<string, ModelUsage> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The cost ledger of the sessions: the cost reducer fed with every CLI line and spawn, each
 * finished turn recorded as CostEntry rows (charged to whoever sent the prompt), the session's
 * total re-read after each, and the token counts of the view.
 *
 * Owns: `entry.cost`, `entry.costChain`, `entry.costUsd`, `entry.tokens`, `entry.countedResults`.
 * Must not: append to the log, start or stop runners, or refuse a prompt (the budget check is
 * the prompt command's, before it is logged).
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { recordTurnCost } from "@/server/db/cost-entries";
import { findPromptSender } from "@/server/db/session-events";
import { sumSessionCost } from "@/server/db/sessions";
import { buildCostEntries } from "@/server/domain/cost/build-cost-entries";
import { reduceCost, type CostEvent, type CostTurn } from "@/server/domain/cost/cost-reducer";
import type { ResultMessage } from "@/server/shared/claude-protocol/messages";
import type { SessionEntry, Tokens } from "./session-entry";

export interface SessionCostRecorderDeps {
  db: Db;
  log: Logger;
  now: () => number;
  /** Tells listeners the session's view once its total changed. */
  emitStatus: (entry: SessionEntry) => void;
  /** Each counted turn, when its result is read (the credential proxy's meter: that spend is reported). */
  onTurnCost?: ((sessionId: string, turn: CostTurn) => void) | undefined;
}

export class SessionCostRecorder {
  constructor(private readonly deps: SessionCostRecorderDeps) {}

  /**
   * Runs the cost reducer; a turn is recorded once its result line is in the log (the tail at
   * this point is that line's append), and the session total read from the entries with it.
   */
  feedCost(entry: SessionEntry, event: CostEvent): void {
    const step = reduceCost(entry.cost, event, this.deps.now());
    entry.cost = step.state;
    const turn = step.turn;
    if (!turn) return;
    this.deps.onTurnCost?.(entry.id, turn);
    const result = event.type === "message" && event.message.type === "result" ? event.message : undefined;
    const uuids = result?.user_message_uuids ?? (result?.user_message_uuid ? [result.user_message_uuid] : []);
    const lineStored = entry.tail;
    entry.costChain = entry.costChain
      .then(() => lineStored)
      .then(() => this.recordTurn(entry, turn, uuids))
      .catch(async (err: unknown) => {
        this.deps.log.error({ err, sessionId: entry.id }, "recording a turn's cost failed");
        return sumSessionCost(this.deps.db, entry.id);
      })
      .then((usd) => {
        entry.costUsd = usd;
        this.deps.emitStatus(entry);
      })
      .catch((err: unknown) => this.deps.log.warn({ err, sessionId: entry.id }, "reading the session cost failed"));
  }

  /** Resolves once the entry's queued cost writes are done. */
  drain(entry: SessionEntry): Promise<void> {
    return entry.costChain;
  }

  /** Stores the turn's rows; the session's total after them. */
  private async recordTurn(entry: SessionEntry, turn: CostTurn, uuids: readonly string[]): Promise<number> {
    const userId = await this.payerOf(entry, uuids);
    const recorded = await recordTurnCost(
      this.deps.db,
      entry.id,
      buildCostEntries(turn, { sessionId: entry.id, userId, workspaceId: entry.workspace.id }),
    );
    return recorded.sessionUsd;
  }

  /** Whoever sent the first prompt the result answers, else the session's creator. */
  private async payerOf(entry: SessionEntry, uuids: readonly string[]): Promise<string> {
    for (const uuid of uuids) {
      const known = entry.promptSenders.get(uuid);
      if (known) return known;
      // Sent before this sidecar started: the prompt event in the log names its sender.
      const logged = await findPromptSender(this.deps.db, entry.id, uuid);
      if (logged) return logged;
    }
    return entry.createdBy.id;
  }
}

/** Adds a result's usage to the view's token counts, once per result uuid. */
export function countResult(entry: SessionEntry, result: ResultMessage): void {
  if (typeof result.uuid === "string") {
    if (entry.countedResults.has(result.uuid)) return;
    entry.countedResults.add(result.uuid);
  }
  addUsage(entry.tokens, result);
}

function addUsage(tokens: Tokens, result: ResultMessage): void {
  const usage = result.usage;
  if (!usage) return;
  tokens.input += usage.input_tokens ?? 0;
  tokens.output += usage.output_tokens ?? 0;
  tokens.cacheRead += usage.cache_read_input_tokens ?? 0;
  tokens.cacheWrite += usage.cache_creation_input_tokens ?? 0;
}

export function isResult(value: unknown): value is ResultMessage {
  return typeof value === "object" && value !== null && (value as { type?: unknown }).type === "result";
}

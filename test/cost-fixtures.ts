// Replays the cost fixtures (server/domain/cost/fixtures) as the sidecar would feed the cost
// reducer: a `process-spawned` per spawn (with how the previous process ended), then every
// decoded stdout line. Shared by the reducer's unit tests and the ledger's integration tests.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { decodeLine } from "@/server/shared/claude-protocol/decode-line";
import {
  createCostState,
  reduceCost,
  type CostEvent,
  type CostState,
  type CostTurn,
} from "@/server/domain/cost/cost-reducer";

const dir = fileURLToPath(new URL("../server/domain/cost/fixtures/", import.meta.url));

type Row =
  | { t: number; dir: "note"; text: string }
  | { t: number; dir: "exit"; code: number }
  | { t: number; dir: "out"; msg: Record<string, unknown> };

/** Options for {@link costEventsOf}. */
export interface FixtureOptions {
  /**
   * Drop `model_usage_since_last_result` from every result, as an older or newer CLI without it
   * would print: the reducer must then get the same turns from cumulative `modelUsage` alone.
   */
  withoutSinceLastResult?: boolean;
}

/** The fixture's rows turned into reducer events, in order. */
export function costEventsOf(name: string, options: FixtureOptions = {}): CostEvent[] {
  const rows = readFileSync(`${dir}${name}.ndjson`, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Row);
  const events: CostEvent[] = [];
  let lastExit: number | null = null;
  let lastSessionId: string | null = null;
  for (const row of rows) {
    if (row.dir === "exit") {
      lastExit = row.code;
    } else if (row.dir === "note") {
      if (!row.text.startsWith("spawn:")) continue;
      // A clean exit after stdin closed is the only exit the CLI saves its cost on.
      const previousExit = lastExit === 0 ? "graceful" : "crashed";
      const resumeId = /--resume (\S+)/.exec(row.text)?.[1] ?? (row.text.includes("--continue") ? lastSessionId : null);
      const sessionIdFlag = /--session-id (\S+)/.exec(row.text)?.[1];
      if (resumeId) {
        events.push({
          type: "process-spawned",
          resume: { claudeSessionId: resumeId, fork: row.text.includes("--fork-session"), previousExit },
        });
      } else {
        events.push({ type: "process-spawned", ...(sessionIdFlag ? { claudeSessionId: sessionIdFlag } : {}) });
      }
      lastExit = null;
    } else {
      const msg = { ...row.msg };
      if (options.withoutSinceLastResult && msg.type === "result") delete msg.model_usage_since_last_result;
      const decoded = decodeLine(JSON.stringify(msg));
      if (!decoded.ok) throw new Error(`${name}: ${decoded.error.message}`);
      if (typeof msg.session_id === "string" && msg.session_id.length > 0 && msg.type === "result") {
        lastSessionId = msg.session_id;
      }
      events.push({ type: "message", message: decoded.message });
    }
  }
  return events;
}

/** Folds events through the reducer (clock: 1 s per event from `start`); returns the turns. */
export function runCost(
  events: readonly CostEvent[],
  state: CostState = createCostState(),
  start = Date.UTC(2026, 10, 30, 12),
): { state: CostState; turns: CostTurn[] } {
  const turns: CostTurn[] = [];
  let now = start;
  for (const event of events) {
    now += 1000;
    const step = reduceCost(state, event, now);
    state = step.state;
    if (step.turn) turns.push(step.turn);
  }
  return { state, turns };
}

/** The result lines of a fixture, as decoded events (for replay tests). */
export function resultEventsOf(name: string): CostEvent[] {
  return costEventsOf(name).filter((e) => e.type === "message" && e.message.type === "result");
}

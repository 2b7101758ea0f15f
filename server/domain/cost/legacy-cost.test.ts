/**
 * CLI 1.0.x results carry their cost as `cost_usd` / `total_cost` (no `total_cost_usd`, no
 * `modelUsage`). The lines below are from `../shared/transcripts-real` (01-terragon-bash and
 * 03-terragon-write, enzo-health/terragon-oss, Apache-2.0), the init cut to the fields read here.
 */
import { describe, expect, it } from "vitest";
import { decodeLine } from "@/server/shared/claude-protocol/decode-line";
import { resultTotalCostUsd, type CliMessage, type ResultMessage } from "@/server/shared/claude-protocol/messages";
import { totalsFromResults } from "@/server/web/sessions";
import { buildConversation } from "@/components/session/conversation";
import type { WireEvent } from "@/server/shared/wire/session";
import { buildCostEntries } from "./build-cost-entries";
import { createCostState, reduceCost, resultKeyOf, type CostEvent, type CostTurn } from "./cost-reducer";

const init01 =
  '{"type":"system","subtype":"init","cwd":"/Users/michael/Projects/test-project-2","session_id":"9c3fc96f-5c01-4799-918f-0634283e1ada","model":"claude-opus-4-20250514","permissionMode":"bypassPermissions","apiKeySource":"none"}';
const result01 =
  '{"type":"result","subtype":"success","cost_usd":0.5068632500000002,"is_error":false,"duration_ms":33398,"duration_api_ms":45789,"num_turns":22,"result":"The Bash tool works as expected with various test scenarios:\\n\\n**Successful commands:**\\n- Echo, ls, pwd, sleep with timeout, multiple commands, environment variables\\n\\n**Failed commands:**\\n- File not found (cat nonexistent file)\\n- Command not found (invalidcommand)\\n- False command (returns error)\\n- Security restriction (cd to parent directory blocked)","session_id":"9c3fc96f-5c01-4799-918f-0634283e1ada","total_cost":0.5068632500000002,"usage":{"input_tokens":11,"cache_creation_input_tokens":21799,"cache_read_input_tokens":14910,"output_tokens":838,"server_tool_use":{"web_search_requests":0}}}';
const result03 =
  '{"type":"result","subtype":"success","cost_usd":0.49173495,"is_error":false,"duration_ms":27389,"duration_api_ms":28489,"num_turns":20,"result":"All write tool tests completed. Successful operations created/overwrote files, while invalid paths generated errors as expected.","session_id":"a9c4c0aa-4127-4e3d-95bb-f4e9d1440757","total_cost":0.49173495,"usage":{"input_tokens":24,"cache_creation_input_tokens":18651,"cache_read_input_tokens":53249,"output_tokens":820,"server_tool_use":{"web_search_requests":0}}}';

function decoded(raw: string): CliMessage {
  const out = decodeLine(raw);
  if (!out.ok) throw out.error;
  return out.message;
}

function fold(events: CostEvent[]): CostTurn[] {
  let state = createCostState();
  const turns: CostTurn[] = [];
  events.forEach((event, i) => {
    const step = reduceCost(state, event, 1000 + i);
    state = step.state;
    if (step.turn) turns.push(step.turn);
  });
  return turns;
}

describe("legacy cost fields (CLI 1.0.x)", () => {
  it("the decoder types the result and its cost reads from total_cost / cost_usd", () => {
    const result = decoded(result01) as ResultMessage;
    expect(result.type).toBe("result");
    expect(result.total_cost_usd).toBeUndefined();
    expect(resultTotalCostUsd(result)).toBe(0.5068632500000002);
    // total_cost first, cost_usd as the last fallback, total_cost_usd over both
    expect(resultTotalCostUsd({ cost_usd: 0.2 })).toBe(0.2);
    expect(resultTotalCostUsd({ total_cost: 0.3, cost_usd: 0.2 })).toBe(0.3);
    expect(resultTotalCostUsd({ total_cost_usd: 0.4, total_cost: 0.3 })).toBe(0.4);
    expect(resultTotalCostUsd({ total_cost_usd: Number.NaN, total_cost: "1" })).toBeUndefined();
  });

  it("the cost reducer costs the turn from the cumulative total, under the init's model, with the turn's tokens", () => {
    const [turn] = fold([
      { type: "process-spawned" },
      { type: "message", message: decoded(init01) },
      { type: "message", message: decoded(result01) },
    ]);
    expect(turn).toMatchObject({
      source: "total",
      usd: 0.50686325,
      model: "claude-opus-4-20250514",
      numTurns: 22,
      durationMs: 33398,
      resetDetected: false,
      models: [
        { model: "claude-opus-4-20250514", inputTokens: 11, outputTokens: 838, cacheReadTokens: 14910, cacheWriteTokens: 21799, usd: 0.50686325 },
      ],
    });
    // no uuid on 1.0.x results: the key still names the cost, so two results of a session differ
    expect(turn!.resultId).toBe(resultKeyOf(decoded(result01) as ResultMessage));
    expect(turn!.resultId).toContain("0.5068632500000002");
    const rows = buildCostEntries(turn!, { sessionId: "s", userId: "u", workspaceId: "w" });
    expect(rows.reduce((sum, row) => sum + row.usd, 0)).toBeCloseTo(0.50686325, 10);
  });

  it("the total is cumulative: the next result costs the difference; a lower total is a new process", () => {
    const first = JSON.parse(result01) as Record<string, unknown>;
    const second = { ...first, total_cost: 0.6, cost_usd: 0.6, duration_ms: 1 };
    const lower = { ...first, total_cost: 0.1, cost_usd: 0.1, duration_ms: 2 };
    const turns = fold([
      { type: "message", message: decoded(init01) },
      { type: "message", message: decoded(result01) },
      { type: "message", message: decoded(JSON.stringify(second)) },
      { type: "message", message: decoded(JSON.stringify(lower)) },
    ]);
    expect(turns.map((t) => t.usd)).toEqual([0.50686325, 0.09313675, 0.1]);
    expect(turns.map((t) => t.resetDetected)).toEqual([false, false, true]);
  });

  it("a new process starts its total at 0 again", () => {
    const turns = fold([
      { type: "process-spawned" },
      { type: "message", message: decoded(result01) },
      { type: "process-spawned" },
      { type: "message", message: decoded(result03) },
    ]);
    expect(turns.map((t) => [t.source, t.usd, t.models[0]?.model])).toEqual([
      ["total", 0.50686325, "unknown"],
      ["total", 0.49173495, "unknown"],
    ]);
  });

  it("the conversation shows the turn's cost and the session's totals count it", () => {
    const events: WireEvent[] = [init01, result01].map((raw, seq) => ({
      sessionId: "s",
      seq,
      kind: "cli",
      payload: JSON.parse(raw) as unknown,
      trimmed: false,
      at: new Date(0).toISOString(),
    }));
    const view = buildConversation(events);
    expect(view.costUsd).toBeCloseTo(0.50686325, 10);
    expect(view.items.find((item) => item.kind === "turn-end")).toMatchObject({ costUsd: 0.5068632500000002 });
    expect(totalsFromResults([JSON.parse(result01), JSON.parse(result03)]).usd).toBeCloseTo(0.50686325 + 0.49173495, 10);
  });
});

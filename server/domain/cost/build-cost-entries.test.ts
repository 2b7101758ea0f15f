import { describe, expect, it } from "vitest";
import { costEventsOf, runCost } from "@/test/cost-fixtures";
import { buildCostEntries, isTurnRow, UNKNOWN_MODEL, usageRowId } from "./build-cost-entries";
import type { CostTurn } from "./cost-reducer";

const who = { sessionId: "s1", userId: "u1", workspaceId: "w1" };

function turn(fields: Partial<CostTurn>): CostTurn {
  return {
    resultId: "829f5747-5d70-4a18-b185-31a58a388230",
    claudeSessionId: "c1",
    model: "claude-opus-5-5",
    at: Date.UTC(2026, 10, 30),
    models: [],
    usd: 0,
    numTurns: 2,
    durationMs: 900,
    durationApiMs: 400,
    isError: true,
    permissionDenials: 1,
    source: "since-last-result",
    resetDetected: false,
    ...fields,
  };
}

describe("buildCostEntries", () => {
  it("writes a turn row keyed by the result uuid and one usage row per model keyed uuid#model", () => {
    const rows = buildCostEntries(
      turn({
        models: [
          {
            model: "claude-haiku-4-5",
            inputTokens: 5000,
            outputTokens: 300,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            usd: 0.0065,
          },
          {
            model: "claude-opus-5-5",
            inputTokens: 1000,
            outputTokens: 200,
            cacheReadTokens: 7,
            cacheWriteTokens: 9,
            usd: 0.008,
          },
        ],
        usd: 0.0145,
      }),
      who,
    );
    expect(rows.map((r) => [r.resultId, r.model, r.usd, r.numTurns, r.isError])).toEqual([
      ["829f5747-5d70-4a18-b185-31a58a388230", "claude-opus-5-5", 0, 2, true],
      ["829f5747-5d70-4a18-b185-31a58a388230#claude-haiku-4-5", "claude-haiku-4-5", 0.0065, 0, false],
      ["829f5747-5d70-4a18-b185-31a58a388230#claude-opus-5-5", "claude-opus-5-5", 0.008, 0, false],
    ]);
    expect(rows[2]).toMatchObject({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 7, cacheWriteTokens: 9 });
    expect(
      rows.every(
        (r) =>
          r.at.getTime() === Date.UTC(2026, 10, 30) &&
          r.userId === "u1" &&
          r.sessionId === "s1" &&
          r.workspaceId === "w1",
      ),
    ).toBe(true);
    expect(rows.map((r) => isTurnRow(r.resultId))).toEqual([true, false, false]);
  });

  it("puts every per-result figure on exactly one row, so sums over rows count it once", () => {
    const rows = buildCostEntries(
      turn({
        models: [
          { model: "a", inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 1 },
          { model: "b", inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 1 },
        ],
      }),
      who,
    );
    const total = (k: "numTurns" | "durationMs" | "durationApiMs" | "permissionDenials") =>
      rows.reduce((s, r) => s + r[k], 0);
    expect([total("numTurns"), total("durationMs"), total("durationApiMs"), total("permissionDenials")]).toEqual([
      2, 900, 400, 1,
    ]);
    expect(rows.filter((r) => r.isError)).toHaveLength(1);
  });

  it("records a result that used no model (local command, failed start) as its turn row alone", () => {
    expect(buildCostEntries(turn({}), who)).toHaveLength(1);
    expect(buildCostEntries(turn({ model: null }), who)[0]?.model).toBe(UNKNOWN_MODEL);
    const onlyUsage = turn({
      model: null,
      models: [{ model: "m", inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0 }],
    });
    expect(buildCostEntries(onlyUsage, who)[0]?.model).toBe("m");
  });

  it("gives every fixture turn distinct keys, and the same keys on a second pass", () => {
    const { turns } = runCost(costEventsOf("resume-continue-fork"));
    const ids = turns.flatMap((t) => buildCostEntries(t, who)).map((r) => r.resultId);
    expect(new Set(ids).size).toBe(ids.length);
    const again = runCost(costEventsOf("resume-continue-fork")).turns.flatMap((t) => buildCostEntries(t, who));
    expect(again.map((r) => r.resultId)).toEqual(ids);
    expect(usageRowId("r", "m")).toBe("r#m");
  });
});

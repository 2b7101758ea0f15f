import { describe, expect, it } from "vitest";
import { totalsFromResults } from "./sessions";

describe("totalsFromResults", () => {
  it("sums per-turn usage and turns the cumulative cost into per-turn deltas", () => {
    const result = (total: number, input: number) => ({
      type: "result",
      total_cost_usd: total,
      usage: { input_tokens: input, output_tokens: 10, cache_read_input_tokens: 1, cache_creation_input_tokens: 2 },
    });
    const t = totalsFromResults([
      result(0.1, 100),
      { type: "assistant" },
      result(0.25, 50),
      "not json",
      result(0.05, 5),
    ]);
    // 0.1 + 0.15, then a new CLI process starts again from 0.05
    expect(t.usd).toBeCloseTo(0.3, 10);
    expect(t).toMatchObject({ input: 155, output: 30, cacheRead: 3, cacheWrite: 6 });
  });
});

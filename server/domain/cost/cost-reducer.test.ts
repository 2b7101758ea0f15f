import { describe, expect, it } from "vitest";
import { costEventsOf, resultEventsOf, runCost } from "@/test/cost-fixtures";
import type { CliMessage, ModelUsage, ResultMessage } from "@/server/shared/claude-protocol/messages";
import { buildCostEntries } from "./build-cost-entries";
import {
  createCostState,
  MAX_REMEMBERED_RESULTS,
  reduceCost,
  resultKeyOf,
  type CostEvent,
  type CostTurn,
} from "./cost-reducer";

const OPUS = "claude-opus-5-5";
const SONNET = "claude-sonnet-4-5-20250929";
const HAIKU = "claude-haiku-4-5";

/**
 * The true cost of every turn of each fixture, from its token counts at the observed list prices
 * (protocol reference §11; USD per M tokens, input / output / cache read / cache write):
 * Opus 4 / 20 / 0.20 / 5, Sonnet 3 / 15 / 0.30 / 3.75, Haiku 1 / 5 / 0.10 / 1.25, unknown names
 * at the default model's rates. 100 in + 20 out on Opus = 0.0004 + 0.0004 = 0.0008.
 */
const truth: Record<string, number[]> = {
  "startup-multiturn": [0.0008, 0.0008, 0.0008],
  // /context and /usage call no model; /compact's two summary calls (200 in, 40 out) are billed;
  // /clear's own result costs nothing and the counter restarts.
  "slash-commands": [0.0008, 0, 0, 0.0016, 0.0008, 0, 0.0008],
  // A ×2, (A's third turn was killed before its result), B after the crash, C fork, D continue, E failed resume
  "resume-continue-fork": [0.0008, 0.0008, 0.0008, 0.0008, 0.0008, 0],
  // Opus, then Sonnet (100 in × 3 + 20 out × 15 = 0.0006), an unknown name at Opus rates, Opus
  "control-requests": [0.0008, 0.0006, 0.0008, 0.0008],
  // 100 k input, output, cache read, cache write on Opus
  "cost-default": [0.4, 2, 0.02, 0.5],
  // Opus 1000/200 + Haiku 5000/300; then Sonnet 2000/100/500 cr/1000 cw + Haiku 1000/100
  "synthetic-multi-model": [0.008 + 0.0065, 0.006 + 0.0015 + 0.00015 + 0.00375 + 0.001 + 0.0005],
};

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const who = { sessionId: "s1", userId: "u1", workspaceId: "w1" };
/** What the ledger would hold: the USD of every row built from the turns. */
const storedUsd = (turns: readonly CostTurn[]) =>
  sum(turns.flatMap((t) => buildCostEntries(t, who)).map((row) => row.usd));

describe("reduceCost over the captured result sequences", () => {
  for (const [name, perTurn] of Object.entries(truth)) {
    describe(name, () => {
      it.each([
        ["with model_usage_since_last_result", false],
        ["from cumulative modelUsage only", true],
      ])("%s: one turn per result, each at its true cost, and the stored sum equals their sum", (_label, strip) => {
        const { turns } = runCost(costEventsOf(name, { withoutSinceLastResult: strip }));
        expect(turns).toHaveLength(perTurn.length);
        turns.forEach((turn, i) => expect(turn.usd, `turn ${i}`).toBeCloseTo(perTurn[i] as number, 12));
        expect(storedUsd(turns)).toBeCloseTo(sum(perTurn), 12);
        if (strip) expect(turns.filter((t) => t.source === "since-last-result")).toEqual([]);
      });
    });
  }

  it("uses the per-turn field when the CLI sends it, and the cumulative difference otherwise", () => {
    const withSince = runCost(costEventsOf("startup-multiturn")).turns;
    const without = runCost(costEventsOf("startup-multiturn", { withoutSinceLastResult: true })).turns;
    expect(withSince.map((t) => t.source)).toEqual(["since-last-result", "since-last-result", "since-last-result"]);
    expect(without.map((t) => t.source)).toEqual(["cumulative", "cumulative", "cumulative"]);
    const figures = (ts: CostTurn[]) => ts.map(({ source: _s, ...rest }) => rest);
    expect(figures(without)).toEqual(figures(withSince));
  });

  it("splits tokens by kind (cost-default: 100 k of each kind in turn)", () => {
    for (const strip of [false, true]) {
      const { turns } = runCost(costEventsOf("cost-default", { withoutSinceLastResult: strip }));
      expect(turns.map((t) => t.models)).toEqual([
        [{ model: OPUS, inputTokens: 100000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0.4 }],
        [{ model: OPUS, inputTokens: 0, outputTokens: 100000, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 2 }],
        [
          {
            model: OPUS,
            inputTokens: 0,
            outputTokens: 0,
            cacheReadTokens: 100000,
            cacheWriteTokens: 0,
            usd: expect.closeTo(0.02, 12) as number,
          },
        ],
        [{ model: OPUS, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 100000, usd: 0.5 }],
      ]);
    }
  });

  it("stores per-turn duration_api_ms, though the CLI reports it per process (startup-multiturn: 155 → 187 → 213)", () => {
    const { turns } = runCost(costEventsOf("startup-multiturn"));
    expect(turns.map((t) => t.durationApiMs)).toEqual([155, 32, 26]);
    expect(sum(turns.map((t) => t.durationApiMs))).toBe(213);
    // duration_ms is per turn already
    expect(turns.map((t) => t.durationMs)).toEqual([365, 99, 76]);
    expect(turns.map((t) => [t.numTurns, t.isError, t.permissionDenials])).toEqual([
      [1, false, 0],
      [1, false, 0],
      [1, false, 0],
    ]);
  });
});

describe("resets", () => {
  it("/clear: conversation_reset restarts the counter, so the next turn is not negative", () => {
    for (const strip of [false, true]) {
      const { turns, state } = runCost(costEventsOf("slash-commands", { withoutSinceLastResult: strip }));
      const [, ctx, usage, compact, unknown, clear, after] = turns;
      expect([ctx, usage].map((t) => [t?.numTurns, t?.usd, t?.models])).toEqual([
        [0, 0, []],
        [0, 0, []],
      ]);
      expect(compact?.models.map((m) => [m.model, m.inputTokens, m.outputTokens])).toEqual([[OPUS, 200, 40]]);
      expect(unknown?.usd).toBeCloseTo(0.0008, 12);
      expect(clear?.claudeSessionId).toBe("b33e6d12-0801-46b5-87a4-e6dcb4dd7ffe");
      expect(clear?.models).toEqual([]);
      expect(after?.models).toEqual([
        { model: OPUS, inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, usd: 0.0008 },
      ]);
      expect(state.claudeSessionId).toBe("b33e6d12-0801-46b5-87a4-e6dcb4dd7ffe");
      // 147 → (0 on local results: not reported) → 202 → /clear → 31
      expect(turns.map((t) => t.durationApiMs)).toEqual([147, 0, 0, 0, 55, 0, 31]);
    }
  });

  it("crash then --resume: the counter is back to 0, so the resumed turn counts in full", () => {
    for (const strip of [false, true]) {
      const { turns } = runCost(costEventsOf("resume-continue-fork", { withoutSinceLastResult: strip }));
      const b = turns[2];
      expect(b?.claudeSessionId).toBe("65f1c33a-be6b-4fb1-a768-8987eb35f99d");
      expect(b?.usd).toBeCloseTo(0.0008, 12);
      expect(b?.resetDetected).toBe(false); // the spawn announced it; the numbers need not show it
    }
  });

  it("fork after a graceful exit: new session id, yet the cost continues from the saved total", () => {
    for (const strip of [false, true]) {
      const { turns } = runCost(costEventsOf("resume-continue-fork", { withoutSinceLastResult: strip }));
      const [c, d, e] = turns.slice(3);
      expect(c?.claudeSessionId).toBe("f775f707-a049-4b9d-9397-6ee220a0ce4c");
      expect(c?.usd).toBeCloseTo(0.0008, 12); // the CLI reports 0.0016 cumulative
      expect(d?.usd).toBeCloseTo(0.0008, 12); // --continue after a graceful exit: 0.0024 cumulative
      expect(e?.isError).toBe(true);
      expect(e?.models).toEqual([]);
      // 302, 355 | crash: 59 | fork continues: 96 | continue: 180 | failed start: 0
      expect(turns.map((t) => t.durationApiMs)).toEqual([302, 53, 59, 37, 84, 0]);
    }
  });

  it("graceful exit then --resume: the cost continues (no double count of the earlier turns)", () => {
    const sessionId = "548a3309-d41b-41c7-bdd9-8ddec001049d";
    const first = runCost(costEventsOf("startup-multiturn", { withoutSinceLastResult: true }));
    // The resumed process restores the saved 0.0024 and adds one more 0.0008 turn.
    const resumed = result({
      uuid: "00000000-0000-4000-8000-0000000000b1",
      session_id: sessionId,
      modelUsage: { [OPUS]: usage(400, 80, 0.0032) },
      duration_api_ms: 250,
    });
    const { turns } = runCost(
      [
        { type: "process-spawned", resume: { claudeSessionId: sessionId, previousExit: "graceful" } },
        { type: "message", message: resumed },
      ],
      first.state,
    );
    expect(turns).toHaveLength(1);
    expect(turns[0]?.usd).toBeCloseTo(0.0008, 12);
    expect(turns[0]?.models[0]).toMatchObject({ inputTokens: 100, outputTokens: 20 });
    expect(turns[0]?.durationApiMs).toBe(37);
  });

  it("a crash after an earlier graceful exit restores that older save, not 0 and not the lost turns", () => {
    // P1 exits gracefully at 0.0008 (saved), P2 resumes and spends 0.0016 more, then is killed;
    // P3 resumes from the saved 0.0008 (what the transcript's last cost-state line holds).
    const sid = "aaaaaaaa-0000-4000-8000-000000000001";
    const events: CostEvent[] = [
      { type: "process-spawned", claudeSessionId: sid },
      msg(result({ uuid: "r1", session_id: sid, modelUsage: { [OPUS]: usage(100, 20, 0.0008) } })),
      { type: "process-spawned", resume: { claudeSessionId: sid, previousExit: "graceful" } },
      msg(result({ uuid: "r2", session_id: sid, modelUsage: { [OPUS]: usage(200, 40, 0.0016) } })),
      msg(result({ uuid: "r3", session_id: sid, modelUsage: { [OPUS]: usage(300, 60, 0.0024) } })),
      { type: "process-spawned", resume: { claudeSessionId: sid, previousExit: "crashed" } },
      msg(result({ uuid: "r4", session_id: sid, modelUsage: { [OPUS]: usage(200, 40, 0.0016) } })),
    ];
    const { turns } = runCost(events);
    expect(turns.map((t) => t.usd)).toEqual([0.0008, 0.0008, 0.0008, 0.0008]);
  });

  it("a cumulative figure that goes down is a reset, also when the host misjudged the exit", () => {
    const sid = "aaaaaaaa-0000-4000-8000-000000000002";
    const events: CostEvent[] = [
      { type: "process-spawned", claudeSessionId: sid },
      msg(result({ uuid: "r1", session_id: sid, modelUsage: { [OPUS]: usage(300, 60, 0.0024) } })),
      // Told "graceful", but the CLI restarted at 0 (it was killed): 0.0008 < 0.0024.
      { type: "process-spawned", resume: { claudeSessionId: sid, previousExit: "graceful" } },
      msg(result({ uuid: "r2", session_id: sid, modelUsage: { [OPUS]: usage(100, 20, 0.0008) }, duration_api_ms: 40 })),
    ];
    const { turns } = runCost(events);
    expect(turns[1]).toMatchObject({ usd: 0.0008, resetDetected: true, durationApiMs: 40 });
  });

  it("a model that vanishes from modelUsage is a reset too", () => {
    const sid = "aaaaaaaa-0000-4000-8000-000000000003";
    const { turns } = runCost([
      { type: "process-spawned", claudeSessionId: sid },
      msg(
        result({
          uuid: "r1",
          session_id: sid,
          modelUsage: { [OPUS]: usage(100, 20, 0.0008), [HAIKU]: usage(1000, 0, 0.001) },
        }),
      ),
      msg(result({ uuid: "r2", session_id: sid, modelUsage: { [HAIKU]: usage(1000, 100, 0.0015) } })),
    ]);
    expect(turns[1]).toMatchObject({ resetDetected: true, usd: 0.0015 });
  });

  it("a session id that changes without /clear or fork restarts the counter", () => {
    const [a, b] = ["aaaaaaaa-0000-4000-8000-00000000000a", "aaaaaaaa-0000-4000-8000-00000000000b"];
    const { turns } = runCost([
      { type: "process-spawned", claudeSessionId: a },
      msg(init(a)),
      msg(result({ uuid: "r1", session_id: a, modelUsage: { [OPUS]: usage(100, 20, 0.0008) } })),
      msg(init(b)),
      // Higher than before, so only the id change can tell that this is a new counter.
      msg(result({ uuid: "r2", session_id: b, modelUsage: { [OPUS]: usage(200, 40, 0.0016) } })),
    ]);
    expect(turns.map((t) => t.usd)).toEqual([0.0008, 0.0016]);
  });
});

describe("replays", () => {
  it("the same result line again counts zero and leaves the state as it was", () => {
    for (const name of Object.keys(truth)) {
      const events = costEventsOf(name);
      const once = runCost(events);
      const doubled = runCost(
        events.flatMap((e) => (e.type === "message" && e.message.type === "result" ? [e, e] : [e])),
      );
      expect(doubled.turns.map((t) => t.resultId)).toEqual(once.turns.map((t) => t.resultId));
      expect(storedUsd(doubled.turns)).toBeCloseTo(sum(truth[name] as number[]), 12);
    }
  });

  it("a replayed older result does not move the counters back (no overcount on the next turn)", () => {
    const events = costEventsOf("startup-multiturn", { withoutSinceLastResult: true });
    const results = events.filter((e) => e.type === "message" && e.message.type === "result");
    const withLateReplay = [...events.slice(0, -1), results[0] as CostEvent, events.at(-1) as CostEvent];
    const { turns } = runCost(withLateReplay);
    expect(turns.map((t) => t.usd)).toEqual([0.0008, 0.0008, 0.0008]);
  });

  it("returns the very same state object for a replay", () => {
    const [first] = resultEventsOf("startup-multiturn") as [CostEvent];
    const once = reduceCost(createCostState(), first, 1);
    const again = reduceCost(once.state, first, 2);
    expect(again.turn).toBeNull();
    expect(again.state).toBe(once.state);
  });

  it("a state seeded with stored result ids skips those results (rebuild after a sidecar restart)", () => {
    const stored = runCost(resultEventsOf("startup-multiturn").slice(0, 2)).turns.map((t) => t.resultId);
    const { turns } = runCost(resultEventsOf("startup-multiturn"), createCostState({ countedResultIds: stored }));
    expect(turns.map((t) => t.resultId)).toEqual(["996cefe1-1f0b-4433-909c-3ffde7c00bcc"]);
    expect(turns[0]?.usd).toBeCloseTo(0.0008, 12);
  });

  it("remembers at most MAX_REMEMBERED_RESULTS ids, newest kept", () => {
    const ids = Array.from({ length: MAX_REMEMBERED_RESULTS + 5 }, (_, i) => `id-${i}`);
    const state = createCostState({ countedResultIds: ids });
    expect(state.countedResultIds).toHaveLength(MAX_REMEMBERED_RESULTS);
    expect(state.countedResultIds[0]).toBe("id-5");
    const next = reduceCost(state, msg(result({ uuid: "fresh" })), 1).state;
    expect(next.countedResultIds).toHaveLength(MAX_REMEMBERED_RESULTS);
    expect(next.countedResultIds.at(-1)).toBe("fresh");
  });

  it("keys a result without uuid by fields a replay repeats", () => {
    const r = result({ session_id: "s", result_index: 3, total_cost_usd: 0.1, duration_ms: 10 });
    delete r.uuid;
    expect(resultKeyOf(r)).toBe("result:s:3:0.1:10");
    expect(resultKeyOf(result({ uuid: "u-1" }))).toBe("u-1");
  });
});

describe("several models", () => {
  it("one turn that used two models gives one figure per model (synthetic-multi-model)", () => {
    for (const strip of [false, true]) {
      const { turns } = runCost(costEventsOf("synthetic-multi-model", { withoutSinceLastResult: strip }));
      expect(turns[0]?.models.map((m) => [m.model, m.inputTokens, m.outputTokens])).toEqual([
        [HAIKU, 5000, 300],
        [OPUS, 1000, 200],
      ]);
      expect(turns[0]?.model).toBe(OPUS);
      expect(turns[0]?.permissionDenials).toBe(1);
      expect(turns[1]?.model).toBe(SONNET);
      expect(
        turns[1]?.models.map((m) => [m.model, m.inputTokens, m.outputTokens, m.cacheReadTokens, m.cacheWriteTokens]),
      ).toEqual([
        [HAIKU, 1000, 100, 0, 0],
        [SONNET, 2000, 100, 500, 1000],
      ]);
      expect(turns[1]?.durationApiMs).toBe(860);
    }
  });

  it("after set_model, cumulative modelUsage lists every model so far, and each turn gets only its own", () => {
    const { turns } = runCost(costEventsOf("control-requests", { withoutSinceLastResult: true }));
    expect(turns.map((t) => t.models.map((m) => m.model))).toEqual([
      [OPUS],
      [SONNET],
      ["not-a-real-model-xyz"],
      [OPUS],
    ]);
    expect(turns.map((t) => t.model)).toEqual([OPUS, SONNET, "not-a-real-model-xyz", OPUS]);
  });
});

describe("state", () => {
  it("is plain data: a JSON round trip mid-way changes nothing", () => {
    const events = costEventsOf("resume-continue-fork", { withoutSinceLastResult: true });
    const whole = runCost(events).turns;
    const half = runCost(events.slice(0, 12));
    const rest = runCost(events.slice(12), JSON.parse(JSON.stringify(half.state)), Date.UTC(2026, 10, 30, 12) + 12_000);
    expect([...half.turns, ...rest.turns]).toEqual(whole);
  });

  it("ignores frames it does not need", () => {
    const state = createCostState();
    const step = reduceCost(state, msg({ type: "keep_alive" } as never), 1);
    expect(step).toEqual({ state, turn: null });
    expect(step.state).toBe(state);
  });
});

function usage(inputTokens: number, outputTokens: number, costUSD: number): ModelUsage {
  return { inputTokens, outputTokens, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD };
}

function result(fields: Partial<ResultMessage>): ResultMessage {
  return {
    type: "result",
    subtype: "success",
    is_error: false,
    num_turns: 1,
    duration_ms: 100,
    duration_api_ms: 0,
    permission_denials: [],
    uuid: "00000000-0000-4000-8000-000000000000",
    ...fields,
  };
}

function init(sessionId: string) {
  return {
    type: "system" as const,
    subtype: "init" as const,
    session_id: sessionId,
    model: OPUS,
    permissionMode: "default",
  };
}

function msg(message: CliMessage): CostEvent {
  return { type: "message", message };
}

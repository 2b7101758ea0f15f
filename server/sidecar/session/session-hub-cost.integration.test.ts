// Cost recording and budgets with the real CLI: every result becomes cost entries charged to the
// prompt's sender, a SIGKILL and resume (the CLI's counter back to 0) neither loses nor doubles a
// turn, and a prompt over a monthly budget is refused before it reaches the CLI.
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sumCost } from "@/server/db/cost-entries";
import { say } from "@/server/model-server/scenario";
import { AppError } from "@/server/shared/errors/app-error";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { SessionHub } from "./session-hub";
import { createSessionRunner } from "./session-runner";
import { until } from "@/test/until";

const log = pino({ level: "silent" });
const usage = {
  input_tokens: 1000,
  output_tokens: 2000,
  cache_read_input_tokens: 3000,
  cache_creation_input_tokens: 4000,
};
/** claude-opus-5-5 list prices, USD per million tokens: input, output, cache read, cache write. */
const turnUsd = (1000 * 4 + 2000 * 20 + 3000 * 0.2 + 4000 * 5) / 1_000_000;

let counter = 0;
const commandId = () => `cost-${++counter}-${Math.random().toString(36).slice(2, 10)}`;


describe("cost recording and budgets with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let hub: SessionHub;
  // What the hub tells the credential proxy each result recorded (`onTurnCost`).
  const reportedUsd = new Map<string, number>();

  beforeAll(async () => {
    cli = await startCliEnv();
    cli.server.addScenario("priced", [say("Priced reply.", { usage })]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    hub = new SessionHub({
      db: fx.db,
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      configRoot: path.join(fx.dataDir, "claude-config"),
      sidecarId: "cost-it",
      log,
      onTurnCost: (sessionId, turn) => reportedUsd.set(sessionId, (reportedUsd.get(sessionId) ?? 0) + turn.usd),
    });
  });

  afterAll(async () => {
    await hub?.close();
    await cli?.close();
    await fx?.close();
  });

  async function turnsRecorded(sessionId: string, n: number): Promise<void> {
    await until(async () => (await sumCost(fx.db, { sessionId })).results >= n, 30_000, `${n} turns recorded`);
    await until(async () => (await hub.view(sessionId)).status === "idle", 30_000, "session idle");
  }

  /** The owner's new session, once its first child is up and idle. */
  async function startIdleSession(): Promise<string> {
    const view = await hub.createSession(
      fx.owner,
      { workspace: fx.workspace, role: "owner" },
      { mode: "default", commandId: commandId() },
    );
    await until(async () => (await hub.view(view.id)).status === "idle", 30_000, "first child idle");
    return view.id;
  }

  async function prompt(sessionId: string, who: { id: string; name: string }, n: number): Promise<void> {
    await hub.prompt(who, sessionId, `[scenario:priced] turn ${n}`, commandId());
    await turnsRecorded(sessionId, n);
  }

  it("records five turns exactly across a SIGKILL and resume, charged to each prompt's sender", async () => {
    const sessionId = await startIdleSession();
    await prompt(sessionId, fx.owner, 1);
    await prompt(sessionId, fx.editor, 2);
    await prompt(sessionId, fx.owner, 3);

    const row = await fx.db.session.findUniqueOrThrow({ where: { id: sessionId }, select: { pid: true } });
    expect(row.pid).toBeGreaterThan(0);
    process.kill(row.pid!, "SIGKILL");
    await until(
      async () => {
        const now = await fx.db.session.findUniqueOrThrow({ where: { id: sessionId }, select: { pid: true } });
        return now.pid !== null && now.pid !== row.pid;
      },
      30_000,
      "a resumed child",
    ).catch(() => undefined); // the runner may also wait for the next prompt to resume

    await prompt(sessionId, fx.owner, 4);
    await prompt(sessionId, fx.editor, 5);

    const spawns = await fx.db.sessionEvent.findMany({
      where: { sessionId, kind: "process", payload: { contains: '"phase":"spawned"' } },
      select: { payload: true },
    });
    expect(spawns.map((s) => (JSON.parse(s.payload) as { resumed: boolean }).resumed)).toContain(true);

    const total = await sumCost(fx.db, { sessionId });
    expect(total.results).toBe(5);
    expect(total.usd).toBeCloseTo(5 * turnUsd, 10);
    // Each recorded turn was reported once, across the kill and resume as well.
    expect(reportedUsd.get(sessionId)).toBeCloseTo(5 * turnUsd, 10);
    expect(total.inputTokens).toBe(5 * 1000);
    expect(total.outputTokens).toBe(5 * 2000);
    expect(total.cacheReadTokens).toBe(5 * 3000);
    expect(total.cacheWriteTokens).toBe(5 * 4000);
    expect((await sumCost(fx.db, { sessionId, userId: fx.editor.id })).usd).toBeCloseTo(2 * turnUsd, 10);
    expect((await sumCost(fx.db, { sessionId, userId: fx.owner.id })).usd).toBeCloseTo(3 * turnUsd, 10);
    await until(async () => Math.abs((await hub.view(sessionId)).costUsd - 5 * turnUsd) < 1e-9, 5_000, "view cost");
    // The history search column holds the prompts and the final replies (written with the row,
    // within its 100 ms batching).
    const searchText = async () =>
      (await fx.db.session.findUniqueOrThrow({ where: { id: sessionId }, select: { searchText: true } })).searchText ?? "";
    await until(async () => (await searchText()).includes("[scenario:priced] turn 5"), 5_000, "the last prompt searchable");
    await until(async () => (await searchText()).split("priced reply.").length - 1 === 5, 5_000, "the five replies searchable");
  });

  it("refuses a prompt over the workspace or the user budget with budget_exceeded", async () => {
    const sessionId = await startIdleSession();

    await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { monthlyBudgetUsd: 0.1 } });
    const refused = await hub
      .prompt(fx.owner, sessionId, "[scenario:priced] over", commandId())
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "budget_exceeded" });
    expect((refused as Error).message).toContain("$0.10");
    const prompts = await fx.db.sessionEvent.count({ where: { sessionId, kind: "prompt" } });
    expect(prompts).toBe(0);

    await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { monthlyBudgetUsd: null } });
    await fx.db.user.update({ where: { id: fx.editor.id }, data: { monthlyBudgetUsd: 0.05 } });
    await expect(hub.prompt(fx.editor, sessionId, "[scenario:priced] over", commandId())).rejects.toMatchObject({
      code: "budget_exceeded",
    });
    // The owner has no limit of their own: the same session still takes their prompt.
    await prompt(sessionId, fx.owner, 1);
  });
});

/**
 * What a turn costs through Conduit's session runner, against the floor and against the pattern
 * most other web UIs use. Same scripted model (test/cli-env), same machine, one run, the variants
 * interleaved A B C A B C … so that drift hits all three alike:
 *
 *   A  Conduit's session runner: one long-lived CLI, N turns (framer, decoder, reducer, control
 *      channel, events — everything but persistence), in its bubblewrap sandbox (when bwrap works
 *      here) and talking to the model through the credential proxy, as the sidecar runs it.
 *   B  a bare stdin driver of one long-lived CLI with the same argv and env: write a JSON line,
 *      JSON.parse stdout lines. The floor.
 *   C  spawn per message: `claude -p <text> --output-format stream-json --verbose --resume <id>`.
 *   D  A in a `none` workspace (when bwrap works here): the network unshared, the model reached
 *      through the in-sandbox forwarder and the credential proxy's Unix socket.
 *
 * Timed: from sending the prompt (A, B; from the spawn for C) to the first `assistant` message and
 * to the `result`. Warm turns are summarised by their medians; the first, cold turn of each variant
 * (timed from the spawn) is reported apart. The headline uses the time-to-result medians.
 * Last line: `turn-overhead: conduit_ms=… bare_ms=… spawn_ms=… ratio=… overhead=…` with
 * ratio = spawn_ms / conduit_ms and overhead = conduit_ms / bare_ms; the line before it,
 * `turn-overhead-netnone: …`, has the same figures with D in A's place.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createDoorLauncher, DoorPool, doorPoolDefaults, filesScope } from "../server/workspace-agent";
import { buildCliArgs } from "../server/sidecar/process/build-cli-args";
import { buildCliEnv } from "../server/sidecar/process/build-cli-env";
import { killProcessGroup } from "../server/sidecar/process/cli-process";
import { startCredentialProxy, type CredentialProxy } from "../server/sidecar/credential-proxy/credential-proxy";
import { chooseSandbox, type CliSandbox } from "../server/sidecar/process/sandbox";
import { createSessionNetwork, type SessionNetwork } from "../server/sidecar/network/session-network";
import type { NetworkPolicy } from "../server/domain/workspace/network-policy";
import { createSessionRunner } from "../server/sidecar/session/session-runner";
import type { SessionRunner } from "../server/sidecar/session/session-runner-contract";
import { startCliEnv, type CliEnv } from "../test/cli-env";

const WARM_TURNS = Number(process.env.TURN_OVERHEAD_TURNS ?? 15);
const TURN_TIMEOUT_MS = 30_000;

/** One timed turn. */
interface TurnTiming {
  firstAssistantMs: number;
  resultMs: number;
  /** C only: until the process exited. */
  exitMs?: number;
}

/** Medians of one variant. */
export interface VariantSummary {
  cold: TurnTiming;
  firstAssistantMs: number;
  resultMs: number;
  exitMs?: number;
}

/** What `run()` measured. */
export interface TurnOverheadResult {
  warmTurns: number;
  conduit: VariantSummary;
  bare: VariantSummary;
  spawn: VariantSummary;
  ratio: number;
  overhead: number;
}

interface Variant {
  /** The first turn, timed from the spawn. */
  cold(text: string): Promise<TurnTiming>;
  warm(text: string): Promise<TurnTiming>;
  close(): Promise<void>;
}

/** Watches a stream of decoded messages for one turn at a time. */
class TurnClock {
  private pending:
    | {
        start: number;
        firstAssistant?: number;
        resolve: (timing: TurnTiming) => void;
        reject: (error: Error) => void;
        timer: NodeJS.Timeout;
      }
    | undefined;

  begin(start = performance.now()): Promise<TurnTiming> {
    if (this.pending) throw new Error("a turn is already being timed");
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        reject(new Error(`no result within ${TURN_TIMEOUT_MS} ms`));
      }, TURN_TIMEOUT_MS);
      this.pending = { start, resolve, reject, timer };
    });
  }

  see(type: unknown, isError?: unknown): void {
    const pending = this.pending;
    if (pending === undefined) return;
    const now = performance.now();
    if (type === "assistant") pending.firstAssistant ??= now;
    else if (type === "result") {
      this.pending = undefined;
      clearTimeout(pending.timer);
      if (isError === true) {
        pending.reject(new Error("the turn ended with an error result"));
        return;
      }
      pending.resolve({
        firstAssistantMs: (pending.firstAssistant ?? now) - pending.start,
        resultMs: now - pending.start,
      });
    }
  }

  fail(error: Error): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.reject(error);
  }
}

function conduitVariant(
  cliEnv: CliEnv,
  isolation: { sandbox: CliSandbox; proxy: CredentialProxy; network?: { sessions: SessionNetwork; policy: NetworkPolicy } },
  /** The Changes capture as the hub runs it: a before-turn snapshot the prompt waits for, an after-turn one it does not. */
  snapshots?: { snapshot(message: string): Promise<unknown> },
): Variant {
  const clock = new TurnClock();
  const runner: SessionRunner = createSessionRunner(
    {
      sessionId: isolation.network ? `bench-conduit-${isolation.network.policy.mode}` : "bench-conduit",
      ...(isolation.network ? { networkPolicy: async () => isolation.network!.policy } : {}),
      workspaceRoot: cliEnv.cwd,
      configDir: cliEnv.configDir,
      claudeSessionId: randomUUID(),
      resume: false,
      permissionMode: "default",
    },
    {
      cliPath: cliEnv.cliPath,
      baseEnv: cliEnv.env,
      decidePermission: async ({ request }) => ({
        behavior: "allow",
        updatedInput: request.input as Record<string, never>,
      }),
      // A benchmark run must not be culled or called stalled between turns.
      config: { idleCullMs: 0, stallMs: 600_000 },
      sandbox: isolation.sandbox,
      credentials: isolation.proxy,
      ...(isolation.network ? { network: isolation.network.sessions } : {}),
    },
  );
  runner.onDidEvent((event) => {
    if (event.type === "line")
      clock.see(event.message.type, event.message.type === "result" ? event.message.is_error : undefined);
    else if (event.type === "process" && event.phase === "exited") clock.fail(new Error("the CLI exited"));
  });
  return {
    async cold(text) {
      const start = performance.now();
      await runner.start();
      const timing = clock.begin(start);
      await runner.prompt({ uuid: randomUUID(), text });
      return timing;
    },
    async warm(text) {
      const timing = clock.begin();
      await snapshots?.snapshot("before");
      await runner.prompt({ uuid: randomUUID(), text });
      if (!snapshots) return timing;
      const done = await timing;
      await snapshots.snapshot("after");
      return done;
    },
    close: () => runner.dispose(),
  };
}

function bareVariant(cliEnv: CliEnv): Variant {
  const clock = new TurnClock();
  let child: ChildProcessWithoutNullStreams | undefined;
  const send = (text: string) => {
    const line = {
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: "",
      uuid: randomUUID(),
    };
    child!.stdin.write(`${JSON.stringify(line)}\n`);
  };
  return {
    async cold(text) {
      const start = performance.now();
      const args = buildCliArgs({ claudeSessionId: randomUUID(), resume: false, permissionMode: "default" });
      const env = buildCliEnv({ baseEnv: cliEnv.env, configDir: cliEnv.configDir });
      child = spawn(cliEnv.cliPath, args, {
        cwd: cliEnv.cwd,
        env: env as NodeJS.ProcessEnv,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      child.stderr.resume();
      child.once("exit", () => clock.fail(new Error("the bare CLI exited")));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const message = JSON.parse(line) as { type?: unknown; is_error?: unknown };
        clock.see(message.type, message.is_error);
      });
      const timing = clock.begin(start);
      send(text);
      return timing;
    },
    async warm(text) {
      const timing = clock.begin();
      send(text);
      return timing;
    },
    async close() {
      const current = child;
      if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
      const exited = new Promise((resolve) => current.once("exit", resolve));
      current.stdin.end();
      const timer = setTimeout(() => killProcessGroup(current.pid!, "SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      killProcessGroup(current.pid!, "SIGKILL");
    },
  };
}

function spawnVariant(cliEnv: CliEnv): Variant {
  const claudeSessionId = randomUUID();
  let first = true;
  const env = buildCliEnv({ baseEnv: cliEnv.env, configDir: cliEnv.configDir });
  const turn = (text: string): Promise<TurnTiming> => {
    const clock = new TurnClock();
    const start = performance.now();
    const args = [
      "-p",
      text,
      "--output-format",
      "stream-json",
      "--verbose",
      first ? "--session-id" : "--resume",
      claudeSessionId,
    ];
    first = false;
    const child = spawn(cliEnv.cliPath, args, {
      cwd: cliEnv.cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    child.stderr.resume();
    const timing = clock.begin(start);
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as { type?: unknown; is_error?: unknown };
      clock.see(message.type, message.is_error);
    });
    const exited = new Promise<number>((resolve) =>
      child.once("exit", () => {
        killProcessGroup(child.pid!, "SIGKILL");
        clock.fail(new Error("the CLI exited without a result"));
        resolve(performance.now() - start);
      }),
    );
    // The next turn may only start once this process is gone (it holds the conversation).
    return Promise.all([timing, exited]).then(([t, exitMs]) => ({ ...t, exitMs }));
  };
  return { cold: turn, warm: turn, close: async () => undefined };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function summarise(cold: TurnTiming, warm: TurnTiming[]): VariantSummary {
  const summary: VariantSummary = {
    cold,
    firstAssistantMs: median(warm.map((t) => t.firstAssistantMs)),
    resultMs: median(warm.map((t) => t.resultMs)),
  };
  const exits = warm.flatMap((t) => (t.exitMs === undefined ? [] : [t.exitMs]));
  if (exits.length > 0) summary.exitMs = median(exits);
  return summary;
}

const ms = (value: number) => value.toFixed(1);

/** Runs the benchmark and prints its figures; the last line is the headline. */
export async function run(): Promise<TurnOverheadResult> {
  const cliEnv = await startCliEnv();
  const { sandbox, warning } = await chooseSandbox("auto", cliEnv.cliPath);
  if (warning !== undefined) console.log(`turn-overhead: WARNING ${warning}; variant A runs unsandboxed`);
  const proxy = await startCredentialProxy({ upstream: cliEnv.server.url, credential: { apiKey: cliEnv.env.ANTHROPIC_API_KEY } });
  const netNone =
    sandbox.mode === "bwrap"
      ? conduitVariant(cliEnv, { sandbox, proxy, network: { sessions: createSessionNetwork({ credentialProxyPort: proxy.port }), policy: { mode: "none", domains: [] } } })
      : undefined;
  // variant E captures each turn's changes as the hub does: snapshots in the workspace's door
  // (server/workspace-agent, its work-tree watcher included), in a pool of its own as the sidecar's
  const shadowDir = await mkdtemp(path.join(os.tmpdir(), "conduit-bench-shadow-"));
  const doors = new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting: "auto" }), idleMs: 10 * 60_000 });
  const doorScope = await filesScope({ id: "bench-ws", rootPath: cliEnv.cwd }, shadowDir);
  const snapshots = {
    snapshot: (message: string) => doors.call(doorScope, "changes.snapshot", { repoKey: "bench-ws", workTree: cliEnv.cwd, message, watch: {} }, { timeoutMs: 600_000 }),
  };
  await snapshots.snapshot("baseline");
  const variants = {
    conduit: conduitVariant(cliEnv, { sandbox, proxy }),
    snap: conduitVariant(cliEnv, { sandbox, proxy }, snapshots), bare: bareVariant(cliEnv), spawn: spawnVariant(cliEnv), ...(netNone ? { netNone } : {}) };
  const names = (["conduit", "bare", "spawn", "netNone", "snap"] as const).filter((name) => name in variants);
  const cold = {} as Record<(typeof names)[number], TurnTiming>;
  const warm: Record<(typeof names)[number], TurnTiming[]> = { conduit: [], bare: [], spawn: [], netNone: [], snap: [] };
  try {
    for (const name of names) cold[name] = await variants[name]!.cold(`${name} cold turn`);
    for (let turn = 1; turn <= WARM_TURNS; turn++) {
      for (const name of names) warm[name].push(await variants[name]!.warm(`${name} warm turn ${turn}`));
    }
  } finally {
    await Promise.all(names.map((name) => variants[name]!.close()));
    await proxy.close();
    await cliEnv.close();
    doors.close();
    await rm(shadowDir, { recursive: true, force: true });
  }
  const conduit = summarise(cold.conduit, warm.conduit);
  const bare = summarise(cold.bare, warm.bare);
  const spawned = summarise(cold.spawn, warm.spawn);
  const ratio = spawned.resultMs / conduit.resultMs;
  const overhead = conduit.resultMs / bare.resultMs;
  const none = netNone ? summarise(cold.netNone, warm.netNone) : undefined;
  const snap = summarise(cold.snap, warm.snap);
  const line = (label: string, s: VariantSummary) =>
    `  ${label.padEnd(22)} first_assistant=${ms(s.firstAssistantMs)} result=${ms(s.resultMs)}` +
    (s.exitMs === undefined ? "" : ` exit=${ms(s.exitMs)}`) +
    `   cold: first_assistant=${ms(s.cold.firstAssistantMs)} result=${ms(s.cold.resultMs)}`;
  console.log(
    `turn-overhead: ${WARM_TURNS} warm turns per variant after 1 cold one, interleaved A B C${none ? " D" : ""} E; ` +
      "median ms from sending the prompt (C: from the spawn; cold: from the spawn) to the first assistant message and to the result",
  );
  console.log(line(`A conduit runner${sandbox.mode === "bwrap" ? "+bwrap" : ""}+proxy`, conduit));
  console.log(line("B bare stdin driver", bare));
  console.log(line("C spawn per message", spawned));
  if (none) console.log(line("D conduit, network none", none));
  console.log(line("E A + per-turn snapshots", snap));
  console.log("turn-overhead: headline figures are the warm time-to-result medians");
  if (none) {
    console.log(
      `turn-overhead-netnone: conduit_ms=${ms(none.resultMs)} bare_ms=${ms(bare.resultMs)} spawn_ms=${ms(spawned.resultMs)} ` +
        `ratio=${(spawned.resultMs / none.resultMs).toFixed(2)} overhead=${(none.resultMs / bare.resultMs).toFixed(3)}`,
    );
  }
  // the Changes capture's cost on a warm turn: a before-turn `git status` the prompt waits for
  console.log(
    `turn-overhead-snapshots: conduit_ms=${ms(snap.resultMs)} bare_ms=${ms(bare.resultMs)} spawn_ms=${ms(spawned.resultMs)} ` +
      `ratio=${(spawned.resultMs / snap.resultMs).toFixed(2)} overhead=${(snap.resultMs / bare.resultMs).toFixed(3)}`,
  );
  console.log(
    `turn-overhead: conduit_ms=${ms(conduit.resultMs)} bare_ms=${ms(bare.resultMs)} spawn_ms=${ms(spawned.resultMs)} ` +
      `ratio=${ratio.toFixed(2)} overhead=${overhead.toFixed(3)}`,
  );
  return { warmTurns: WARM_TURNS, conduit, bare, spawn: spawned, ratio, overhead };
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

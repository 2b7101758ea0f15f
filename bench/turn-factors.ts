/**
 * Where a warm turn's time goes before the CLI asks the model (issue #13 item 10). One long-lived
 * CLI per variant on the same scripted model, turns interleaved (A B C … A B C …) so drift hits all
 * alike; each variant adds ONE difference between a bare `claude` with the stream-json flags and
 * the child Conduit's sidecar spawns, then the last ones stack them all:
 *
 *   bare          --output-format stream-json --input-format stream-json --verbose, the test env
 *   +prompt-tool  --permission-prompt-tool stdio
 *   +session      --session-id <uuid> --permission-mode default
 *   +partial      --include-partial-messages
 *   +settings     --setting-sources project --settings {"disableAllHooks":true}
 *   argv          everything buildCliArgs gives (the four above)
 *   env           the bare flags, buildCliEnv's environment
 *   sandbox       the bare flags inside the bubblewrap sandbox (when bwrap works here)
 *   proxy         the bare flags, the model reached through the credential proxy
 *   conduit       argv + env + sandbox + proxy: what the sidecar spawns
 *
 * Timed per warm turn, from the stdin line: to the model's `messages` request (`request_ms`), to
 * the first `assistant` line (`assistant_ms`); and the CPU the child's process tree used from the
 * stdin line to the turn's result (`cpu_ms`, every thread, bwrap and the CLI's own children
 * included): wall times hide work a second core absorbs while the machine is otherwise idle, and
 * in Conduit the pages and the sidecar want those cores. Medians; prints one line per variant, then
 * `turn-factors: bare_request_ms=… conduit_request_ms=… extra_request_ms=…`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { buildCliArgs, settingSourceFlags, streamJsonFlags } from "../server/sidecar/process/build-cli-args";
import { buildCliEnv } from "../server/sidecar/process/build-cli-env";
import { killProcessGroup } from "../server/sidecar/process/cli-process";
import { startCredentialProxy, type CredentialProxy } from "../server/sidecar/credential-proxy/credential-proxy";
import { chooseSandbox, noSandbox, type CliSandbox } from "../server/sidecar/process/sandbox";
import { startCliEnv, type CliEnv } from "../test/cli-env";
import { processTreeCpuMs } from "./support/process-cpu";

const WARM_TURNS = Number(process.env.TURN_FACTORS_TURNS ?? 12);
const TURN_TIMEOUT_MS = 30_000;
const BARE = ["--output-format", "stream-json", "--input-format", "stream-json", "--verbose"];

interface Factors {
  args: string[];
  env: "test" | "conduit";
  sandbox: boolean;
  proxy: boolean;
}

interface Timing {
  requestMs: number;
  assistantMs: number;
  cpuMs: number;
}

interface Cli {
  turn(text: string): Promise<Timing>;
  close(): Promise<void>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The model's `messages` requests, as seen by this process's clock. */
function requestClock(cliEnv: CliEnv) {
  let waiter: ((at: number) => void) | undefined;
  cliEnv.server.model.onDidRecordRequest((record) => {
    if (record.kind !== "messages") return;
    const at = performance.now();
    const w = waiter;
    waiter = undefined;
    w?.(at);
  });
  return {
    next(): Promise<number> {
      return new Promise((resolve) => (waiter = resolve));
    },
  };
}

async function startCli(
  cliEnv: CliEnv,
  factors: Factors,
  deps: { sandbox: CliSandbox; proxy: CredentialProxy; requests: ReturnType<typeof requestClock> },
): Promise<Cli> {
  const claudeSessionId = randomUUID();
  const args = factors.args.map((a) => (a === "<uuid>" ? claudeSessionId : a));
  const credential = factors.proxy ? deps.proxy.issue(`bench-${claudeSessionId}`) : undefined;
  const env =
    factors.env === "conduit"
      ? buildCliEnv({ baseEnv: cliEnv.env, configDir: cliEnv.configDir, credentials: credential?.env })
      : { ...cliEnv.env, ...credential?.env };
  const launch = (factors.sandbox ? deps.sandbox : noSandbox).wrap(
    { file: cliEnv.cliPath, args, cwd: cliEnv.cwd, env },
    { workspaceRoot: cliEnv.cwd, configDir: cliEnv.configDir },
  );
  const child: ChildProcessWithoutNullStreams = spawn(launch.file, [...launch.args], {
    cwd: launch.cwd,
    env: launch.env as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stderr.resume();
  let onLine: ((type: unknown) => void) | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      onLine?.((JSON.parse(line) as { type?: unknown }).type);
    } catch {
      // not JSON
    }
  });
  const turn = (text: string): Promise<Timing> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no result within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS);
      let request: number | undefined;
      let assistant: number | undefined;
      const cpuBefore = processTreeCpuMs(child.pid!);
      const start = performance.now();
      void deps.requests.next().then((at) => (request = at));
      onLine = (type) => {
        if (type === "assistant") assistant ??= performance.now();
        if (type !== "result") return;
        clearTimeout(timer);
        onLine = undefined;
        resolve({ requestMs: (request ?? NaN) - start, assistantMs: (assistant ?? NaN) - start, cpuMs: processTreeCpuMs(child.pid!) - cpuBefore });
      };
      child.stdin.write(
        `${JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "", uuid: randomUUID() })}\n`,
      );
    });
  return {
    turn,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      const timer = setTimeout(() => killProcessGroup(child.pid!, "SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
      killProcessGroup(child.pid!, "SIGKILL");
      credential?.revoke();
    },
  };
}

export interface FactorResult {
  name: string;
  requestMs: number;
  assistantMs: number;
  cpuMs: number;
}

/** Runs the benchmark and prints its figures; the last line is the headline. */
export async function run(): Promise<FactorResult[]> {
  const cliEnv = await startCliEnv();
  const { sandbox, warning } = await chooseSandbox("auto", cliEnv.cliPath);
  if (warning !== undefined) console.log(`turn-factors: WARNING ${warning}; the sandbox variants run unsandboxed`);
  const proxy = await startCredentialProxy({ upstream: cliEnv.server.url, credential: { apiKey: cliEnv.env.ANTHROPIC_API_KEY } });
  const requests = requestClock(cliEnv);
  const conduitArgs = buildCliArgs({ claudeSessionId: "00000000-0000-4000-8000-000000000000", resume: false, permissionMode: "default" }).map((a) =>
    a === "00000000-0000-4000-8000-000000000000" ? "<uuid>" : a,
  );
  const variants: [string, Factors][] = [
    ["bare", { args: BARE, env: "test", sandbox: false, proxy: false }],
    ["+prompt-tool", { args: [...BARE, "--permission-prompt-tool", "stdio"], env: "test", sandbox: false, proxy: false }],
    ["+session", { args: [...BARE, "--session-id", "<uuid>", "--permission-mode", "default"], env: "test", sandbox: false, proxy: false }],
    ["+partial", { args: [...BARE, "--include-partial-messages"], env: "test", sandbox: false, proxy: false }],
    ["+settings", { args: [...BARE, ...settingSourceFlags("untrusted")], env: "test", sandbox: false, proxy: false }],
    ["argv", { args: conduitArgs, env: "test", sandbox: false, proxy: false }],
    ["env", { args: BARE, env: "conduit", sandbox: false, proxy: false }],
    ["sandbox", { args: BARE, env: "test", sandbox: true, proxy: false }],
    ["proxy", { args: BARE, env: "test", sandbox: false, proxy: true }],
    ["conduit", { args: conduitArgs, env: "conduit", sandbox: true, proxy: true }],
  ];
  void streamJsonFlags;
  const clis: Cli[] = [];
  const timings = variants.map(() => [] as Timing[]);
  try {
    for (const [, factors] of variants) {
      const cli = await startCli(cliEnv, factors, { sandbox, proxy, requests });
      clis.push(cli);
      await cli.turn("cold turn"); // starts the CLI; not counted
    }
    for (let turn = 0; turn < WARM_TURNS; turn++) {
      for (const [i, cli] of clis.entries()) timings[i]!.push(await cli.turn(`warm turn ${turn}`));
    }
  } finally {
    await Promise.all(clis.map((c) => c.close()));
    await proxy.close();
    await cliEnv.close();
  }
  const results = variants.map(([name], i) => ({
    name,
    requestMs: median(timings[i]!.map((t) => t.requestMs)),
    assistantMs: median(timings[i]!.map((t) => t.assistantMs)),
    cpuMs: median(timings[i]!.map((t) => t.cpuMs)),
  }));
  console.log(`turn-factors: ${WARM_TURNS} warm turns per variant, interleaved; medians in ms from the stdin line (sandbox: ${sandbox.mode})`);
  for (const r of results)
    console.log(`  ${r.name.padEnd(13)} request_ms=${r.requestMs.toFixed(1)} assistant_ms=${r.assistantMs.toFixed(1)} cpu_ms=${r.cpuMs.toFixed(1)}`);
  const bare = results[0]!;
  const conduit = results.at(-1)!;
  console.log(
    `turn-factors: bare_request_ms=${bare.requestMs.toFixed(1)} conduit_request_ms=${conduit.requestMs.toFixed(1)} ` +
      `extra_request_ms=${(conduit.requestMs - bare.requestMs).toFixed(1)} bare_cpu_ms=${bare.cpuMs.toFixed(1)} conduit_cpu_ms=${conduit.cpuMs.toFixed(1)}`,
  );
  return results;
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

/**
 * Approval round trip: the time from a CLI writing a `can_use_tool` control_request to Conduit
 * writing the control_response, through the whole approval path (persist, route to the user's
 * room, a socket.io client that answers on sight, authorize, record, audit, answer).
 *
 * The sidecar's parts are wired as server/sidecar/main.ts wires them (socket server, approval
 * service and session hub by test/sidecar-fixture.ts, and the WAL checkpointer) in this process;
 * the approver is a socket.io client in its own process (bench/approval-rtt-decider.mjs), as a
 * browser would be.
 *
 * Two runs, each with live sessions (every CLI is spawned and has had three approvals answered
 * before anything is timed), whose timed turns start spread over one pause, as independent users'
 * would:
 *
 * 1. Real: 5 sessions of the real `claude` against the scripted model, each turn calling Bash 40
 *    times after a "thinking" pause of about a second (the scripted model's delay). A tap between
 *    Conduit and each CLI (bench/approval-rtt-tap.mjs) times each question from its line reaching
 *    the tap to the answer reaching the tap. The scripted model runs in its own process
 *    (bench/support/approval-rtt-model.ts).
 * 2. Stand-in: 50 sessions of bench/approval-rtt-cli.mjs, which asks 20 questions per turn with
 *    a pause of about a second between them (APPROVAL_RTT_GAP_MS; 0 asks back to back and
 *    measures saturation, where queueing dominates) and times each on its side, from just before
 *    its write to the answer's arrival (so the figure includes both pipes).
 *
 * Each run also prints the sidecar's CPU time per approval. APPROVAL_RTT_ONLY=real|fake runs one.
 * Last line: `approval-rtt: sessions=50 p50_ms=… p99_ms=…`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { startWalCheckpointer } from "../server/db/wal-checkpointer";
import { mintSocketToken } from "../server/shared/socket-token";
import { createSessionRunner } from "../server/sidecar/session/session-runner";
import { startCliEnv, type CliEnv } from "../test/cli-env";
import { createSessionFixtures } from "../test/session-fixtures";
import { startTestSidecar, testSidecarOrigin, testSidecarSecret } from "../test/sidecar-fixture";

const here = path.dirname(fileURLToPath(import.meta.url));
const SESSIONS = Number(process.env.APPROVAL_RTT_SESSIONS ?? 50);
const REAL_SESSIONS = Number(process.env.APPROVAL_RTT_REAL_SESSIONS ?? 5);
const ASKS = Number(process.env.APPROVAL_RTT_ASKS ?? 20);
/** Tool calls per real session's timed turn (5 sessions: 200 approvals). */
const REAL_ASKS = Number(process.env.APPROVAL_RTT_REAL_ASKS ?? 40);
/** Mean pause between one session's questions; 0 asks back to back (a saturation test). */
const GAP_MS = Number(process.env.APPROVAL_RTT_GAP_MS ?? 1000);
/** Approvals per session in the untimed warm-up turn (the sidecar's code paths are hot after it). */
const WARM_ASKS = 3;
const ONLY = process.env.APPROVAL_RTT_ONLY;

interface RunResult {
  timingsMs: number[];
  /** From the hub asking the approval service to its answer (persist, route, decide, record). */
  insideMs: number[];
  wallMs: number;
  cpuMsPerApproval: number;
  /** The sidecar's event-loop delay while timing (p99, max). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(timingsMs: number[]): { p50: string; p99: string } {
  const sorted = [...timingsMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50).toFixed(2), p99: percentile(sorted, 99).toFixed(2) };
}

/** Starts bench/support/approval-rtt-model.ts; resolves with its URL once it serves. */
async function startModel(): Promise<{ child: ChildProcess; url: string }> {
  const script = path.join(here, "support", "approval-rtt-model.ts");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", script, String(REAL_ASKS), String(WARM_ASKS), String(GAP_MS)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]!);
      else reject(new Error(line));
    });
    child.once("exit", (code) => reject(new Error(`the model server exited (${code})`)));
  });
  return { child, url };
}

/** Starts the approver process; resolves once it is connected. */
async function startDecider(url: string, token: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(here, "approval-rtt-decider.mjs"), url, testSidecarOrigin, token], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) =>
      line === "ready" ? resolve() : reject(new Error(line)),
    );
    child.once("exit", (code) => reject(new Error(`the approver exited (${code})`)));
  });
  return child;
}

/** One run: `sessions` live sessions, each asked for `asks` approvals in its timed turn. */
async function runOnce(kind: "real" | "fake", sessions: number): Promise<RunResult> {
  const log = pino({ level: "silent" });
  let cli: CliEnv | undefined;
  let tapDir: string | undefined;
  let model: ChildProcess | undefined;
  if (kind === "real") {
    cli = await startCliEnv();
    tapDir = await mkdtemp(path.join(os.tmpdir(), "conduit-approval-rtt-"));
    // The model runs in its own process, as a real one is not in the sidecar's either.
    const started = await startModel();
    model = started.child;
    cli.env.ANTHROPIC_BASE_URL = started.url;
  }
  const fx = await createSessionFixtures(cli ? { rootPath: cli.cwd } : {});
  const checkpointer = await startWalCheckpointer(fx.db, fx.url, { log });
  const env = cli;
  const sidecar = await startTestSidecar(fx, {
    approvals: true,
    log,
    // Timed here too: the part of each round trip spent inside the sidecar's approval path.
    wrapDecider: (decide) => async (session, question) => {
      const t0 = performance.now();
      const decision = await decide(session, question);
      if (timing) insideMs.push(performance.now() - t0);
      return decision;
    },
    createRunner: (options, decidePermission) =>
      env
        ? createSessionRunner(options, {
            cliPath: process.execPath,
            argsPrefix: [
              path.join(here, "approval-rtt-tap.mjs"),
              path.join(tapDir!, `${options.sessionId}.txt`),
              env.cliPath,
            ],
            baseEnv: env.env,
            decidePermission,
          })
        : createSessionRunner(options, {
            cliPath: process.execPath,
            argsPrefix: [
              // 50 stand-ins spawned within a second would otherwise run V8's memory reducer
              // (a GC some 8 s after start) all at once and stall both cores: their artifact, not Conduit's.
              "--no-memory-reducer",
              path.join(here, "approval-rtt-cli.mjs"),
              "--asks",
              String(ASKS),
              "--warm-asks",
              String(WARM_ASKS),
              "--gap-ms",
              String(GAP_MS),
            ],
            decidePermission,
          }),
  });
  const hub = sidecar.hub;
  const decider = await startDecider(
    `http://127.0.0.1:${sidecar.port}`,
    await mintSocketToken(testSidecarSecret, fx.owner.id, 3600),
  );

  const timingsMs: number[] = [];
  const insideMs: number[] = [];
  let timing = false;
  const results = new Map<string, () => void>();
  hub.onDidEmitEvent((event) => {
    const payload = event.payload as { type?: string; result?: string };
    if (event.kind !== "cli" || payload?.type !== "result") return;
    if (kind === "fake" && timing)
      timingsMs.push(...(JSON.parse(payload.result ?? "[]") as number[]).map((us) => us / 1000));
    results.get(event.sessionId)?.();
  });
  const turn = (sessionId: string, text: string, commandId: string) =>
    new Promise<void>((resolve, reject) => {
      results.set(sessionId, resolve);
      hub.prompt(actor, sessionId, text, commandId).catch(reject);
    });

  const actor = { id: fx.owner.id, name: fx.owner.name };
  const access = { workspace: fx.workspace, role: "owner" };
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  let wallMs = 0;
  let cpuMs = 0;
  try {
    const views = await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        hub.createSession(actor, access, { mode: "default", commandId: `bench-create-${i}` }),
      ),
    );
    // Live sessions: every CLI is up and has had a few approvals answered before anything is timed.
    for (const [i, view] of views.entries()) {
      await turn(view.id, kind === "real" ? "[scenario:approval-rtt-warm] warm-up" : "warm-up", `bench-warm-${i}`);
    }
    if (tapDir) for (const view of views) await rm(path.join(tapDir, `${view.id}.txt`), { force: true });
    timing = true;
    loopDelay.enable();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const stagger = GAP_MS / sessions;
    await Promise.all(
      views.map(async (view, i) => {
        await new Promise((r) => setTimeout(r, i * stagger));
        await turn(view.id, kind === "real" ? "[scenario:approval-rtt] touch the files" : "go", `bench-prompt-${i}`);
      }),
    );
    wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    loopDelay.disable();
    cpuMs = (cpu.user + cpu.system) / 1000;
    if (tapDir) {
      for (const view of views) {
        const text = await readFile(path.join(tapDir, `${view.id}.txt`), "utf8").catch(() => "");
        timingsMs.push(
          ...text
            .split("\n")
            .filter(Boolean)
            .map((us) => Number(us) / 1000),
        );
      }
    }
  } finally {
    decider.kill("SIGTERM");
    await sidecar.close();
    await checkpointer.close();
    await fx.close();
    model?.kill("SIGTERM");
    await cli?.close();
    if (tapDir) await rm(tapDir, { recursive: true, force: true });
  }
  return {
    timingsMs,
    insideMs,
    wallMs,
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    loopDelayMaxMs: loopDelay.max / 1e6,
    cpuMsPerApproval: timingsMs.length ? cpuMs / timingsMs.length : NaN,
  };
}

function report(label: string, result: RunResult): void {
  const inside = summary(result.insideMs);
  console.log(`${label}: inside the sidecar's approval path p50_ms=${inside.p50} p99_ms=${inside.p99}`);
}

export default async function run(): Promise<void> {
  if (ONLY !== "fake") {
    const real = await runOnce("real", REAL_SESSIONS);
    const s = summary(real.timingsMs);
    console.log(
      `real claude: ${real.timingsMs.length} approvals in ${real.wallMs.toFixed(0)} ms, sidecar cpu ${real.cpuMsPerApproval.toFixed(2)} ms per approval, event-loop delay p99 ${real.loopDelayP99Ms.toFixed(1)} ms max ${real.loopDelayMaxMs.toFixed(1)} ms`,
    );
    report("real claude", real);
    console.log(`approval-rtt-real: sessions=${REAL_SESSIONS} p50_ms=${s.p50} p99_ms=${s.p99}`);
  }
  if (ONLY !== "real") {
    const fake = await runOnce("fake", SESSIONS);
    const s = summary(fake.timingsMs);
    console.log(
      `stand-in CLI: ${fake.timingsMs.length} approvals in ${fake.wallMs.toFixed(0)} ms (pause ${GAP_MS} ms), sidecar cpu ${fake.cpuMsPerApproval.toFixed(2)} ms per approval, event-loop delay p99 ${fake.loopDelayP99Ms.toFixed(1)} ms max ${fake.loopDelayMaxMs.toFixed(1)} ms`,
    );
    report("stand-in CLI", fake);
    console.log(`approval-rtt: sessions=${SESSIONS} p50_ms=${s.p50} p99_ms=${s.p99}`);
  }
}

/**
 * What isolation costs, one figure per function (several parts of issue 37 add theirs here; each
 * function stands alone and `run()` calls them in turn).
 *
 * proxy_metering_extra_ms (`proxyMeteringExtraMs`): the credential proxy's added latency on a
 * streamed Messages answer with metering (every chunk shown to the usage meter after it is
 * written on) against the same proxy without it, side by side in one run. The upstream is a
 * fake Messages API in a process of its own (so it does not share the proxy's event loop) that
 * streams one answer of `EVENTS` SSE events, each written apart (message_start, the text deltas,
 * message_delta, message_stop). Requests alternate metered, unmetered, direct (the order
 * rotating each round) on keep-alive clients; timed to the first byte and to the last. The
 * extra is the median time to the last byte metered minus unmetered (the meter reads every
 * event; the first byte only shows the per-request setup).
 *
 * open_net_turn_extra_ms (`measureOpenNetTurn`): a real CLI turn against the scripted model
 * (test/cli-env) in an `open` workspace, through the session runner, bubblewrap and the credential
 * proxy, two ways in one run, warm turns interleaved A B A B …: A in the sandbox's own network
 * namespace (the forwarder, the credential proxy's Unix socket, the egress proxy attached), B on
 * the host's shared network (as before issue 37). The figure is median(A) − median(B) of the time
 * to the result; target ≤ 5 ms.
 *
 * egress_download_mb_s (`measureEgressDownload`): a large download from a local HTTP server
 * through an open workspace's egress proxy, against the same download direct from the host,
 * interleaved. The server listens on a loopback alias (127.0.0.2) that the proxy's test hook treats
 * as public. Through the proxy is what a session does: `curl` inside the sandbox, its proxy
 * variables pointing at the forwarder, the forwarder's Unix socket, the proxy, the server; direct
 * is `curl` on the host. Without bubblewrap or curl, node's client talks to the proxy's socket
 * from the host instead.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { NetworkPolicy } from "../server/domain/workspace/network-policy";
import { startCredentialProxy, type CredentialProxy } from "../server/sidecar/credential-proxy/credential-proxy";
import { createSessionNetwork, sandboxNetworkOf, type SessionNetwork } from "../server/sidecar/network/session-network";
import { chooseSandbox, findOnPath, type CliSandbox } from "../server/sidecar/process/sandbox";
import { createSessionRunner } from "../server/sidecar/session/session-runner";
import { startCliEnv, type CliEnv } from "../test/cli-env";

const METERING_REQUESTS = Number(process.env.ISOLATION_BENCH_REQUESTS ?? 200);
const EVENTS = Number(process.env.ISOLATION_BENCH_EVENTS ?? 300);

// The fake upstream: answers every POST with an SSE stream of EVENTS events, one write each, on a
// fresh tick, as a model streams them.
const upstreamSource = `
const http = require("node:http");
const events = Number(process.argv[1]);
const sse = (event, data) => "event: " + event + "\\ndata: " + JSON.stringify(data) + "\\n\\n";
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(sse("message_start", { type: "message_start", message: { id: "msg_b", model: "claude-opus-5-5", usage: { input_tokens: 1200, output_tokens: 1, cache_read_input_tokens: 30000, cache_creation_input_tokens: 400 } } }));
    let i = 0;
    const next = () => {
      if (i < events) {
        res.write(sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "word " + i + " of a streamed answer, " } }));
        i++;
        setImmediate(next);
        return;
      }
      res.write(sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: events * 6 } }));
      res.end(sse("message_stop", { type: "message_stop" }));
    };
    setImmediate(next);
  });
});
server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port));
`;

async function startFakeUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, ["-e", upstreamSource, String(EVENTS)], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the fake upstream exited")));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** First and last byte of one streamed answer from `base`. */
function timeStream(base: string, apiKey: string, agent: http.Agent): Promise<{ firstMs: number; lastMs: number }> {
  const body = JSON.stringify({ model: "claude-opus-5-5", max_tokens: 4096, stream: true, messages: [{ role: "user", content: "stream" }] });
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      `${base}/v1/messages?beta=true`,
      { method: "POST", agent, headers: { "content-type": "application/json", "x-api-key": apiKey, "content-length": Buffer.byteLength(body) } },
      (res) => {
        let first: number | undefined;
        res.on("data", () => {
          first ??= performance.now() - start;
        });
        res.on("end", () => (first === undefined || res.statusCode !== 200 ? reject(new Error(`bad answer (${res.statusCode})`)) : resolve({ firstMs: first, lastMs: performance.now() - start })));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ms = (value: number) => value.toFixed(3);

/** proxy_metering_extra_ms: see the file's comment. */
export async function proxyMeteringExtraMs(): Promise<{ proxyMeteringExtraMs: number; meteredLastMs: number; unmeteredLastMs: number; directLastMs: number }> {
  const upstream = await startFakeUpstream();
  // No caps: the bench's own request rate must not meet the per-minute cap.
  const limits = { maxConcurrent: 0, maxPerMinute: 0 };
  const metered = await startCredentialProxy({ upstream: upstream.url, credential: { apiKey: "sk-ant-bench" }, limits });
  const unmetered = await startCredentialProxy({ upstream: upstream.url, credential: { apiKey: "sk-ant-bench" }, limits, meter: false });
  const agents = [0, 1, 2].map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const variants = [
    { name: "metered", base: metered.url, key: metered.issue("bench").token, agent: agents[0]!, first: [] as number[], last: [] as number[] },
    { name: "unmetered", base: unmetered.url, key: unmetered.issue("bench").token, agent: agents[1]!, first: [] as number[], last: [] as number[] },
    { name: "direct", base: upstream.url, key: "sk-ant-bench", agent: agents[2]!, first: [] as number[], last: [] as number[] },
  ];
  try {
    // Warm-up, untimed: connections, JIT.
    for (let i = 0; i < 20; i++) for (const v of variants) await timeStream(v.base, v.key, v.agent);
    for (let i = 0; i < METERING_REQUESTS; i++) {
      // The order rotates, and each request starts after a settled tick: the work a proxy does
      // after an answer ends (metering's close, the next tick) is not charged to the next variant.
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(i + k) % variants.length]!;
        await new Promise((resolve) => setTimeout(resolve, 1));
        const t = await timeStream(v.base, v.key, v.agent);
        v.first.push(t.firstMs);
        v.last.push(t.lastMs);
      }
    }
  } finally {
    for (const a of agents) a.destroy();
    await metered.close();
    await unmetered.close();
    await upstream.close();
  }
  const meter = metered.meterOf("bench");
  console.log(`proxy metering: ${METERING_REQUESTS} streamed answers of ${EVENTS + 3} SSE events each per variant, interleaved`);
  for (const v of variants) console.log(`  ${v.name.padEnd(9)} first byte p50=${ms(median(v.first))} ms  last byte p50=${ms(median(v.last))} ms`);
  console.log(`  metered: ${meter.calls} answers, ${meter.outputTokens} output tokens, $${meter.usd.toFixed(4)}`);
  const [m, u, d] = variants.map((v) => median(v.last)) as [number, number, number];
  const result = { proxyMeteringExtraMs: m - u, meteredLastMs: m, unmeteredLastMs: u, directLastMs: d };
  console.log(`proxy_metering_extra_ms=${ms(result.proxyMeteringExtraMs)} (metered ${ms(m)} − unmetered ${ms(u)}; direct ${ms(d)})`);
  return result;
}

// ---- open_net_turn_extra_ms and egress_download_mb_s (issue 37 item 1) ----

const TURNS = Number(process.env.ISOLATION_TURNS ?? 15);
const DOWNLOAD_MB = Number(process.env.ISOLATION_DOWNLOAD_MB ?? 256);
const DOWNLOAD_ROUNDS = Number(process.env.ISOLATION_DOWNLOAD_ROUNDS ?? 3);
const TURN_TIMEOUT_MS = 30_000;
const publicAlias = "127.0.0.2";

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");

/** One warm-turn timer over a session runner. */
function openRunner(cliEnv: CliEnv, sandbox: CliSandbox, proxy: CredentialProxy, network: SessionNetwork | undefined, name: string, policy: NetworkPolicy = { mode: "open", domains: [] }) {
  const runner = createSessionRunner(
    {
      sessionId: `bench-isolation-${name}`,
      networkPolicy: async () => policy,
      workspaceRoot: cliEnv.cwd,
      configDir: cliEnv.configDir,
      claudeSessionId: randomUUID(),
      resume: false,
      permissionMode: "default",
    },
    {
      cliPath: cliEnv.cliPath,
      baseEnv: cliEnv.env,
      decidePermission: async ({ request }) => ({ behavior: "allow", updatedInput: request.input as Record<string, never> }),
      config: { idleCullMs: 0, stallMs: 600_000 },
      sandbox,
      credentials: proxy,
      ...(network ? { network } : {}),
    },
  );
  let pending: { start: number; resolve: (ms: number) => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | undefined;
  runner.onDidEvent((event) => {
    if (event.type === "line" && event.message.type === "result" && pending) {
      const done = pending;
      pending = undefined;
      clearTimeout(done.timer);
      if (event.message.is_error === true) done.reject(new Error(`${name}: the turn ended with an error result`));
      else done.resolve(performance.now() - done.start);
    } else if (event.type === "process" && event.phase === "exited" && pending) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`${name}: the CLI exited`));
      pending = undefined;
    }
  });
  return {
    async turn(text: string, start?: () => Promise<void>): Promise<number> {
      const begun = performance.now();
      await start?.();
      const timing = new Promise<number>((resolve, reject) => {
        pending = { start: begun, resolve, reject, timer: setTimeout(() => reject(new Error(`${name}: no result within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS) };
      });
      await runner.prompt({ uuid: randomUUID(), text });
      return timing;
    },
    start: () => runner.start(),
    close: () => runner.dispose(),
  };
}

/** What {@link measureOpenNetTurn} found (medians in ms). */
export interface OpenNetTurnResult {
  ownNamespaceMs: number;
  /** The same own namespace in a `none` workspace (no egress proxy, no proxy variables): what the proxy variables cost. */
  noneNamespaceMs: number;
  sharedNetworkMs: number;
  extraMs: number;
  sandboxed: boolean;
}

/** open_net_turn_extra_ms: warm turns in an open workspace, own namespace vs the host's network. */
export async function measureOpenNetTurn(turns = TURNS): Promise<OpenNetTurnResult> {
  const cliEnv = await startCliEnv();
  const { sandbox, warning } = await chooseSandbox("auto", cliEnv.cliPath);
  if (warning !== undefined) console.log(`isolation: WARNING ${warning}; both variants run on the host's network`);
  const proxy = await startCredentialProxy({ upstream: cliEnv.server.url, credential: { apiKey: cliEnv.env.ANTHROPIC_API_KEY } });
  const sessions = sandbox.mode === "bwrap" ? createSessionNetwork({ credentialProxyPort: proxy.port }) : undefined;
  const own = openRunner(cliEnv, sandbox, proxy, sessions, "own-netns");
  const shared = openRunner(cliEnv, sandbox, proxy, undefined, "shared-net");
  const none = sessions ? openRunner(cliEnv, sandbox, proxy, sessions, "none-netns", { mode: "none", domains: [] }) : undefined;
  const times = { own: [] as number[], shared: [] as number[], none: [] as number[] };
  try {
    await own.turn("own cold turn", own.start);
    await shared.turn("shared cold turn", shared.start);
    await none?.turn("none cold turn", none.start);
    for (let i = 1; i <= turns; i++) {
      times.own.push(await own.turn(`own warm turn ${i}`));
      times.shared.push(await shared.turn(`shared warm turn ${i}`));
      if (none) times.none.push(await none.turn(`none warm turn ${i}`));
    }
  } finally {
    await Promise.all([own.close(), shared.close(), none?.close()]);
    await proxy.close();
    await cliEnv.close();
  }
  const ownNamespaceMs = median(times.own);
  const sharedNetworkMs = median(times.shared);
  return { ownNamespaceMs, noneNamespaceMs: times.none.length > 0 ? median(times.none) : Number.NaN, sharedNetworkMs, extraMs: ownNamespaceMs - sharedNetworkMs, sandboxed: sandbox.mode === "bwrap" };
}

/** A server that sends `bytes` of zeros for any GET. */
async function startDownloadServer(bytes: number): Promise<{ url: (host: string) => string; close(): Promise<void> }> {
  const chunk = Buffer.alloc(1024 * 1024);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(bytes) });
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!res.write(piece)) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, publicAlias, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (host) => `http://${host}:${port}/blob`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function runFile(file: string, args: readonly string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = options.env as NodeJS.ProcessEnv | undefined;
    execFile(file, args, { env, cwd: options.cwd, encoding: "utf8", maxBuffer: 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${path.basename(file)} failed: ${error.message} ${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Seconds of one download with node's client, through the proxy's socket or direct. */
function nodeDownload(url: string, socketPath?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const target = new URL(url);
    const req = http.get(socketPath ? { socketPath, path: url } : { host: target.hostname, port: target.port, path: target.pathname }, (res) => {
      res.on("data", () => undefined);
      res.on("end", () => resolve((performance.now() - start) / 1000));
    });
    req.on("error", reject);
  });
}

/** What {@link measureEgressDownload} found (MB/s medians). */
export interface EgressDownloadResult {
  /** Plain HTTP through the proxy (it parses and forwards the answer). */
  throughProxyMbS: number;
  /** A CONNECT tunnel through the proxy (the HTTPS path: bytes piped as they are); NaN without the sandbox. */
  tunnelMbS: number;
  directMbS: number;
  /** `sandboxed curl` (the session's whole path) or `node client` (the proxy alone, from the host). */
  how: string;
}

/** egress_download_mb_s: a large download through an open workspace's egress proxy vs direct. */
export async function measureEgressDownload(mb = DOWNLOAD_MB, rounds = DOWNLOAD_ROUNDS): Promise<EgressDownloadResult> {
  const bytes = mb * 1024 * 1024;
  const server = await startDownloadServer(bytes);
  // The credential proxy is not used here; the attachment needs an unprivileged port to bridge.
  const sessions = createSessionNetwork({ credentialProxyPort: 40_000, treatAsPublic: (address) => address === publicAlias });
  const attachment = await sessions.attach("bench-egress", { mode: "open", domains: [] });
  const curl = findOnPath("curl");
  const scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-bench-egress-")));
  const through: number[] = [];
  const tunnel: number[] = [];
  const direct: number[] = [];
  let how = "node client";
  try {
    const sandbox = curl ? (await chooseSandbox("auto", curl)).sandbox : undefined;
    const workspaceRoot = path.join(scratch, "w");
    const configDir = path.join(scratch, "c");
    await Promise.all([mkdir(workspaceRoot), mkdir(configDir)]);
    const curlArgs = ["-sS", "-o", "/dev/null", "-w", "%{time_total}", server.url(publicAlias)];
    if (curl && sandbox?.mode === "bwrap") {
      how = "sandboxed curl";
      const env = { PATH: "/usr/bin:/bin", ...attachment.env };
      const launch = sandbox.wrap({ file: curl, args: curlArgs, cwd: workspaceRoot, env }, { workspaceRoot, configDir }, sandboxNetworkOf(attachment));
      const tunnelled = sandbox.wrap({ file: curl, args: ["-p", ...curlArgs], cwd: workspaceRoot, env }, { workspaceRoot, configDir }, sandboxNetworkOf(attachment));
      for (let i = 0; i < rounds; i++) {
        through.push(Number(await runFile(launch.file, launch.args, { env: launch.env, cwd: launch.cwd })));
        tunnel.push(Number(await runFile(tunnelled.file, tunnelled.args, { env: tunnelled.env, cwd: tunnelled.cwd })));
        direct.push(Number(await runFile(curl, ["--noproxy", "*", ...curlArgs])));
      }
    } else {
      const socket = attachment.forwards.find((f) => f.socket.endsWith("egress.sock"))!.socket;
      for (let i = 0; i < rounds; i++) {
        through.push(await nodeDownload(server.url(publicAlias), socket));
        direct.push(await nodeDownload(server.url(publicAlias)));
      }
    }
  } finally {
    await attachment.close();
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
  return { throughProxyMbS: mb / median(through), tunnelMbS: tunnel.length > 0 ? mb / median(tunnel) : Number.NaN, directMbS: mb / median(direct), how };
}

/** Runs the two network parts, prints their detail, and gives their headline figures. */
export async function openNetworkFigures(): Promise<string[]> {
  const turn = await measureOpenNetTurn();
  console.log(
    `open network: ${TURNS} warm turns each, interleaved; median ms to the result: open in its own network namespace ${fixed(turn.ownNamespaceMs)}, ` +
      `open on the host's network ${fixed(turn.sharedNetworkMs)}, none in its own namespace (no egress proxy) ${fixed(turn.noneNamespaceMs)}` +
      `${turn.sandboxed ? "" : " (NOT sandboxed: all on the host's network)"}`,
  );
  console.log(`open_net_turn_extra_ms=${fixed(turn.extraMs)} (own namespace − host's network; target ≤ 5)`);
  const download = await measureEgressDownload();
  console.log(
    `egress download: ${DOWNLOAD_MB} MB, ${DOWNLOAD_ROUNDS} rounds each (${download.how}), median MB/s: through the egress proxy ${fixed(download.throughProxyMbS)} (plain HTTP), ${fixed(download.tunnelMbS)} (CONNECT tunnel), direct ${fixed(download.directMbS)}`,
  );
  return [`open_net_turn_extra_ms=${fixed(turn.extraMs)}`, `egress_download_mb_s=${fixed(download.throughProxyMbS)}`, `egress_tunnel_mb_s=${fixed(download.tunnelMbS)}`, `direct_download_mb_s=${fixed(download.directMbS)}`];
}

export async function run(): Promise<void> {
  const figures: string[] = [];
  const metering = await proxyMeteringExtraMs();
  figures.push(`proxy_metering_extra_ms=${ms(metering.proxyMeteringExtraMs)}`);
  figures.push(...(await openNetworkFigures()));
  console.log(`isolation: ${figures.join(" ")}`);
}

export default run;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

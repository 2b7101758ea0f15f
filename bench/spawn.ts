/**
 * What isolation costs at the start of a session and on the model's stream.
 *
 *   spawn: Conduit's argv and environment, the child spawned bare, inside its bubblewrap
 *          sandbox, and inside the sandbox of a `none` workspace (network unshared, the socket
 *          directory made and the in-sandbox forwarder started first: the whole per-spawn cost),
 *          interleaved bare, sandboxed, none, bare, …; timed from the spawn (a prompt written at
 *          once) to the `system/init` line, the first line the CLI prints. Each child is stopped
 *          before the next starts.
 *   proxy: the first streamed byte of a `POST /v1/messages` (stream: true) against the scripted
 *          model (in its own process, as `npm start` runs it), direct and through the credential
 *          proxy, interleaved, same keep-alive client.
 *
 * Last line: `spawn: bare_ms=… sandboxed_ms=… sandboxed_none_ms=… proxy_first_byte_extra_ms=…` (medians; the extra
 * is the median through the proxy minus the median direct).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { startCredentialProxy } from "../server/sidecar/credential-proxy/credential-proxy";
import { buildCliArgs } from "../server/sidecar/process/build-cli-args";
import { buildCliEnv } from "../server/sidecar/process/build-cli-env";
import { killProcessGroup } from "../server/sidecar/process/cli-process";
import { chooseSandbox, noSandbox, type CliSandbox } from "../server/sidecar/process/sandbox";
import { createSessionNetwork, sandboxNetworkOf, type SessionNetwork } from "../server/sidecar/network/session-network";
import { startCliEnv, userMessage, type CliEnv } from "../test/cli-env";

const SPAWNS = Number(process.env.SPAWN_BENCH_RUNS ?? 10);
const REQUESTS = Number(process.env.SPAWN_BENCH_REQUESTS ?? 100);

/** Spawn to `system/init`, then stop the child (stdin closed, group killed). */
async function timeSpawn(cliEnv: CliEnv, sandbox: CliSandbox, network?: SessionNetwork): Promise<number> {
  const start = performance.now();
  const attachment = await network?.attach("bench", { mode: "none", domains: [] });
  const args = buildCliArgs({ claudeSessionId: randomUUID(), resume: false, permissionMode: "default" });
  const env = buildCliEnv({ baseEnv: cliEnv.env, configDir: cliEnv.configDir });
  const launch = sandbox.wrap(
    { file: cliEnv.cliPath, args, cwd: cliEnv.cwd, env },
    { workspaceRoot: cliEnv.cwd, configDir: cliEnv.configDir },
    sandboxNetworkOf(attachment),
  );
  const child = spawn(launch.file, [...launch.args], { cwd: launch.cwd, env: launch.env as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"], detached: true });
  child.stderr.resume();
  child.stdin.write(`${JSON.stringify(userMessage("spawn bench"))}\n`);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no system/init within 30 s")), 30_000);
      child.once("exit", () => reject(new Error("the CLI exited before system/init")));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const message = JSON.parse(line) as { type?: string; subtype?: string };
        if (message.type === "system" && message.subtype === "init") {
          clearTimeout(timer);
          resolve(performance.now() - start);
        }
      });
    });
  } finally {
    child.stdin.end();
    killProcessGroup(child.pid!, "SIGKILL");
    await exited;
    await attachment?.close();
  }
}

/** The scripted model in a process of its own (as `npm start` runs it), so it does not share the proxy's event loop. */
async function startModelProcess(): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/model-server/main.ts", "--port", "0", "--no-demo", "--quiet"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the model server exited")));
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

/** Time to the first byte of a streamed Messages response at `base`. */
function timeFirstByte(base: string, apiKey: string, agent: http.Agent): Promise<number> {
  const body = JSON.stringify({ model: "claude-opus-5-5", max_tokens: 64, stream: true, messages: [{ role: "user", content: "first byte" }] });
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(`${base}/v1/messages`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "x-api-key": apiKey, "anthropic-version": "2023-06-01", "content-length": Buffer.byteLength(body) },
    }, (res) => {
      let first: number | undefined;
      res.on("data", () => {
        first ??= performance.now() - start;
      });
      res.on("end", () => (first === undefined ? reject(new Error(`empty response (${res.statusCode})`)) : resolve(first)));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ms = (value: number) => value.toFixed(2);

/** Runs the benchmark and prints its figures; the last line is the headline. */
export async function run(): Promise<{ bareMs: number; sandboxedMs: number; sandboxedNoneMs: number; proxyFirstByteExtraMs: number }> {
  const cliEnv = await startCliEnv();
  const { sandbox, warning } = await chooseSandbox("auto", cliEnv.cliPath);
  if (warning !== undefined) console.log(`spawn: WARNING ${warning}; the sandboxed figures are bare ones`);
  const model = await startModelProcess();
  const proxy = await startCredentialProxy({ upstream: model.url, credential: { apiKey: "sk-ant-bench" } });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const network = sandbox.mode === "bwrap" ? createSessionNetwork({ credentialProxyPort: proxy.port }) : undefined;
  const bare: number[] = [];
  const sandboxed: number[] = [];
  const none: number[] = [];
  const direct: number[] = [];
  const proxied: number[] = [];
  try {
    // One of each untimed first: page cache and the model server's first request.
    await timeSpawn(cliEnv, noSandbox);
    await timeSpawn(cliEnv, sandbox);
    if (network) await timeSpawn(cliEnv, sandbox, network);
    for (let i = 0; i < SPAWNS; i++) {
      bare.push(await timeSpawn(cliEnv, noSandbox));
      sandboxed.push(await timeSpawn(cliEnv, sandbox));
      if (network) none.push(await timeSpawn(cliEnv, sandbox, network));
    }
    const token = proxy.issue("bench").token;
    await timeFirstByte(model.url, "sk-ant-bench", agent);
    await timeFirstByte(proxy.url, token, agent);
    for (let i = 0; i < REQUESTS; i++) {
      direct.push(await timeFirstByte(model.url, "sk-ant-bench", agent));
      proxied.push(await timeFirstByte(proxy.url, token, agent));
    }
  } finally {
    agent.destroy();
    await proxy.close();
    await model.close();
    await cliEnv.close();
  }
  const result = {
    bareMs: median(bare),
    sandboxedMs: median(sandboxed),
    sandboxedNoneMs: none.length > 0 ? median(none) : Number.NaN,
    proxyFirstByteExtraMs: median(proxied) - median(direct),
  };
  console.log(
    `spawn: ${SPAWNS} spawns each (bare, ${sandbox.mode === "bwrap" ? "bubblewrap" : "NOT sandboxed"}) interleaved, spawn to system/init; ` +
      `${REQUESTS} streamed requests each, direct and through the credential proxy, to the first byte`,
  );
  console.log(`  spawn to init      bare p50=${ms(result.bareMs)}  sandboxed p50=${ms(result.sandboxedMs)}  sandboxed, network none p50=${ms(result.sandboxedNoneMs)}`);
  console.log(`  first streamed byte direct p50=${ms(median(direct))}  proxied p50=${ms(median(proxied))}`);
  console.log(`spawn: bare_ms=${ms(result.bareMs)} sandboxed_ms=${ms(result.sandboxedMs)} sandboxed_none_ms=${ms(result.sandboxedNoneMs)} proxy_first_byte_extra_ms=${ms(result.proxyFirstByteExtraMs)}`);
  return result;
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

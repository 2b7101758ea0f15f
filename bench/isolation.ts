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
 */
import { spawn } from "node:child_process";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { startCredentialProxy } from "../server/sidecar/credential-proxy/credential-proxy";

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

export async function run(): Promise<void> {
  const figures: string[] = [];
  const metering = await proxyMeteringExtraMs();
  figures.push(`proxy_metering_extra_ms=${ms(metering.proxyMeteringExtraMs)}`);
  console.log(`isolation: ${figures.join(" ")}`);
}

export default run;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

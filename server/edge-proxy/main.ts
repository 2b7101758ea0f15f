// Entry point of the edge process: `node --import tsx server/edge-proxy/main.ts`.
// Settings come from the one schema every process shares (server/env), with its defaults.
import { EnvError, parseEnv, publicUrlOf, sidecarUpstreamsOf, webUpstreamOf } from "@/server/env/env";
import { deriveEdgeVouch } from "@/server/shared/edge-vouch";
import type { EdgeLogEntry } from "./edge-log";
import { createEdgeHandler } from "./handler";
import { startEdgeServer } from "./node-adapter";
import { nodeCodings, nodeCompressor } from "./node-compression";

function logLine(entry: EdgeLogEntry | { level: "info"; event: string; [key: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), process: "edge", ...entry })}\n`);
}

function readEnv() {
  try {
    return parseEnv(process.env);
  } catch (err) {
    process.stderr.write(`edge: ${err instanceof EnvError ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
const env = readEnv();
const publicOrigin = publicUrlOf(env);

const handler = createEdgeHandler({
  nextOrigin: webUpstreamOf(env),
  sidecarOrigin: sidecarUpstreamsOf(env),
  publicOrigin,
  listenPort: env.PORT,
  fetch: globalThis.fetch,
  log: logLine,
  // zlib, flushed per chunk: streamed pages keep streaming, and br is there under Node too
  compression: { codings: nodeCodings, compressor: nodeCompressor },
  rateLimit: env.CONDUIT_EDGE_RATE_LIMIT === "on" ? {} : false,
  trustProxy: env.CONDUIT_TRUST_PROXY === "on",
  dev: env.NODE_ENV === "development",
  ...(env.CONDUIT_METRICS_TOKEN ? { metricsToken: env.CONDUIT_METRICS_TOKEN } : {}),
  // Without the shared secret nothing behind the edge can check the vouch: the web app and the
  // sidecar then refuse everything (npm start always sets the secret).
  ...(env.NEXTAUTH_SECRET ? { edgeVouch: await deriveEdgeVouch(env.NEXTAUTH_SECRET) } : {}),
});
const server = await startEdgeServer({ port: env.PORT, host: env.HOST, handler, log: logLine });
logLine({ level: "info", event: "listening", url: `http://${env.HOST}:${server.port}`, publicOrigin, sidecars: sidecarUpstreamsOf(env) });

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second signal means "now": do not wait for in-flight requests.
    if (stopping) process.exit(1);
    stopping = true;
    void Promise.all([server.close(), handler.close()]).then(() => process.exit(0));
  });
}

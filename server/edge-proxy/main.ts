// Entry point of the edge process: `node --import tsx server/edge-proxy/main.ts`.
// The env schema lives here until `server/env` takes it over.
import { z } from "zod";
import type { EdgeLogEntry } from "./edge-log";
import { createEdgeHandler } from "./handler";
import { startEdgeServer } from "./node-adapter";

const ZPort = z
  .string({ error: "required: the port of that process on 127.0.0.1" })
  .regex(/^\d+$/, "must be a port number")
  .transform(Number)
  .pipe(z.number().int().min(1).max(65535));
const ZSwitch = z.enum(["on", "off"]);

export const ZEdgeEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  CONDUIT_NEXT_PORT: ZPort,
  CONDUIT_SIDECAR_PORT: ZPort,
  /** The origin people type into the browser; defaults to http://localhost:PORT. */
  CONDUIT_PUBLIC_URL: z.url().optional(),
  CONDUIT_EDGE_RATE_LIMIT: ZSwitch.default("on"),
  /** `on` only when a TLS terminator in front sets x-forwarded-* (never when exposed directly). */
  CONDUIT_TRUST_PROXY: ZSwitch.default("off"),
  NODE_ENV: z.string().optional(),
});
export type EdgeEnv = z.infer<typeof ZEdgeEnv>;

function logLine(entry: EdgeLogEntry | { level: "info"; event: string; [key: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), process: "edge", ...entry })}\n`);
}

const parsed = ZEdgeEnv.safeParse(process.env);
if (!parsed.success) {
  process.stderr.write(`edge: invalid environment\n${z.prettifyError(parsed.error)}\n`);
  process.exit(1);
}
const env = parsed.data;
const publicOrigin = env.CONDUIT_PUBLIC_URL ?? `http://localhost:${env.PORT}`;

const handler = createEdgeHandler({
  nextOrigin: `http://127.0.0.1:${env.CONDUIT_NEXT_PORT}`,
  sidecarOrigin: `http://127.0.0.1:${env.CONDUIT_SIDECAR_PORT}`,
  publicOrigin,
  fetch: globalThis.fetch,
  log: logLine,
  rateLimit: env.CONDUIT_EDGE_RATE_LIMIT === "on" ? {} : false,
  trustProxy: env.CONDUIT_TRUST_PROXY === "on",
  dev: env.NODE_ENV === "development",
});
const server = await startEdgeServer({ port: env.PORT, host: env.HOST, handler, log: logLine });
logLine({ level: "info", event: "listening", url: `http://${env.HOST}:${server.port}`, publicOrigin });

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second signal means "now": do not wait for in-flight requests.
    if (stopping) process.exit(1);
    stopping = true;
    void server.close().then(() => process.exit(0));
  });
}

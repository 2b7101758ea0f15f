// The scripted model on a real socket: a Node http server that adapts requests to
// ScriptedModel.fetch and streams its responses, closing cleanly (no socket or timer left).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { buildApiError } from "./api-error";
import { demoScenarios, defaultDemoScenario } from "./demo-scenarios";
import type { Scenario } from "./scenario";
import { ScriptedModel, type RecordedRequest, type ScriptedModelOptions } from "./scripted-model";

export interface ModelServerOptions extends ScriptedModelOptions {
  /** 0 (default) picks a free port; read it back from `port`. */
  port?: number;
  host?: string;
  /** Also register the demo scenarios (keyword triggers) and make the default demo the fallback. */
  demo?: boolean;
  /** Called once per answered request, e.g. for a console log. */
  log?: (line: string) => void;
}

/** A running scripted model server. Everything of ScriptedModel (scenarios, records) is reachable through it. */
export interface ModelServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly model: ScriptedModel;
  readonly requests: ScriptedModel["requests"];
  addScenario: ScriptedModel["addScenario"];
  clearRequests: ScriptedModel["clearRequests"];
  waitForRequest: ScriptedModel["waitForRequest"];
  close(): Promise<void>;
}

// Hop-by-hop and framing headers belong to the socket, not to the request the handler sees.
const skippedHeaders = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"]);

function toRequest(req: http.IncomingMessage, body: Buffer, signal: AbortSignal, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || skippedHeaders.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const method = req.method ?? "GET";
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : new Uint8Array(body),
    signal,
  });
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Writes a web Response to a Node response, cancelling the body when the client goes away. */
async function writeResponse(response: Response, res: http.ServerResponse, clientGone: AbortSignal): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  // SSE: the client must see headers before the first (possibly delayed) event.
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  clientGone.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    clientGone.removeEventListener("abort", cancel);
  }
}

function describe(request: Request, status: number, record: RecordedRequest | undefined): string {
  const url = new URL(request.url);
  const detail = record
    ? ` model=${record.model} stream=${record.stream} scenario=${record.scenario ?? "-"}` +
      ` step=${record.stepIndex} → ${record.response.kind}`
    : "";
  return `${request.method} ${url.pathname} ${status}${detail}`;
}

/** Starts the server and resolves once it listens. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const host = options.host ?? "127.0.0.1";
  // Test scenarios first: on a shared trigger word they win over the demo's.
  const scenarios: Scenario[] = [...(options.scenarios ?? []), ...(options.demo ? demoScenarios : [])];
  const model = new ScriptedModel({
    scenarios,
    fallbackScenario: options.fallbackScenario ?? (options.demo ? defaultDemoScenario : undefined),
    maxRecordedRequests: options.maxRecordedRequests,
  });
  let origin = `http://${host}`;

  const server = http.createServer((req, res) => {
    const clientGone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) clientGone.abort();
    });
    void (async () => {
      try {
        const request = toRequest(req, await readBody(req), clientGone.signal, origin);
        const response = await model.fetch(request);
        options.log?.(describe(request, response.status, model.recordOf(request)));
        await writeResponse(response, res, clientGone.signal);
      } catch (error) {
        // Any failure of our own becomes the API's 500 shape, so the CLI treats it like a real outage.
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify(buildApiError("api_error", "req_internal", String(error))));
        } else {
          res.destroy();
        }
      }
    })();
  });
  // Streams can legitimately stay open for minutes (slow scenarios); never time them out.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: origin,
    port,
    host,
    model,
    get requests() {
      return model.requests;
    },
    addScenario: (...args) => model.addScenario(...args),
    clearRequests: () => model.clearRequests(),
    waitForRequest: (...args) => model.waitForRequest(...args),
    close() {
      closing ??= new Promise<void>((resolve) => {
        model.close();
        server.close(() => resolve());
        // Keep-alive sockets from the CLI would otherwise hold close() open.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * The edge in front of two real Socket.IO servers, under Node (in this process) and under Deno
 * (the real `deno` binary running deno.ts, configured through CONDUIT_SIDECAR_UPSTREAMS):
 * Socket.IO's long-polling stays on the sidecar that handed out its `sid` (the sticky cookie;
 * a request on the wrong one would be answered 400 "Session ID unknown"), new browsers are
 * spread over both, and a sidecar whose /healthz fails is taken out: its WebSockets are
 * closed, the clients reconnect to the other one, new connections go there too, and it comes
 * back in once it answers again. Each change is logged once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { Server as SocketServer } from "socket.io";
import { io as connectSocket, type Socket as ClientSocket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../e2e/support/fresh-clone";
import { until } from "../../test/until";
import { createEdgeHandler } from "./handler";
import { startEdgeServer } from "./node-adapter";

const root = path.resolve(import.meta.dirname, "..", "..");
const SESSION = "next-auth.session-token=test-token";

interface Upstream {
  name: string;
  origin: string;
  io: SocketServer;
  /** Engine.IO's refusals (an unknown sid among them): must stay empty. */
  errors: string[];
  setHealthy(healthy: boolean): void;
  /** Stops listening and cuts every TCP connection, upgraded ones too: to its peers, a kill -9. */
  kill(): Promise<void>;
}

async function startUpstream(name: string): Promise<Upstream> {
  let healthy = true;
  const http: Server = createServer((req, res) => {
    if ((req.url ?? "").split("?")[0] === "/healthz") {
      res.writeHead(healthy ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: healthy, sidecarId: name }));
      return;
    }
    res.writeHead(404);
    res.end();
  });
  // default ping timings: the hand-made polling client answers pings only while it waits for an answer
  const io = new SocketServer(http, { serveClient: false });
  const errors: string[] = [];
  io.engine.on("connection_error", (err: { message: string; req: { method?: string; url?: string } }) =>
    errors.push(`${err.message}: ${err.req.method} ${err.req.url} ${Date.now() % 100000}`),
  );
  io.on("connection", (socket) => socket.on("who", (ack: (name: string) => void) => ack(name)));
  const connections = new Set<Socket>();
  http.on("connection", (socket: Socket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    name,
    origin: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    io,
    errors,
    setHealthy: (value) => (healthy = value),
    kill: async () => {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      for (const socket of connections) socket.destroy();
      await closed;
      await new Promise<void>((resolve) => void io.close(() => resolve()));
    },
  };
}

interface RunningEdge {
  url: string;
  /** The edge's log lines as parsed JSON. */
  logs(): { event?: string; upstream?: string }[];
  close(): Promise<void>;
}

async function startNodeEdge(upstreams: Upstream[]): Promise<RunningEdge> {
  const entries: { event?: string; upstream?: string }[] = [];
  const [port] = await freePorts(1);
  const handler = createEdgeHandler({
    nextOrigin: "http://127.0.0.1:9",
    sidecarOrigin: upstreams.map((u) => u.origin),
    publicOrigin: `http://127.0.0.1:${port}`,
    fetch: globalThis.fetch,
    log: (entry) => entries.push(entry),
    rateLimit: false,
  });
  const server = await startEdgeServer({ port: port!, host: "127.0.0.1", handler });
  return {
    url: `http://127.0.0.1:${server.port}`,
    logs: () => entries,
    close: async () => {
      await handler.close();
      await server.close();
    },
  };
}

async function startDenoEdge(upstreams: Upstream[]): Promise<RunningEdge> {
  const [port] = await freePorts(1);
  const child: ChildProcess = spawn(
    path.join(root, "node_modules", ".bin", "deno"),
    ["run", "--node-modules-dir=manual", "--unstable-sloppy-imports", "--allow-net", "--allow-env", "--allow-read", "server/edge-proxy/deno.ts"],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        NO_COLOR: "1",
        PORT: String(port),
        CONDUIT_SIDECAR_UPSTREAMS: upstreams.map((u) => u.origin).join(","),
        CONDUIT_WEB_UPSTREAM: "http://127.0.0.1:9",
        CONDUIT_EDGE_RATE_LIMIT: "off",
      } as Record<string, string> as NodeJS.ProcessEnv,
    },
  );
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`the Deno edge exited:\n${output}`);
      return (await fetch(`${url}/healthz`).then((r) => r.status, () => 0)) === 200;
    },
    50_000,
    "the Deno edge answering",
    250,
  );
  return {
    url,
    logs: () =>
      output
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { event?: string; upstream?: string }),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * A browser's long-polling session, spoken by hand (Engine.IO v4): it keeps cookies as a browser
 * does, so the sticky cookie comes back on every request. Throws on any refused request.
 */
async function pollingClient(edge: string) {
  const cookies = new Map<string, string>([["next-auth.session-token", "test-token"]]);
  const base = `${edge}/socket.io/?EIO=4&transport=polling`;
  async function send(query: string, init: RequestInit = {}): Promise<string> {
    const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(base + query, { ...init, headers: { cookie, "content-type": "text/plain;charset=UTF-8" } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${query}: ${res.status} ${text}`);
    return text;
  }
  const opened = await send("");
  const sid = (JSON.parse(opened.slice(1)) as { sid: string }).sid;
  const q = `&sid=${encodeURIComponent(sid)}`;
  await send(q, { method: "POST", body: "40" });
  let inbox = await send(q);
  if (!inbox.split("\x1e").some((p) => p.startsWith("40"))) throw new Error(`no connect packet: ${inbox}`);
  let nextAck = 0;
  return {
    sid,
    cookies,
    /** Asks the server its name with an acknowledged event, polling until the answer comes. */
    async who(): Promise<string> {
      const id = nextAck++;
      await send(q, { method: "POST", body: `42${id}["who"]` });
      for (;;) {
        inbox = await send(q);
        for (const packet of inbox.split("\x1e")) {
          if (packet === "2") await send(q, { method: "POST", body: "3" });
          if (packet.startsWith(`43${id}`)) return (JSON.parse(packet.slice(`43${id}`.length)) as string[])[0]!;
        }
      }
    },
    close: () => send(q, { method: "POST", body: "1" }).catch(() => ""),
  };
}

/** A Socket.IO client on WebSocket only (one connection, no stickiness needed), reconnecting. */
function websocketClient(edge: string): ClientSocket {
  return connectSocket(edge, {
    transports: ["websocket"],
    extraHeaders: { cookie: SESSION },
    reconnectionDelay: 100,
    reconnectionDelayMax: 300,
    forceNew: true,
  });
}

const whoOver = (socket: ClientSocket) =>
  new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no answer to who")), 5_000);
    socket.emit("who", (name: string) => {
      clearTimeout(timer);
      resolve(name);
    });
  });

/** Every socket connected and answered by `name` (an emit lost to a connection being closed is "not yet"). */
const allAnsweredBy = async (sockets: ClientSocket[], name: string) =>
  sockets.every((s) => s.connected) &&
  (await Promise.all(sockets.map((s) => Promise.race([whoOver(s), new Promise<string>((r) => setTimeout(() => r("none"), 1_000))])))).every(
    (n) => n === name,
  );

describe.each([
  { runtime: "node", start: startNodeEdge },
  { runtime: "deno", start: startDenoEdge },
])("the edge under $runtime with two sidecars", ({ start }) => {
  let a: Upstream;
  let b: Upstream;
  let edge: RunningEdge;
  const sockets: ClientSocket[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startUpstream("A"), startUpstream("B")]);
    edge = await start([a, b]);
  }, 60_000);

  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await edge?.close();
    await Promise.all([a?.kill(), b?.kill()]);
  }, 30_000);

  it("keeps each long-polling session on the sidecar that handed out its sid, and spreads new ones over both", async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, () => pollingClient(edge.url)));
    const names: string[] = [];
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(clients.map((c) => c.who())).catch((err: unknown) => {
        throw new Error(`${String(err)}; edge log: ${JSON.stringify(edge.logs())}`);
      });
      if (round === 0) names.push(...answers);
      // the same sidecar answers a session every time
      else expect(answers).toEqual(names);
    }
    expect(edge.logs().filter((l) => l.event === "upstream_out")).toEqual([]);
    expect(new Set(names)).toEqual(new Set(["A", "B"]));
    // each browser carries the sticky cookie the edge set on its handshake
    for (const c of clients) expect(c.cookies.get("conduit-sidecar")).toMatch(/^[0-9a-f]{8}$/);
    expect([...a.errors, ...b.errors]).toEqual([]);
    await Promise.all(clients.map((c) => c.close()));
  });

  it("takes a sidecar that fails its health checks out: its WebSockets are closed and reconnect to the other, new sessions go there, and it comes back", async () => {
    for (let i = 0; i < 4; i++) sockets.push(websocketClient(edge.url));
    await until(() => sockets.every((s) => s.connected), 10_000, "websockets connected");
    const before = await Promise.all(sockets.map(whoOver));
    expect(new Set(before)).toEqual(new Set(["A", "B"]));
    const disconnects = sockets.map(() => 0);
    sockets.forEach((s, i) => s.on("disconnect", () => (disconnects[i]! += 1)));

    a.setHealthy(false);
    await until(() => edge.logs().some((l) => l.event === "upstream_out" && l.upstream === a.origin), 15_000, "A taken out");
    await until(() => allAnsweredBy(sockets, "B"), 15_000, "every socket on B");
    // exactly the sockets that were on A were closed and reconnected
    expect(disconnects.map((d) => d > 0)).toEqual(before.map((n) => n === "A"));
    const polling = await Promise.all(Array.from({ length: 4 }, () => pollingClient(edge.url)));
    expect(await Promise.all(polling.map((c) => c.who()))).toEqual(["B", "B", "B", "B"]);
    await Promise.all(polling.map((c) => c.close()));

    a.setHealthy(true);
    await until(() => edge.logs().some((l) => l.event === "upstream_in" && l.upstream === a.origin), 15_000, "A back in");
    const again = await Promise.all(Array.from({ length: 4 }, () => pollingClient(edge.url)));
    expect(new Set(await Promise.all(again.map((c) => c.who())))).toEqual(new Set(["A", "B"]));
    await Promise.all(again.map((c) => c.close()));
    // logged once per change, not once per check
    const changes = edge.logs().filter((l) => (l.event === "upstream_out" || l.event === "upstream_in") && l.upstream === a.origin);
    expect(changes.map((l) => l.event)).toEqual(["upstream_out", "upstream_in"]);
    expect([...a.errors, ...b.errors]).toEqual([]);
  }, 60_000);

  it("moves the WebSockets of a sidecar that dies to the survivor, and new sessions too", async () => {
    // two more, so that the rotation (A back in) puts one of them on A
    const late = [websocketClient(edge.url), websocketClient(edge.url)];
    sockets.push(...late);
    await until(() => late.every((s) => s.connected), 10_000, "late websockets connected");
    expect(new Set(await Promise.all(late.map(whoOver)))).toEqual(new Set(["A", "B"]));
    await a.kill();
    await until(() => edge.logs().filter((l) => l.event === "upstream_out" && l.upstream === a.origin).length === 2, 15_000, "dead A taken out");
    await until(() => allAnsweredBy(sockets, "B"), 15_000, "every socket on B");
    const polling = await Promise.all(Array.from({ length: 3 }, () => pollingClient(edge.url)));
    expect(await Promise.all(polling.map((c) => c.who()))).toEqual(["B", "B", "B"]);
    await Promise.all(polling.map((c) => c.close()));
  }, 60_000);
});

/**
 * What a session can reach of Conduit itself (issue 37), attacked from inside a real session of
 * an `open` workspace (the default policy) with approved Bash:
 *
 * - reach: the web app's and the sidecar's internal ports, the model server's port, `/metrics`
 *   of each, PostgreSQL's 5432 and Redis's 6379 on loopback and the cloud metadata address, each
 *   through the egress proxy (`--noproxy ''`: its 403 naming the reason) and around it
 *   (`--noproxy '*'` or bash's `/dev/tcp`: no route, the session has a network of its own);
 * - the credential proxy: with the session's own `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`,
 *   every method and path besides `POST /v1/messages` and `POST /v1/messages/count_tokens`
 *   (other routes, dot segments as sent, encoded dots, an empty segment, another method) is
 *   refused;
 * - and, from this test process, the edge refuses a `Host` that is not the public one with 421
 *   (DNS rebinding): pages, the health check, a sign-up with a matching Origin, Socket.IO.
 *
 * The ports: the edge is baseURL, the sidecar CONDUIT_SECURITY_SIDECAR_URL, the model server the
 * gateway in the checkout's `.env`, the web app's port the CONDUIT_NEXT_PORT of the instance's
 * processes (found in /proc by the edge's port).
 */
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { uniqueEmail, password } from "../fixtures";
import { bashPrompt } from "./attack-scenarios";
import { signUpAndIn } from "./clients";
import { recordAttempt } from "./ledger";
import { SessionProbe } from "./session-probe";

test.describe.configure({ mode: "serial" });

let owner: APIRequestContext;
let baseURL: string;
let slug: string;
let probe: SessionProbe;

const checkout = process.env.CONDUIT_SECURITY_CHECKOUT ?? "";
const sidecarUrl = new URL(process.env.CONDUIT_SECURITY_SIDECAR_URL ?? "http://127.0.0.1:1");

/** The gateway the operator's `.env` names: the scripted model server the suite started. */
function modelPort(): number {
  const env = readFileSync(path.join(checkout, ".env"), "utf8");
  const url = /^ANTHROPIC_BASE_URL=(.+)$/m.exec(env)?.[1]?.trim();
  if (!url) throw new Error("no ANTHROPIC_BASE_URL in the checkout's .env");
  return Number(new URL(url).port);
}

/**
 * The web app's internal port: CONDUIT_NEXT_PORT in the environment of the instance's processes
 * (the suite starts it with PORT set to the edge's port, which is baseURL's).
 */
function webPort(): number {
  const edgePort = new URL(baseURL).port;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!env.includes(`PORT=${edgePort}`)) continue;
      const next = env.find((e) => e.startsWith("CONDUIT_NEXT_PORT="));
      if (next) return Number(next.slice("CONDUIT_NEXT_PORT=".length));
    } catch {
      // gone, or not ours
    }
  }
  throw new Error(`no process of the instance at port ${edgePort} found in /proc`);
}

test.beforeAll(async ({ baseURL: url }) => {
  baseURL = url!;
  owner = await signUpAndIn(baseURL, uniqueEmail("reach-owner"));
  const created = await owner.post("/api/workspaces", { data: { name: `Reach ${Date.now().toString(36)}` } });
  expect(created.status(), await created.text()).toBe(201);
  slug = ((await created.json()) as { data: { slug: string } }).data.slug;
  const policy = await owner.put(`/api/workspaces/${slug}/network`, { data: { mode: "open" } });
  expect(policy.status(), await policy.text()).toBe(200);
  probe = await SessionProbe.open(owner, baseURL, slug);
});

test.afterAll(async () => {
  await probe?.stop().catch(() => undefined);
  probe?.close();
  await owner?.dispose();
});

const SECTION = "@@REACH@@";

/** Runs `tries` as one approved Bash call, one section of output per try, in order. */
async function runSections(tries: readonly { attack: string; command: string }[]): Promise<string[]> {
  const outcome = await probe.runTool(bashPrompt(tries.map((t) => `echo "${SECTION}"; ${t.command}`).join("; ")));
  await probe.turnEnded(90_000);
  const sections = outcome.text.split(SECTION).slice(1).map((s) => s.trim());
  expect(sections, outcome.text).toHaveLength(tries.length);
  return sections;
}

interface Target {
  name: string;
  /** host:port */
  at: string;
  path: string;
  /** a raw TCP service: around the proxy, a `/dev/tcp` connect instead of curl */
  tcp?: string;
}

function targets(): Target[] {
  const web = `127.0.0.1:${webPort()}`;
  const sidecar = `127.0.0.1:${sidecarUrl.port}`;
  const model = `127.0.0.1:${modelPort()}`;
  return [
    { name: "the web app's internal port", at: web, path: "/api/health" },
    { name: "the web app's /metrics", at: web, path: "/metrics" },
    { name: "the sidecar's internal port", at: sidecar, path: "/socket.io/?EIO=4&transport=polling" },
    { name: "the sidecar's /metrics", at: sidecar, path: "/metrics" },
    { name: "the model server's port", at: model, path: "/v1/models" },
    { name: "the model server's /metrics", at: model, path: "/metrics" },
    { name: "PostgreSQL on loopback", at: "127.0.0.1:5432", path: "/", tcp: "" },
    { name: "Redis on loopback", at: "127.0.0.1:6379", path: "/", tcp: "PING\\r\\nINFO server\\r\\n" },
    { name: "the cloud metadata address", at: "169.254.169.254:80", path: "/latest/meta-data/" },
  ];
}

// the egress proxy's refusal, naming why (checked on the resolved address)
const proxyRefusal = /HTTP\/1\.[01] 403[\s\S]*(is not a public address|is an address of this host)/;
// no route: connection refused or unreachable (7), or nothing answering in time (28 / 124)
const noRoute = /(curl|tcp)-exit=(7|28|124)\b/;
const successMarker = /\+PONG|redis_version|HTTP\/1\.[01] 2\d\d/;

test("S8: from an `open` session, Conduit's internal ports, /metrics, PostgreSQL, Redis and the metadata address refuse through the egress proxy", async () => {
  const list = targets();
  const sections = await runSections(
    list.map((t) => ({ attack: t.name, command: `curl -sS -i -m 3 --noproxy '' 'http://${t.at}${t.path}' 2>&1 | head -c 600; s=\${PIPESTATUS[0]}; echo; echo "curl-exit=$s"` })),
  );
  for (const [index, t] of list.entries()) {
    const out = sections[index]!;
    const allowed = successMarker.test(out) || !proxyRefusal.test(out);
    recordAttempt({ probe: "reach/through-proxy", check: "S8", attack: `${t.name} (${t.at}${t.path}) through the egress proxy from an \`open\` session`, kind: "escape", allowed, detail: out.slice(0, 160) });
    expect.soft(allowed, `${t.name}: ${out}`).toBe(false);
  }
});

test("S8: from an `open` session, the same targets find no route around the egress proxy", async () => {
  const list = targets();
  const sections = await runSections(
    list.map((t) => {
      if (t.tcp === undefined) return { attack: t.name, command: `curl -sS -i -m 3 --noproxy '*' 'http://${t.at}${t.path}' 2>&1 | head -c 600; s=\${PIPESTATUS[0]}; echo; echo "curl-exit=$s"` };
      const [host, port] = t.at.split(":");
      const send = t.tcp ? `printf "${t.tcp}" >&3; ` : "";
      return {
        attack: t.name,
        command: `timeout 4 bash -c 'exec 3<>/dev/tcp/${host}/${port} || exit 7; echo connected; ${send}timeout 2 head -c 300 <&3' 2>&1; s=$?; echo; echo "tcp-exit=$s"`,
      };
    }),
  );
  for (const [index, t] of list.entries()) {
    const out = sections[index]!;
    const allowed = successMarker.test(out) || /connected/.test(out) || /HTTP\/1\.[01] \d/.test(out) || !noRoute.test(out);
    recordAttempt({ probe: "reach/around-proxy", check: "S8", attack: `${t.name} (${t.at}) around the egress proxy from an \`open\` session`, kind: "escape", allowed, detail: out.slice(0, 160) });
    expect.soft(allowed, `${t.name}: ${out}`).toBe(false);
  }
});

test("S7: the credential proxy relays only the two Messages routes, matched as sent, for the session's own token", async () => {
  const body = `'{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'`;
  const call = (method: string, p: string) =>
    `curl -sS -m 5 --noproxy '*' --path-as-is -o /dev/null -w 'status=%{http_code}' -X ${method} -H "x-api-key: $ANTHROPIC_API_KEY" -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' ${method === "GET" ? "" : `--data ${body}`} "\${ANTHROPIC_BASE_URL%/}${p}" 2>&1; s=$?; echo; echo "curl-exit=$s"`;
  const tries = [
    { attack: "GET /v1/models", command: call("GET", "/v1/models") },
    { attack: "POST /v1/files", command: call("POST", "/v1/files") },
    { attack: "POST /v1/messages/batches", command: call("POST", "/v1/messages/batches") },
    { attack: "POST /../x (a dot segment as sent)", command: call("POST", "/../x") },
    { attack: "POST /%2e%2e/x (encoded dots)", command: call("POST", "/%2e%2e/x") },
    { attack: "POST //v1/messages (an empty segment)", command: call("POST", "//v1/messages") },
    { attack: "PUT /v1/messages", command: call("PUT", "/v1/messages") },
  ];
  // the control: the session really holds a token and a base URL, and the allowed route answers
  const control = `echo "base=\${ANTHROPIC_BASE_URL:-unset} key=\${ANTHROPIC_API_KEY:+set}"; ${call("POST", "/v1/messages")}`;
  const sections = await runSections([{ attack: "control", command: control }, ...tries]);
  expect(sections[0], "the session's own credential and the allowed route (control)").toMatch(/base=http[\s\S]*key=set[\s\S]*status=200/);
  for (const [index, t] of tries.entries()) {
    const out = sections[index + 1]!;
    const status = /status=(\d{3})/.exec(out)?.[1];
    const allowed = status === undefined ? true : /^2/.test(status);
    recordAttempt({ probe: "reach/credential-proxy", check: "S7", attack: `${t.attack} through the credential proxy with the session's token`, kind: "escape", allowed, detail: out.slice(0, 160) });
    expect.soft(allowed, `${t.attack}: ${out}`).toBe(false);
    expect.soft(["400", "403", "404", "405"], `${t.attack}: ${out}`).toContain(status);
  }
});

/** One request to the edge with a Host of another site (what a DNS-rebinding page's requests carry). */
function askEdge(method: string, p: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const edge = new URL(baseURL);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: edge.hostname, port: Number(edge.port), method, path: p, headers: { ...headers, ...(body ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body);
  });
}

test("S1: the edge answers 421 to a Host that is not the public one (DNS rebinding)", async () => {
  const evil = "evil.example";
  const email = uniqueEmail("rebind");
  const tries: { attack: string; method: string; path: string; headers: Record<string, string>; body?: string }[] = [
    { attack: "GET / with Host: evil.example", method: "GET", path: "/", headers: { host: evil } },
    { attack: "GET /api/health with Host: evil.example", method: "GET", path: "/api/health", headers: { host: evil } },
    {
      attack: "POST /api/signup with Host and Origin evil.example",
      method: "POST",
      path: "/api/signup",
      headers: { host: evil, origin: `http://${evil}` },
      body: JSON.stringify({ email, password, name: `rebind-${randomBytes(3).toString("hex")}` }),
    },
    { attack: "Socket.IO polling handshake with Host and Origin evil.example", method: "GET", path: "/socket.io/?EIO=4&transport=polling", headers: { host: evil, origin: `http://${evil}` } },
  ];
  for (const t of tries) {
    const res = await askEdge(t.method, t.path, t.headers, t.body);
    const allowed = res.status >= 200 && res.status < 400;
    recordAttempt({ probe: "reach/edge-host", check: "S1", attack: `${t.attack} at the edge`, kind: "access", allowed, detail: `${res.status} ${res.text.slice(0, 120)}` });
    expect.soft(allowed, `${t.attack}: ${res.status} ${res.text}`).toBe(false);
    expect.soft(res.status, `${t.attack}: ${res.text}`).toBe(421);
  }
  // the control: the public Host is not refused as misdirected
  const health = await askEdge("GET", "/api/health", { host: new URL(baseURL).host });
  expect(health.status, health.text).not.toBe(421);
});

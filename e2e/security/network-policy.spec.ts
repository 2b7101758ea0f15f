/**
 * Per-workspace network narrowing (issue 11), attacked from inside real sessions of a real
 * Conduit: an owner sets the policy through the API, a session starts, and its approved Bash
 * tries to reach an HTTP server this spec runs on the host's loopback (standing in for the
 * internet and for anything else on the host). `none`: the model still answers, the server is
 * out of reach. `allowlist`: an unlisted name and an IP literal get the proxy's 403, and going
 * around the proxy finds no route. `open` goes through the egress proxy too, which refuses the
 * host's loopback by its resolved address (its 403 naming the reason shows the proxy path works).
 * A listed name working through the proxy needs a resolvable test name; that is covered by
 * test/security/session-network.integration.test.ts.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { uniqueEmail } from "../fixtures";
import { bashPrompt } from "./attack-scenarios";
import { signUpAndIn } from "./clients";
import { recordAttempt } from "./ledger";
import { SessionProbe } from "./session-probe";

const reached = `NET-REACHED-${randomBytes(6).toString("hex")}`;
let server: http.Server;
let port = 0;
let owner: APIRequestContext;
let baseURL: string;
let slug: string;
const probes: SessionProbe[] = [];

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ baseURL: url }) => {
  baseURL = url!;
  server = http.createServer((_req, res) => res.end(`${reached}\n`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  owner = await signUpAndIn(baseURL, uniqueEmail("net-owner"));
  const created = await owner.post("/api/workspaces", { data: { name: `Network ${Date.now().toString(36)}` } });
  expect(created.status(), await created.text()).toBe(201);
  slug = ((await created.json()) as { data: { slug: string } }).data.slug;
});

test.afterAll(async () => {
  for (const probe of probes) {
    await probe.stop().catch(() => undefined);
    probe.close();
  }
  await owner?.dispose();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function setPolicy(body: { mode: string; domains?: string[] }) {
  const res = await owner.put(`/api/workspaces/${slug}/network`, { data: body });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { data: { mode: string; domains: string[]; enforceable: boolean } }).data;
}

async function session(): Promise<SessionProbe> {
  const probe = await SessionProbe.open(owner, baseURL, slug);
  probes.push(probe);
  return probe;
}

const curl = (url: string, extra = "") => `curl -sS -m 5 ${extra} '${url}' 2>&1; echo "curl-exit=$?"`;

test("the policy refuses bad input with a clear message", async () => {
  const bad = await owner.put(`/api/workspaces/${slug}/network`, { data: { mode: "allowlist", domains: ["registry.npmjs.org", "10.0.0.1"] } });
  expect(bad.status()).toBe(400);
  expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/"10\.0\.0\.1" is an IP address/);
  const empty = await owner.put(`/api/workspaces/${slug}/network`, { data: { mode: "allowlist", domains: [] } });
  expect(empty.status()).toBe(400);
});

test("S8: a `none` workspace's session gets its model's answer but cannot reach the host's server", async () => {
  expect((await setPolicy({ mode: "none" })).enforceable).toBe(true);
  const probe = await session();
  const outcome = await probe.runTool(
    bashPrompt(
      `${curl(`http://127.0.0.1:${port}/`)}; node -e 'fetch("http://127.0.0.1:${port}/").then(async (r) => console.log(await r.text()), (e) => console.log("fetch failed", e.cause?.code))'`,
    ),
  );
  const allowed = outcome.text.includes(reached);
  recordAttempt({ probe: "network/none-loopback", check: "S8", attack: "curl and node fetch to the host's loopback from a `none` workspace", kind: "escape", allowed, detail: outcome.text.slice(0, 120) });
  expect(allowed, outcome.text).toBe(false);
  expect(outcome.text).toContain("curl-exit=7");
  expect(outcome.text).toContain("fetch failed");
});

test("S8: an `allowlist` workspace's session gets 403 for unlisted names and IP literals, and no route around the proxy", async () => {
  await setPolicy({ mode: "allowlist", domains: ["registry.npmjs.org", "*.conduit.test"] });
  const probe = await session();
  const tries: { attack: string; command: string }[] = [
    { attack: "curl an unlisted name through the proxy", command: curl(`http://unlisted.example:${port}/`, "-i") },
    { attack: "CONNECT to an unlisted name", command: curl(`https://unlisted.example:${port}/`) },
    { attack: "curl an IP literal through the proxy", command: curl(`http://127.0.0.1:${port}/`, "--noproxy '' -i") },
    { attack: "curl the host's loopback around the proxy", command: curl(`http://127.0.0.1:${port}/`) },
    { attack: "curl a listed name around the proxy", command: curl(`http://allowed.conduit.test:${port}/`, "--noproxy '*'") },
  ];
  const outcome = await probe.runTool(bashPrompt(tries.map((t) => `echo "== ${t.attack}"; ${t.command}`).join("; ")));
  const sections = outcome.text.split("== ").slice(1);
  expect(sections, outcome.text).toHaveLength(tries.length);
  for (const [index, t] of tries.entries()) {
    const allowed = sections[index]!.includes(reached);
    recordAttempt({ probe: "network/allowlist", check: "S8", attack: `${t.attack} from an \`allowlist\` workspace`, kind: "escape", allowed, detail: sections[index]!.slice(0, 120) });
    expect.soft(allowed, sections[index]).toBe(false);
  }
  expect(sections[0]).toMatch(/403 Forbidden[\s\S]*unlisted\.example is not on this workspace's network allow-list/);
  expect(sections[1]).toMatch(/403/);
  expect(sections[2]).toContain("127.0.0.1 is an IP address");
});

test("S8: an `open` workspace's session goes out through the egress proxy, which refuses the host's loopback, and finds no route around it", async () => {
  // Since issue 37 every sandboxed session has a network of its own: `open` allows any public
  // address through the egress proxy and refuses loopback, private and link-local ones (checked on
  // the resolved address). The proxy's 403 naming the reason is the control that the proxy path works.
  await setPolicy({ mode: "open" });
  const probe = await session();
  const tries: { attack: string; command: string }[] = [
    // NO_PROXY names the sandbox's own loopback (the model's forwarder): --noproxy '' sends these to the proxy anyway
    { attack: "curl the host's loopback through the proxy", command: curl(`http://127.0.0.1:${port}/`, "--noproxy '' -i") },
    { attack: "curl localhost by name through the proxy", command: curl(`http://localhost:${port}/`, "--noproxy '' -i") },
    { attack: "curl the host's loopback around the proxy", command: curl(`http://127.0.0.1:${port}/`, "--noproxy '*'") },
  ];
  const outcome = await probe.runTool(bashPrompt(tries.map((t) => `echo "== ${t.attack}"; ${t.command}`).join("; ")));
  const sections = outcome.text.split("== ").slice(1);
  expect(sections, outcome.text).toHaveLength(tries.length);
  for (const [index, t] of tries.entries()) {
    const allowed = sections[index]!.includes(reached);
    recordAttempt({ probe: "network/open-loopback", check: "S8", attack: `${t.attack} from an \`open\` workspace`, kind: "escape", allowed, detail: sections[index]!.slice(0, 120) });
    expect.soft(allowed, sections[index]).toBe(false);
  }
  expect(sections[0]).toMatch(/403[\s\S]*(is not a public address|is an address of this host)/);
  expect(sections[2]).toContain("curl-exit=7");
});

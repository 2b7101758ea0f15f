// Issue 11's per-workspace network narrowing, from inside a real session (the real CLI in the
// bubblewrap sandbox, its key a credential-proxy token, approved Bash): in a `none` workspace the
// model still answers (through the proxy's Unix socket) but nothing else is reachable; in an
// `allowlist` workspace a listed name works through the filtering proxy (HTTP and CONNECT), an
// unlisted one and any IP literal get 403, and going around the proxy finds no route. The `open`
// control reaches the same server, so each refusal is the policy's doing.
//
// The "internet" is an HTTP server on the host's loopback. The allow-list names test domains
// (`*.conduit.test`) that the egress proxy's injected lookup resolves to that server; production
// uses the system resolver and refuses IP literals, so listing 127.0.0.1 is no way in.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempt } from "@/e2e/security/ledger";
import { startTenantRig, type TenantRig } from "./tenant-rig";

const reached = `HOST-REACHED-${randomBytes(6).toString("hex")}`;
let host: http.Server;
let port = 0;

// Test names → the loopback server; anything else does not resolve.
const lookup: LookupFunction = (hostname, options, callback) => {
  if (hostname.endsWith(".conduit.test")) {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
    return;
  }
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
};

beforeAll(async () => {
  host = http.createServer((req, res) => res.end(`${reached} ${req.headers.host ?? ""}\n`));
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  port = (host.address() as AddressInfo).port;
});
afterAll(async () => {
  host.closeAllConnections();
  await new Promise((resolve) => host.close(resolve));
});

const curl = (url: string, extra = "") => `curl -sS -m 5 ${extra} '${url}' 2>&1; echo "curl-exit=$?"`;
const nodeFetch = (url: string) =>
  `node -e 'fetch("${url}", { signal: AbortSignal.timeout(5000) }).then(async (r) => console.log(r.status, await r.text()), (e) => console.log("fetch failed", e.cause?.code ?? e.message))'`;

describe("a session in a `none` workspace", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ network: { mode: "none", domains: [] } });
    expect(rig.sandbox.mode).toBe("bwrap");
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("still gets its model's answers, through the credential proxy's socket", async () => {
    const outcome = await rig.bash("echo inside");
    expect(outcome.isError, outcome.text).toBe(false);
    expect(outcome.text).toContain("inside");
    expect(rig.proxy.usageOf(rig.kit.options.sessionId).requests).toBeGreaterThan(0);
    expect(rig.attachments).toHaveLength(1);
    expect(rig.attachments[0]!.policy.mode).toBe("none");
  });

  it("cannot reach a server on the host's loopback with curl or node's fetch", async () => {
    const outcome = await rig.bash(`${curl(`http://127.0.0.1:${port}/`)}; ${nodeFetch(`http://127.0.0.1:${port}/`)}; ${curl("http://example.com/")}`);
    const allowed = outcome.text.includes(reached);
    recordAttempt({ check: "S8", attack: "Bash curl / node fetch to the host's loopback from a `none` workspace", kind: "escape", allowed });
    expect(allowed).toBe(false);
    expect(outcome.text).toMatch(/curl-exit=7/); // connection refused: nothing listens in the private loopback
    expect(outcome.text).toContain("fetch failed");
    expect(outcome.text).toMatch(/curl-exit=6/); // no DNS either
  });
});

describe("a session in an `allowlist` workspace", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ network: { mode: "allowlist", domains: ["allowed.conduit.test"] }, lookup });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("reaches a listed name through the proxy, by plain HTTP and by a CONNECT tunnel", async () => {
    const outcome = await rig.bash(`env | grep -i _proxy | sort; ${curl(`http://allowed.conduit.test:${port}/plain`)}; ${curl(`http://allowed.conduit.test:${port}/tunnel`, "-p")}`);
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toMatch(/HTTPS_PROXY=http:\/\/127\.0\.0\.1:\d+/);
    expect(outcome.text).toContain("NO_PROXY=127.0.0.1,localhost");
    expect(outcome.text.split(reached).length - 1).toBe(2);
  });

  it("gets 403 for an unlisted name and for an IP literal, and finds no route around the proxy", async () => {
    const outcome = await rig.bash(
      [
        curl(`http://other.conduit.test:${port}/`, "-i"),
        curl(`http://other.conduit.test:${port}/`, "-p"),
        curl(`http://127.0.0.1:${port}/`, "--noproxy '' -i"),
        curl(`http://allowed.conduit.test:${port}/`, "--noproxy '*'"),
        curl(`http://127.0.0.1:${port}/`),
      ].join("; "),
    );
    const allowed = outcome.text.includes(reached);
    recordAttempt({ check: "S8", attack: "Bash curl to an unlisted name, an IP literal and around the proxy from an `allowlist` workspace", kind: "escape", allowed });
    expect(allowed).toBe(false);
    expect(outcome.text).toMatch(/403 Forbidden[\s\S]*other\.conduit\.test is not on this workspace's network allow-list/);
    expect(outcome.text).toContain("127.0.0.1 is an IP address");
    expect(outcome.text).toMatch(/CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy after CONNECT/);
    const refusals = rig.attachments.at(-1)!.egress!.refusals.map((r) => r.host);
    expect(refusals).toEqual(expect.arrayContaining(["other.conduit.test", "127.0.0.1"]));
  });
});

describe("the same requests from an `open` workspace (control)", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("reach the host's server: the namespace is what stops them", async () => {
    const outcome = await rig.bash(curl(`http://127.0.0.1:${port}/`));
    expect(outcome.text).toContain(reached);
    expect(rig.attachments).toEqual([]);
  });
});

describe("a `none` workspace where sessions run without a sandbox", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ sandbox: "off", network: { mode: "none", domains: [] } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("refuses to start the session rather than run it open", async () => {
    await expect(rig.kit.runner.start()).rejects.toThrow(/network is narrowed, but Conduit runs without a sandbox/);
    expect(rig.attachments).toEqual([]);
    expect(rig.proxy.liveTokens).toBe(0);
  });
});

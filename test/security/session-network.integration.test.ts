// Issues 11 and 37: the network of a real session (the real CLI in the bubblewrap sandbox, its key
// a credential-proxy token, approved Bash), its own namespace in every policy. In a `none`
// workspace the model still answers (through the proxy's Unix socket) but nothing else is
// reachable; in an `allowlist` workspace a listed name works through the filtering proxy (HTTP and
// CONNECT), an unlisted one and any IP literal get 403, and going around the proxy finds no route;
// in an `open` workspace a public server is reached through the egress proxy, but not the host's
// loopback ports, a private address, the cloud metadata address or an abstract Unix socket of the
// host. The control (no sandbox) reaches the same server and socket, so each refusal is the
// namespace's and the proxy's doing.
//
// The "internet" is an HTTP server on the host's loopback. The allow-list names test domains
// (`*.conduit.test`) that the egress proxy's injected lookup resolves to that server; production
// uses the system resolver and refuses IP literals, so listing 127.0.0.1 is no way in. For the
// open policy the public server listens on a loopback alias (127.0.0.2) that the proxy's test hook
// treats as public; private and metadata addresses are refused before any connection is made, so
// no packet goes to them.
import { randomBytes } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo, type LookupFunction } from "node:net";
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

// The open policy's names: a public server on a loopback alias, the metadata address, a private one.
const publicAlias = "127.0.0.2";
const openLookup: LookupFunction = (hostname, options, callback) => {
  const table: Record<string, string> = { "public.conduit.test": publicAlias, "metadata.conduit.test": "169.254.169.254", "private.conduit.test": "10.0.0.7" };
  const address = table[hostname];
  if (address === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
  if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
  else callback(null, address, 4);
};
const world = `WORLD-REACHED-${randomBytes(6).toString("hex")}`;
let worldServer: http.Server;
let worldPort = 0;
// An abstract Unix socket of the host (no file: only the network namespace separates it).
const abstractName = `conduit-test-${randomBytes(6).toString("hex")}`;
const abstractReached = `ABSTRACT-REACHED-${randomBytes(6).toString("hex")}`;
let abstract: net.Server;

beforeAll(async () => {
  host = http.createServer((req, res) => res.end(`${reached} ${req.headers.host ?? ""}\n`));
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  port = (host.address() as AddressInfo).port;
  worldServer = http.createServer((req, res) => res.end(`${world} ${req.headers.host ?? ""}\n`));
  await new Promise<void>((resolve) => worldServer.listen(0, publicAlias, resolve));
  worldPort = (worldServer.address() as AddressInfo).port;
  abstract = net.createServer((socket) => socket.end(`${abstractReached}\n`));
  await new Promise<void>((resolve) => abstract.listen(`\0${abstractName}`, resolve));
});
afterAll(async () => {
  for (const server of [host, worldServer]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
  await new Promise((resolve) => abstract?.close(resolve));
});

const curl = (url: string, extra = "") => `curl -sS -m 5 ${extra} '${url}' 2>&1; echo "curl-exit=$?"`;
// node on the sandbox's PATH connects to the host's abstract socket (if its namespace had it).
const abstractConnect = (name: string) =>
  `node -e 'const s = require("net").connect("\\0${name}"); s.on("data", (d) => process.stdout.write(String(d))); s.on("error", (e) => console.log("abstract failed", e.code))'`;
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
    recordAttempt({ probe: "vitest/none-network", check: "S8", attack: "Bash curl / node fetch to the host's loopback from a `none` workspace", kind: "escape", allowed });
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
    recordAttempt({ probe: "vitest/allowlist-network", check: "S8", attack: "Bash curl to an unlisted name, an IP literal and around the proxy from an `allowlist` workspace", kind: "escape", allowed });
    expect(allowed).toBe(false);
    expect(outcome.text).toMatch(/403 Forbidden[\s\S]*other\.conduit\.test is not on this workspace's network allow-list/);
    expect(outcome.text).toContain("127.0.0.1 is an IP address");
    expect(outcome.text).toMatch(/CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy after CONNECT/);
    const refusals = rig.attachments.at(-1)!.egress!.refusals.map((r) => r.host);
    expect(refusals).toEqual(expect.arrayContaining(["other.conduit.test", "127.0.0.1"]));
  });
});

describe("a session in an `open` workspace", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ lookup: openLookup, treatAsPublic: (address) => address === publicAlias });
    expect(rig.sandbox.mode).toBe("bwrap");
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("gets its model's answers and reaches a public server through the egress proxy, by plain HTTP and by a CONNECT tunnel", async () => {
    const outcome = await rig.bash(`env | grep -i _proxy | sort; ${curl(`http://public.conduit.test:${worldPort}/plain`)}; ${curl(`http://public.conduit.test:${worldPort}/tunnel`, "-p")}`);
    expect(outcome.isError, outcome.text).toBe(false);
    expect(outcome.text).toMatch(/HTTPS_PROXY=http:\/\/127\.0\.0\.1:\d+/);
    expect(outcome.text.split(world).length - 1).toBe(2);
    expect(rig.proxy.usageOf(rig.kit.options.sessionId).requests).toBeGreaterThan(0);
    expect(rig.attachments.at(-1)!.policy.mode).toBe("open");
  });

  it("reaches neither the host's loopback ports, a private address, the metadata address nor a host abstract socket", async () => {
    const tries = [
      { attack: "curl the host's loopback port through the proxy", command: curl(`http://127.0.0.1:${port}/`, "--noproxy '' -i") },
      { attack: "curl the host's loopback port by CONNECT", command: curl(`http://127.0.0.1:${port}/`, "--noproxy '' -p") },
      { attack: "curl localhost around the proxy", command: curl(`http://localhost:${port}/`, "--noproxy '*'") },
      { attack: "node fetch of the host's loopback (ignores the proxy)", command: nodeFetch(`http://127.0.0.1:${port}/`) },
      { attack: "curl the metadata address", command: curl("http://169.254.169.254/latest/meta-data/", "-i") },
      { attack: "curl a name that resolves to the metadata address", command: curl("http://metadata.conduit.test/latest/meta-data/", "-i") },
      { attack: "curl the metadata address around the proxy", command: curl("http://169.254.169.254/latest/meta-data/", "--noproxy '*' -m 3") },
      { attack: "curl a private address", command: curl("http://10.0.0.7/", "-i") },
      { attack: "curl a name that resolves to a private address", command: curl("http://private.conduit.test/", "-i") },
      { attack: "connect to an abstract Unix socket of the host", command: abstractConnect(abstractName) },
    ];
    const outcome = await rig.bash(tries.map((t, index) => `echo '== ${index}'; ${t.command}`).join("; "));
    const sections = outcome.text.split("== ").slice(1);
    expect(sections, outcome.text).toHaveLength(tries.length);
    for (const [index, t] of tries.entries()) {
      const allowed = sections[index]!.includes(reached) || sections[index]!.includes(abstractReached);
      recordAttempt({ probe: "vitest/open-network", check: "S8", attack: `${t.attack} from an \`open\` workspace`, kind: "escape", allowed, detail: sections[index]!.slice(0, 160) });
      expect.soft(allowed, sections[index]).toBe(false);
    }
    expect(sections[0]).toMatch(/403 Forbidden[\s\S]*127\.0\.0\.1 is an address of this host/);
    expect(sections[1]).toMatch(/CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy after CONNECT/);
    expect(sections[2]).toMatch(/curl-exit=7/); // nothing listens in the sandbox's own loopback
    expect(sections[3]).toContain("fetch failed");
    expect(sections[4]).toMatch(/403 Forbidden[\s\S]*169\.254\.169\.254 is not a public address/);
    expect(sections[5]).toMatch(/403 Forbidden[\s\S]*metadata\.conduit\.test resolves to 169\.254\.169\.254/);
    expect(sections[6]).toMatch(/curl-exit=7/); // no route out of the namespace
    expect(sections[7]).toMatch(/403 Forbidden[\s\S]*10\.0\.0\.7 is not a public address/);
    expect(sections[8]).toMatch(/403 Forbidden[\s\S]*private\.conduit\.test resolves to 10\.0\.0\.7/);
    expect(sections[9]).toContain("abstract failed ECONNREFUSED");
    const refusals = rig.attachments.at(-1)!.egress!.refusals.map((r) => r.host);
    expect(refusals).toEqual(expect.arrayContaining(["127.0.0.1", "169.254.169.254", "metadata.conduit.test", "10.0.0.7", "private.conduit.test"]));
  });
});

describe("the same requests without a sandbox (control)", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ sandbox: "off" });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("reach the host's loopback server and abstract socket: the namespace and the proxy are what stop them", async () => {
    const outcome = await rig.bash(`${curl(`http://127.0.0.1:${port}/`)}; ${abstractConnect(abstractName)}`);
    expect(outcome.text).toContain(reached);
    expect(outcome.text).toContain(abstractReached);
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

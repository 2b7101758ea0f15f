// The credential proxy between a session token and a fake upstream that records every request it
// gets: the allow-list (nothing refused ever reaches it), metering of JSON and SSE answers, the
// budgets on the real cost ledger (SQLite), and the per-session caps.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { monthlySpend, sumCost } from "@/server/db/cost-entries";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { startCredentialProxy, type CredentialProxy, type CredentialProxyOptions } from "./credential-proxy";
import { ledgerBudget } from "./ledger-budget";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

interface FakeUpstream {
  url: string;
  seen: Seen[];
  /** Ends every answer held back by `"hold": true`. */
  releaseAll(): void;
  close(): Promise<void>;
}

const usage = { input_tokens: 1000, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

// Answers /…/v1/messages as the API does (SSE when `stream`, else JSON; 1,000 input tokens of the
// default model = $0.004 a call), count_tokens with a count; records everything, whatever the path.
async function startFakeUpstream(): Promise<FakeUpstream> {
  const seen: Seen[] = [];
  const held = new Set<() => void>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      const request = (body ? JSON.parse(body) : {}) as { stream?: boolean; hold?: boolean; model?: string };
      const model = request.model ?? "claude-opus-5-5";
      if (req.url?.includes("count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ input_tokens: 42 }));
        return;
      }
      const finish = () => {
        if (!request.stream) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ id: "msg_j", type: "message", model, content: [{ type: "text", text: "ok" }], usage: { ...usage, output_tokens: 100 } }));
          return;
        }
        res.end(
          `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 50 } })}\n\n` +
            `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
        );
      };
      if (request.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "msg_s", model, usage: { ...usage, output_tokens: 1 } } })}\n\n`);
      }
      if (request.hold) held.add(finish);
      else finish();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gateway`,
    seen,
    releaseAll: () => {
      for (const finish of held) finish();
      held.clear();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A request with its path sent exactly as given (fetch would normalise `..` and `%2e`). */
function raw(proxy: CredentialProxy, token: string, method: string, path: string, body = "{}"): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = method === "GET" || method === "HEAD" ? undefined : body;
    // content-length always: Node sends a DELETE's or OPTIONS' body unframed otherwise.
    const headers = { "x-api-key": token, "content-type": "application/json", ...(sent !== undefined ? { "content-length": String(Buffer.byteLength(sent)) } : {}) };
    const req = http.request({ host: "127.0.0.1", port: proxy.port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(sent);
  });
}

let upstream: FakeUpstream | undefined;
let proxy: CredentialProxy | undefined;
let fixtures: SessionFixtures | undefined;
afterEach(async () => {
  await proxy?.close();
  await upstream?.close();
  await fixtures?.close();
  proxy = upstream = fixtures = undefined;
});

async function setup(extra: Partial<CredentialProxyOptions> = {}) {
  upstream = await startFakeUpstream();
  const logged: { fields: Record<string, unknown>; message: string }[] = [];
  proxy = await startCredentialProxy({ upstream: upstream.url, credential: { apiKey: "sk-ant-operator-real" }, log: (fields, message) => logged.push({ fields, message }), ...extra });
  return { upstream, proxy, logged };
}

describe("the credential proxy's allow-list", () => {
  it("relays the Messages API and token counting, the upstream's path kept in front", async () => {
    const { upstream, proxy } = await setup();
    const { token } = proxy.issue("s1");
    expect((await raw(proxy, token, "POST", "/v1/messages?beta=true", '{"stream":true}')).status).toBe(200);
    expect((await raw(proxy, token, "POST", "/v1/messages/count_tokens?beta=true")).status).toBe(200);
    expect(upstream.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /gateway/v1/messages?beta=true", "POST /gateway/v1/messages/count_tokens?beta=true"]);
    expect(upstream.seen[0]!.headers["x-api-key"]).toBe("sk-ant-operator-real");
  });

  it("refuses every other method and path in the API's error shape, logs it with the session, and the upstream sees none", async () => {
    const { upstream, proxy, logged } = await setup();
    const { token } = proxy.issue("session-x");
    const attempts: [string, string, number][] = [
      ["POST", "/v1/files", 403],
      ["GET", "/v1/files", 403],
      ["POST", "/v1/messages/batches", 403],
      ["GET", "/v1/models", 403],
      ["HEAD", "/api/hello", 403],
      ["GET", "/v1/messages", 403],
      ["PUT", "/v1/messages", 403],
      ["DELETE", "/v1/messages", 403],
      ["OPTIONS", "/v1/messages", 403],
      ["PATCH", "/v1/messages/count_tokens", 403],
      ["POST", "/../x", 400],
      ["POST", "/%2e%2e/x", 400],
      ["POST", "/v1/messages/../../x", 400],
      ["POST", "//v1/messages", 400],
      ["POST", "/v1/messages/..%2f..%2fx", 400],
      ["POST", "/v1/messages%2f..%2f..%2fx", 400],
      ["POST", "/v1/%2e%2e/v1/messages", 400],
      ["POST", "/v1\\messages", 400],
      ["POST", "/v1/./messages", 400],
      ["POST", "/v1/messages/", 400],
      ["POST", "http://127.0.0.1/v1/messages", 400],
    ];
    for (const [method, path, status] of attempts) {
      const answer = await raw(proxy, token, method, path);
      expect(answer.status, `${method} ${path}`).toBe(status);
      if (method !== "HEAD") {
        expect(JSON.parse(answer.text), `${method} ${path}`).toEqual({
          type: "error",
          error: { type: status === 403 ? "permission_error" : "invalid_request_error", message: expect.stringContaining(JSON.stringify(path).slice(1, -1)) },
        });
      }
    }
    expect(upstream.seen).toEqual([]);
    expect(proxy.usageOf("session-x")).toMatchObject({ requests: 0, forbidden: attempts.length });
    expect(logged).toHaveLength(attempts.length);
    expect(logged.every((l) => l.fields.session === "session-x" && typeof l.fields.path === "string")).toBe(true);
    expect(JSON.stringify(logged)).not.toContain("sk-ant-operator-real");
  });
});

describe("metering", () => {
  it("meters a JSON and an SSE answer (not token counting, not an error answer)", async () => {
    const { proxy } = await setup();
    const { token } = proxy.issue("s");
    const json = await raw(proxy, token, "POST", "/v1/messages", '{"model":"claude-haiku-4-5"}');
    expect(JSON.parse(json.text)).toMatchObject({ usage: { output_tokens: 100 } });
    // haiku: 1000 in × $1/M + 100 out × $5/M
    expect(proxy.meterOf("s")).toMatchObject({ calls: 1, inputTokens: 1000, outputTokens: 100, usd: 0.0015 });
    const stream = await raw(proxy, token, "POST", "/v1/messages?beta=true", '{"stream":true}');
    expect(stream.text).toContain("message_stop");
    // default model: 1000 in × $4/M + 50 out × $20/M
    expect(proxy.meterOf("s")).toMatchObject({ calls: 2, inputTokens: 2000, outputTokens: 150, usd: 0.0065 });
    await raw(proxy, token, "POST", "/v1/messages/count_tokens");
    expect(proxy.meterOf("s").calls).toBe(2);
    expect(proxy.meterOf("s").unreportedUsd).toBe(0.0065);
  });

  it("meters without holding the stream back: the first event arrives while the upstream holds the rest", async () => {
    const { upstream, proxy } = await setup();
    const { token } = proxy.issue("s");
    const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "x-api-key": token }, body: '{"stream":true,"hold":true}' });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("message_start");
    upstream.releaseAll();
    while (!(await reader.read()).done);
    await new Promise((resolve) => setImmediate(resolve));
    expect(proxy.meterOf("s")).toMatchObject({ calls: 1, outputTokens: 50 });
  });
});

describe("budgets on the cost ledger", () => {
  async function budgetSetup(limitUsd: number) {
    fixtures = await createSessionFixtures();
    const session = await fixtures.db.session.create({ data: { workspaceId: fixtures.workspace.id, createdById: fixtures.owner.id } });
    await fixtures.db.user.update({ where: { id: fixtures.owner.id }, data: { monthlyBudgetUsd: limitUsd } });
    const parts = await setup({ budget: ledgerBudget(fixtures.db) });
    return { ...parts, db: fixtures.db, sessionId: session.id, owner: fixtures.owner, workspaceId: fixtures.workspace.id };
  }

  it("$0.01, then 20 direct calls: 402 in the API's shape once it is spent; the upstream saw only the calls before; the spend reaches the ledger once", async () => {
    const { upstream, proxy, db, sessionId, owner, logged } = await budgetSetup(0.01);
    const grant = proxy.issue(sessionId);
    const statuses: number[] = [];
    let refusal = "";
    for (let i = 0; i < 20; i++) {
      const answer = await raw(proxy, grant.token, "POST", "/v1/messages?beta=true", '{"stream":true}');
      statuses.push(answer.status);
      if (answer.status === 402) refusal = answer.text;
    }
    // $0.005 a call: two calls reach $0.01, the third is refused.
    expect(statuses).toEqual([200, 200, ...Array<number>(18).fill(402)]);
    expect(upstream.seen).toHaveLength(2);
    expect(JSON.parse(refusal)).toEqual({ type: "error", error: { type: "billing_error", message: expect.stringContaining("monthly budget of $0.0100 is used up") } });
    expect(proxy.usageOf(sessionId)).toMatchObject({ requests: 2, overBudget: 18 });
    expect(logged.filter((l) => l.fields.status === 402 && l.fields.session === sessionId)).toHaveLength(18);
    // Token counting is free: still relayed.
    expect((await raw(proxy, grant.token, "POST", "/v1/messages/count_tokens")).status).toBe(200);

    // The spawn ends: its unreported spend becomes one ledger row, charged to the session's user.
    grant.revoke();
    await expect.poll(async () => (await monthlySpend(db, { userId: owner.id }, new Date())).usd).toBe(0.01);
    const totals = await sumCost(db, { sessionId });
    expect(totals).toMatchObject({ usd: 0.01, inputTokens: 2000, outputTokens: 100, results: 0 });
    // A new spawn meets the budget through the ledger alone.
    const next = proxy.issue(sessionId);
    expect((await raw(proxy, next.token, "POST", "/v1/messages", '{"stream":true}')).status).toBe(402);
    expect(upstream.seen.filter((s) => s.url.startsWith("/gateway/v1/messages?"))).toHaveLength(2);
  });

  it("does not count twice what a CLI result recorded: only the rest is stored", async () => {
    const { proxy: p, db, sessionId } = await budgetSetup(100);
    const grant = p.issue(sessionId);
    for (let i = 0; i < 3; i++) expect((await raw(p, grant.token, "POST", "/v1/messages", '{"stream":true}')).status).toBe(200);
    // The CLI's result counted two of the three calls (the third was a direct call).
    p.reportResult(sessionId, { usd: 0.01, inputTokens: 2000, outputTokens: 100 });
    expect(p.meterOf(sessionId).unreportedUsd).toBe(0.005);
    grant.revoke();
    await expect.poll(async () => (await sumCost(db, { sessionId })).usd).toBe(0.005);
    expect(await sumCost(db, { sessionId })).toMatchObject({ inputTokens: 1000, outputTokens: 50, results: 0 });
    expect(p.meterOf(sessionId)).toMatchObject({ calls: 3, usd: 0.015, unreportedUsd: 0 });

    // A spawn whose result recorded everything stores nothing.
    const second = p.issue(sessionId);
    expect((await raw(p, second.token, "POST", "/v1/messages", '{"stream":true}')).status).toBe(200);
    p.reportResult(sessionId, { usd: 0.005 });
    second.revoke();
    await p.close();
    proxy = undefined;
    expect((await sumCost(db, { sessionId })).usd).toBe(0.005);
  });

  it("settles an open spawn's unreported spend when the proxy closes", async () => {
    const { proxy: p, db, sessionId } = await budgetSetup(100);
    const grant = p.issue(sessionId);
    expect((await raw(p, grant.token, "POST", "/v1/messages", "{}")).status).toBe(200);
    await p.close();
    proxy = undefined;
    expect((await sumCost(db, { sessionId })).usd).toBe(0.006);
  });

  it("refuses a billable call of a session that no longer exists", async () => {
    const { upstream, proxy } = await budgetSetup(100);
    const { token } = proxy.issue("no-such-session");
    const answer = await raw(proxy, token, "POST", "/v1/messages", "{}");
    expect(answer.status).toBe(402);
    expect(upstream.seen).toEqual([]);
  });
});

describe("fair limits", () => {
  it("caps a session's model calls in flight with 429 + retry-after; other sessions and token counting go on", async () => {
    const { upstream, proxy } = await setup({ limits: { maxConcurrent: 4, maxPerMinute: 0 } });
    const a = proxy.issue("a");
    const b = proxy.issue("b");
    const held = Array.from({ length: 4 }, () => raw(proxy, a.token, "POST", "/v1/messages", '{"stream":true,"hold":true}'));
    await expect.poll(() => upstream.seen.length).toBe(4);
    const fifth = await raw(proxy, a.token, "POST", "/v1/messages", '{"stream":true}');
    expect(fifth.status).toBe(429);
    expect(fifth.headers["retry-after"]).toBe("1");
    expect(JSON.parse(fifth.text)).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect((await raw(proxy, b.token, "POST", "/v1/messages", '{"stream":true}')).status).toBe(200);
    expect((await raw(proxy, a.token, "POST", "/v1/messages/count_tokens")).status).toBe(200);
    expect(upstream.seen).toHaveLength(6);
    upstream.releaseAll();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await raw(proxy, a.token, "POST", "/v1/messages", '{"stream":true}')).status).toBe(200);
    expect(proxy.usageOf("a")).toMatchObject({ requests: 6, limited: 1 });
  });

  it("caps a session's model calls per minute", async () => {
    let now = 1_000_000;
    const { upstream, proxy } = await setup({ limits: { maxConcurrent: 0, maxPerMinute: 3 }, now: () => now });
    const { token } = proxy.issue("s");
    for (let i = 0; i < 3; i++) expect((await raw(proxy, token, "POST", "/v1/messages", "{}")).status).toBe(200);
    const refused = await raw(proxy, token, "POST", "/v1/messages", "{}");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBe(60);
    expect(upstream.seen).toHaveLength(3);
    now += 60_001;
    expect((await raw(proxy, token, "POST", "/v1/messages", "{}")).status).toBe(200);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../test/until";
import type { EdgeLogEntry } from "./edge-log";
import { SidecarPool } from "./sidecar-pool";

const A = "http://10.0.0.1:3102";
const B = "http://10.0.0.2:3102";

/** A fetch whose /healthz answers come from `alive` (a dead origin refuses like a closed port). */
function healthFetch(alive: Set<string>, asked: string[] = []) {
  return (async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    asked.push(url.href);
    if (!alive.has(url.origin)) throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    return new Response(JSON.stringify({ ok: true }), { status: 200 });
  }) as typeof fetch;
}

const pools: SidecarPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function makePool(alive: Set<string>, origins = [A, B], asked: string[] = []) {
  const logs: EdgeLogEntry[] = [];
  // a long interval: the tests drive the rounds with checkNow()
  const pool = new SidecarPool({ origins, fetch: healthFetch(alive, asked), log: (e) => logs.push(e), healthCheck: { intervalMs: 60_000, fallAfter: 2, riseAfter: 2 } });
  pools.push(pool);
  return { pool, logs };
}

describe("SidecarPool", () => {
  it("asks each sidecar's /healthz, takes a dead one out after two failures and logs it once", async () => {
    const alive = new Set([A, B]);
    const asked: string[] = [];
    const { pool, logs } = makePool(alive, [A, B], asked);
    const changes: [string, boolean][] = [];
    pool.onDidChange((origin, healthy) => changes.push([origin, healthy]));
    const signal = pool.signalOf(A);
    await pool.checkNow();
    expect(asked).toEqual(expect.arrayContaining([`${A}/healthz`, `${B}/healthz`]));
    alive.delete(A);
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([true, true]);
    await pool.checkNow();
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([false, true]);
    expect(changes).toEqual([[A, false]]);
    expect(logs.filter((l) => l.event === "upstream_out")).toEqual([
      expect.objectContaining({ level: "warn", upstream: A, reason: expect.stringContaining("ECONNREFUSED") }),
    ]);
    // requests still waiting on it are ended
    expect(signal.aborted).toBe(true);
    expect(pool.signalOf(A).aborted).toBe(false);
    // new browsers go to the one left
    for (let i = 0; i < 4; i++) expect(pool.choose(undefined).origin).toBe(B);
  });

  it("takes a sidecar back after two good checks", async () => {
    const alive = new Set([B]);
    const { pool, logs } = makePool(alive);
    await pool.checkNow();
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(false);
    alive.add(A);
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(false);
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(true);
    expect(logs.map((l) => l.event)).toEqual(["upstream_out", "upstream_in"]);
    expect(new Set([pool.choose(undefined).origin, pool.choose(undefined).origin])).toEqual(new Set([A, B]));
  });

  it("counts a check that does not answer in time as failed", async () => {
    const hanging = ((_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))))) as typeof fetch;
    const logs: EdgeLogEntry[] = [];
    const pool = new SidecarPool({ origins: [A, B], fetch: hanging, log: (e) => logs.push(e), healthCheck: { intervalMs: 60_000, timeoutMs: 20, fallAfter: 1 } });
    pools.push(pool);
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([false, false]);
    expect(logs[0]!.reason).toBe("no answer within 20 ms");
  });

  it("runs its checks on a timer with several sidecars, and leaves no timer after close()", async () => {
    const asked: string[] = [];
    const pool = new SidecarPool({ origins: [A, B], fetch: healthFetch(new Set([A, B]), asked), healthCheck: { intervalMs: 10 } });
    // two rounds of two checks, by the timer alone
    await until(() => asked.length >= 4, 10_000, "two rounds of checks");
    await pool.close();
    const count = asked.length;
    await new Promise((r) => setTimeout(r, 40));
    expect(asked.length).toBe(count);
  });

  it("checks nothing with a single sidecar (npm start's default): routing cannot change", async () => {
    const asked: string[] = [];
    const pool = new SidecarPool({ origins: [A], fetch: healthFetch(new Set(), asked), healthCheck: { intervalMs: 5 } });
    pools.push(pool);
    await new Promise((r) => setTimeout(r, 30));
    expect(asked).toEqual([]);
    expect(pool.choose(undefined)).toEqual({ origin: A, id: expect.any(String), setCookie: false });
  });
});

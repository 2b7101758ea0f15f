import { describe, expect, it } from "vitest";
import {
  chooseSidecar,
  initialHealth,
  readStickyId,
  recordCheck,
  stickyCookieFor,
  STICKY_COOKIE,
  upstreamIdOf,
  type HealthState,
  type RoutedUpstream,
} from "./sidecar-routing";

const A: RoutedUpstream = { origin: "http://10.0.0.1:3102", id: upstreamIdOf("http://10.0.0.1:3102"), healthy: true };
const B: RoutedUpstream = { origin: "http://10.0.0.2:3102", id: upstreamIdOf("http://10.0.0.2:3102"), healthy: true };
const C: RoutedUpstream = { origin: "http://10.0.0.3:3102", id: upstreamIdOf("http://10.0.0.3:3102"), healthy: true };
const down = (u: RoutedUpstream): RoutedUpstream => ({ ...u, healthy: false });

describe("upstreamIdOf", () => {
  it("is 8 hex digits, stable, and different per origin", () => {
    expect(A.id).toMatch(/^[0-9a-f]{8}$/);
    expect(upstreamIdOf("http://10.0.0.1:3102")).toBe(A.id);
    expect(new Set([A.id, B.id, C.id]).size).toBe(3);
  });
});

describe("the sticky cookie", () => {
  it("is read among other cookies, and only with the right shape", () => {
    expect(readStickyId(`next-auth.session-token=x; ${STICKY_COOKIE}=${A.id}; other=1`)).toBe(A.id);
    expect(readStickyId(`${STICKY_COOKIE}=../../etc`)).toBeUndefined();
    expect(readStickyId(`x${STICKY_COOKIE}=${A.id}`)).toBeUndefined();
    expect(readStickyId(null)).toBeUndefined();
    expect(readStickyId("")).toBeUndefined();
  });

  it("is HttpOnly on Socket.IO's path, Secure under https", () => {
    expect(stickyCookieFor(A.id, false)).toBe(`${STICKY_COOKIE}=${A.id}; Path=/socket.io/; HttpOnly; SameSite=Lax`);
    expect(stickyCookieFor(A.id, true)).toMatch(/; Secure$/);
  });
});

describe("chooseSidecar", () => {
  it("keeps a browser on its sticky upstream while it is healthy, without setting the cookie again", () => {
    for (let turn = 0; turn < 4; turn++) {
      expect(chooseSidecar([A, B, C], B.id, turn)).toEqual({ origin: B.origin, id: B.id, setCookie: false, usedTurn: false });
    }
  });

  it("spreads browsers without a cookie over the healthy upstreams in turn, and pins each with the cookie", () => {
    const picks = [0, 1, 2, 3].map((turn) => chooseSidecar([A, B, C], undefined, turn));
    expect(picks.map((p) => p.origin)).toEqual([A.origin, B.origin, C.origin, A.origin]);
    expect(picks.every((p) => p.setCookie && p.usedTurn)).toBe(true);
  });

  it("moves a browser off an upstream that is out, and says so with a new cookie", () => {
    const choice = chooseSidecar([down(A), B, C], A.id, 0);
    expect(choice.origin).toBe(B.origin);
    expect(choice.setCookie).toBe(true);
    expect(chooseSidecar([down(A), B, down(C)], undefined, 7).origin).toBe(B.origin);
  });

  it("treats an unknown cookie (another deployment's list) like none", () => {
    expect(chooseSidecar([A, B], "deadbeef", 1)).toMatchObject({ origin: B.origin, setCookie: true });
  });

  it("still tries every upstream when none is healthy, keeping the sticky one (a 502 then tells the truth)", () => {
    expect(chooseSidecar([down(A), down(B)], B.id, 0)).toMatchObject({ origin: B.origin, setCookie: false });
    expect(chooseSidecar([down(A), down(B)], undefined, 1)).toMatchObject({ origin: B.origin });
  });

  it("never sets a cookie with a single upstream, healthy or not", () => {
    expect(chooseSidecar([A], undefined, 0)).toMatchObject({ origin: A.origin, setCookie: false });
    expect(chooseSidecar([down(A)], undefined, 3)).toMatchObject({ origin: A.origin, setCookie: false });
  });

  it("refuses an empty list", () => {
    expect(() => chooseSidecar([], undefined, 0)).toThrow(/no upstreams/);
  });
});

describe("recordCheck", () => {
  const thresholds = { fallAfter: 3, riseAfter: 2 };
  function run(results: boolean[]): { healthy: boolean[]; changes: number[] } {
    let state: HealthState = initialHealth;
    const healthy: boolean[] = [];
    const changes: number[] = [];
    results.forEach((ok, i) => {
      const next = recordCheck(state, ok, thresholds);
      state = next.state;
      healthy.push(state.healthy);
      if (next.changed) changes.push(i);
    });
    return { healthy, changes };
  }

  it("takes an upstream out after N failures in a row, not before", () => {
    expect(run([false, false, false]).healthy).toEqual([true, true, false]);
    expect(run([false, false, true, false, false]).healthy).toEqual([true, true, true, true, true]);
  });

  it("takes it back after M good checks in a row; a failure in between starts the count again", () => {
    const { healthy, changes } = run([false, false, false, true, false, true, true, true]);
    expect(healthy).toEqual([true, true, false, false, false, false, true, true]);
    // one change out, one back in: logged once per change
    expect(changes).toEqual([2, 6]);
  });
});

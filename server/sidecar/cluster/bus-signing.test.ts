import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createBusSigner } from "./bus-signing";
import { clusterKeyLabels, deriveClusterKeys } from "./cluster-keys";

const key = randomBytes(32);

/** Two nodes on one key, on a clock the test moves. */
function pair(options: { key?: Uint8Array; maxAgeMs?: number; rememberMax?: number } = {}) {
  let now = 1_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const a = createBusSigner({ key: options.key ?? key, selfId: "a", now: clock.now, ...options });
  const b = createBusSigner({ key: options.key ?? key, selfId: "b", now: clock.now, ...options });
  return { a, b, clock };
}

describe("bus signing", () => {
  it("hands the body and the signed sender to the addressee", () => {
    const { a, b } = pair();
    const text = a.sign("b", "request", { method: "session.setMode", payload: { mode: "plan" } });
    expect(text).toMatch(/^cb1\.[A-Za-z0-9_-]{43}\.\{/);
    expect(b.verify(text, "request")).toMatchObject({ ok: true, from: "a", body: { method: "session.setMode", payload: { mode: "plan" } } });
  });

  it("refuses an unsigned message (the bus's old plain JSON)", () => {
    const { b } = pair();
    const plain = JSON.stringify({ id: "x", from: "a", method: "session.setMode", payload: {}, deadline: Date.now() + 1000 });
    expect(b.verify(plain, "request")).toEqual({ ok: false, reason: "unsigned" });
    expect(b.verify("", "request")).toEqual({ ok: false, reason: "unsigned" });
  });

  it("refuses a tampered body, a forged or truncated MAC, and a message signed with another key", () => {
    const { a, b } = pair();
    const text = a.sign("b", "request", { method: "session.setMode", payload: { mode: "plan" } });
    expect(b.verify(text.replace('"plan"', '"bypassPermissions"'), "request")).toEqual({ ok: false, reason: "bad signature" });
    const json = text.slice(48);
    const wrongMac = createHmac("sha256", randomBytes(32)).update("cb1.").update(json).digest("base64url");
    expect(b.verify(`cb1.${wrongMac}.${json}`, "request")).toEqual({ ok: false, reason: "bad signature" });
    expect(b.verify(`cb1.${"A".repeat(43)}.${json}`, "request")).toEqual({ ok: false, reason: "bad signature" });
    expect(b.verify(text.slice(0, 40), "request")).toEqual({ ok: false, reason: "unsigned" });
    const other = pair({ key: randomBytes(32) });
    expect(b.verify(other.a.sign("b", "request", {}), "request")).toEqual({ ok: false, reason: "bad signature" });
  });

  it("refuses a message for another node, or of the other kind", () => {
    const { a, b } = pair();
    const c = createBusSigner({ key, selfId: "c" });
    expect(c.verify(a.sign("b", "request", {}), "request")).toMatchObject({ ok: false, reason: "addressed to another node", from: "a" });
    expect(b.verify(a.sign("b", "reply", { id: "1", ok: true, data: null }), "request")).toMatchObject({ ok: false, reason: "wrong kind" });
  });

  it("refuses a stale message and one from the future", () => {
    const { a, b, clock } = pair({ maxAgeMs: 30_000 });
    const text = a.sign("b", "request", {});
    clock.advance(30_001);
    expect(b.verify(text, "request")).toMatchObject({ ok: false, reason: "stale" });
    const ahead = a.sign("b", "request", {});
    clock.advance(-60_002);
    expect(b.verify(ahead, "request")).toMatchObject({ ok: false, reason: "from the future" });
  });

  it("refuses a replayed message, until it is stale anyway", () => {
    const { a, b, clock } = pair({ maxAgeMs: 30_000 });
    const text = a.sign("b", "request", { method: "approval.decide" });
    expect(b.verify(text, "request").ok).toBe(true);
    expect(b.verify(text, "request")).toMatchObject({ ok: false, reason: "replayed" });
    clock.advance(29_000);
    expect(b.verify(text, "request")).toMatchObject({ ok: false, reason: "replayed" });
    // Newer messages keep coming; the old id is forgotten once its message is stale.
    clock.advance(2_000);
    expect(b.verify(a.sign("b", "request", {}), "request").ok).toBe(true);
    expect(b.verify(text, "request")).toMatchObject({ ok: false, reason: "stale" });
  });

  it("gives each message its own id", () => {
    const { a, b } = pair();
    const ids = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const verified = b.verify(a.sign("b", "request", { i }), "request");
      if (verified.ok) ids.add(verified.id);
    }
    expect(ids.size).toBe(100);
  });
});

describe("cluster keys", () => {
  it("derives two distinct keys from the shared secret, the same on every node, and neither is the secret", async () => {
    const secret = "s".repeat(40);
    const [one, two] = await Promise.all([deriveClusterKeys(secret), deriveClusterKeys(secret)]);
    expect(one.busMac.equals(two.busMac)).toBe(true);
    expect(one.busMac).toHaveLength(32);
    expect(one.adapterSeal).toHaveLength(32);
    expect(one.busMac.equals(one.adapterSeal)).toBe(false);
    expect(one.busMac.toString("utf8")).not.toContain(secret);
    expect((await deriveClusterKeys("t".repeat(40))).busMac.equals(one.busMac)).toBe(false);
    expect(new Set(Object.values(clusterKeyLabels)).size).toBe(2);
    await expect(deriveClusterKeys("short")).rejects.toThrow(/NEXTAUTH_SECRET/);
  });
});

import { describe, expect, it } from "vitest";
import {
  emptySessionLog,
  hasEarlier,
  hasGap,
  lastSeqOf,
  reduceSessionLog,
  type SessionLog,
  type SessionLogAction,
} from "./session-log";
import { ev } from "./test-support";
import type { WireEvent } from "@/server/shared/wire/session";

const run = (actions: SessionLogAction[], start: SessionLog = emptySessionLog) =>
  actions.reduce(reduceSessionLog, start);
const seqs = (log: SessionLog) => log.events.map((e) => e.seq);

describe("reduceSessionLog", () => {
  it("keeps each seq once when the snapshot and live facts overlap", () => {
    const log = run([
      { type: "event", event: ev(3) },
      { type: "snapshot", events: [ev(1), ev(2), ev(3)], reset: false },
      { type: "event", event: ev(3) },
      { type: "event", event: ev(4) },
      { type: "snapshot", events: [ev(4), ev(5)], reset: false },
    ]);
    expect(seqs(log)).toEqual([1, 2, 3, 4, 5]);
    expect(log.contiguousSeq).toBe(5);
    expect(hasGap(log)).toBe(false);
  });

  it("reports a gap until a catch-up fills it", () => {
    const gapped = run([
      { type: "snapshot", events: [ev(1), ev(2)], reset: false },
      { type: "event", event: ev(5) },
    ]);
    expect(gapped.contiguousSeq).toBe(2);
    expect(lastSeqOf(gapped)).toBe(5);
    expect(hasGap(gapped)).toBe(true);
    const filled = reduceSessionLog(gapped, { type: "snapshot", events: [ev(3), ev(4), ev(5)], reset: false });
    expect(seqs(filled)).toEqual([1, 2, 3, 4, 5]);
    expect(hasGap(filled)).toBe(false);
  });

  it("replaces everything on reset and counts from the snapshot's first seq", () => {
    const before = run([{ type: "snapshot", events: [ev(1), ev(2), ev(3), ev(4)], reset: false }]);
    const after = reduceSessionLog(before, { type: "snapshot", events: [ev(10), ev(11)], reset: true });
    expect(seqs(after)).toEqual([10, 11]);
    expect(after.contiguousSeq).toBe(11);
    expect(after.generation).toBe(before.generation + 1);
    expect(hasGap(after)).toBe(false);
  });

  it("returns the same log for a duplicate fact (no re-render)", () => {
    const log = run([{ type: "snapshot", events: [ev(1), ev(2)], reset: false }]);
    expect(reduceSessionLog(log, { type: "event", event: ev(1) })).toBe(log);
  });

  it("replaces a trimmed event with its whole payload", () => {
    const log = run([{ type: "snapshot", events: [{ ...ev(1), trimmed: true, payload: "…" }], reset: false }]);
    const whole = reduceSessionLog(log, { type: "replace", event: ev(1, "cli", { type: "user" }) });
    expect(whole.events[0]!.payload).toEqual({ type: "user" });
  });

  it("starts at the tail: the first subscribe's afterSeq is the base, no gap, earlier pages join below it", () => {
    const tail = run([{ type: "snapshot", events: [ev(801), ev(802), ev(803)], reset: false, from: 800 }]);
    expect(tail).toMatchObject({ baseSeq: 800, contiguousSeq: 803 });
    expect(hasGap(tail)).toBe(false);
    expect(hasEarlier(tail)).toBe(true);
    const live = reduceSessionLog(tail, { type: "event", event: ev(804) });
    const page = Array.from({ length: 300 }, (_, i) => ev(501 + i));
    const more = reduceSessionLog(live, { type: "earlier", events: page, fromSeq: 500 });
    expect(more).toMatchObject({ baseSeq: 500, contiguousSeq: 804 });
    expect(seqs(more)).toEqual(Array.from({ length: 304 }, (_, i) => 501 + i));
    const start = reduceSessionLog(more, { type: "earlier", events: Array.from({ length: 500 }, (_, i) => ev(1 + i)), fromSeq: 0 });
    expect(hasEarlier(start)).toBe(false);
    expect(seqs(start)).toEqual(Array.from({ length: 804 }, (_, i) => 1 + i));
    expect(hasGap(start)).toBe(false);
  });

  it("starts at the tail when live facts came before the first snapshot (a subscribe on a sidecar that does not run the session)", () => {
    const log = run([
      { type: "event", event: ev(804) },
      { type: "event", event: ev(805) },
      { type: "snapshot", events: [ev(801), ev(802), ev(803), ev(804)], reset: false, from: 800 },
    ]);
    expect(log).toMatchObject({ baseSeq: 800, contiguousSeq: 805 });
    expect(seqs(log)).toEqual([801, 802, 803, 804, 805]);
    expect(hasGap(log)).toBe(false);
    // A log that already holds its start keeps its base.
    const held = run([{ type: "snapshot", events: [ev(1), ev(2)], reset: false }, { type: "snapshot", events: [ev(3)], reset: false, from: 2 }]);
    expect(held).toMatchObject({ baseSeq: 0, contiguousSeq: 3 });
  });

  it("drops an earlier page that does not end at the base (a stale or repeated answer)", () => {
    const tail = run([{ type: "snapshot", events: [ev(801), ev(802)], reset: false, from: 800 }]);
    expect(reduceSessionLog(tail, { type: "earlier", events: [ev(799), ev(800), ev(801)], fromSeq: 798 })).toBe(tail);
    expect(reduceSessionLog(tail, { type: "earlier", events: [], fromSeq: 800 })).toBe(tail);
    // a log that already holds the start ignores `from`
    const whole = run([{ type: "snapshot", events: [ev(1)], reset: false }, { type: "snapshot", events: [ev(2)], reset: false, from: 1 }]);
    expect(whole.baseSeq).toBe(0);
  });
});

describe("reduceSessionLog on random arrivals", () => {
  /** What `contiguousSeq` must be: the last seq before the first gap after the base. */
  const contiguous = (events: readonly WireEvent[], base: number) => {
    let expected = base + 1;
    for (const e of events) if (e.seq === expected) expected++;
    return expected - 1;
  };

  it("keeps each seq once, in order, and the contiguous seq right, through in-order, late, repeated and missing facts", () => {
    let seed = 12345;
    const r = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      let log = emptySessionLog;
      if (r() < 0.3) log = reduceSessionLog(log, { type: "snapshot", events: [], reset: false, from: 5 });
      let next = log.baseSeq + 1;
      const held: WireEvent[] = [];
      for (let step = 0; step < 60; step++) {
        const roll = r();
        // mostly the next seq; sometimes one skipped (a gap), a repeat, or a late one
        const seq = roll < 0.7 ? next++ : roll < 0.8 ? (next += 2) - 1 : Math.max(log.baseSeq + 1, next - 1 - Math.floor(r() * 5));
        const event = held.find((e) => e.seq === seq) ?? ev(seq);
        if (!held.includes(event)) held.push(event);
        const before = log;
        log = reduceSessionLog(log, { type: "event", event });
        const seqs = log.events.map((e) => e.seq);
        expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
        expect(log.contiguousSeq).toBe(contiguous(log.events, log.baseSeq));
        if (before.events.some((e) => e.seq === seq)) expect(log).toBe(before);
      }
    }
  });
});

describe("a batch of live facts", () => {
  const one = (log: SessionLog, events: WireEvent[]) => events.reduce((held, event) => reduceSessionLog(held, { type: "event", event }), log);
  const batch = (log: SessionLog, events: WireEvent[]) => reduceSessionLog(log, { type: "events", events });
  const start = run([{ type: "snapshot", events: [ev(1), ev(2), ev(3)], reset: false }]);

  it("appends a batch that follows the log in one step", () => {
    const log = batch(start, [ev(4), ev(5), ev(6)]);
    expect(seqs(log)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log.contiguousSeq).toBe(6);
    expect(log).toEqual(one(start, [ev(4), ev(5), ev(6)]));
  });

  it("is the log the same facts give one by one, whatever their order, gaps and repeats", () => {
    const cases: number[][] = [
      [4, 6, 5],
      [3, 4, 4, 5],
      [6, 7],
      [2, 9, 4],
      [],
    ];
    for (const seqList of cases) {
      const events = seqList.map((s) => ev(s));
      expect(batch(start, events), `batch ${seqList.join(",")}`).toEqual(one(start, events));
    }
    // into an empty log and into a log that starts at a later base
    const tail = run([{ type: "snapshot", events: [ev(11), ev(12)], reset: false, from: 10 }]);
    for (const seqList of [[13, 14], [14, 13], [1, 2], [12, 13]]) {
      const events = seqList.map((s) => ev(s));
      expect(batch(emptySessionLog, events)).toEqual(one(emptySessionLog, events));
      expect(batch(tail, events)).toEqual(one(tail, events));
    }
  });

  it("leaves the log as it was for an empty batch", () => {
    expect(batch(start, [])).toBe(start);
  });
});

import pino from "pino";
import { describe, expect, it } from "vitest";
import { SeqConflict, type NewSessionEvent, type SessionEventRecord } from "@/server/db/session-events";
import { SessionEventWriter, type EventLogStore, type StoredEvent } from "./session-event-writer";

/**
 * The store over an array, as the database does it: seqs numbered after the stored rows inside
 * the insert, the log's unique indexes, all-or-nothing inserts. `race` runs before a statement
 * writes (after it "read" the last seqs), to let another writer in between.
 */
function fakeDb(
  initial: SessionEventRecord[] = [],
  fail: (row: NewSessionEvent) => boolean = () => false,
  race: () => void = () => undefined,
) {
  const rows = [...initial];
  const statements: number[] = [];
  const last = (sessionId: string) =>
    Math.max(0, ...rows.filter((r) => r.sessionId === sessionId).map((r) => r.seq));
  const db: EventLogStore = {
    async insert(data) {
      const base = new Map<string, number>();
      for (const row of data) if (!base.has(row.sessionId)) base.set(row.sessionId, last(row.sessionId));
      await new Promise((r) => setTimeout(r, 1));
      race();
      const numbered: SessionEventRecord[] = data.map((row) => {
        const seq = base.get(row.sessionId)! + 1;
        base.set(row.sessionId, seq);
        return { ...row, seq };
      });
      for (const row of numbered) {
        if (fail(row)) throw new Error("disk full");
        if (rows.some((r) => r.sessionId === row.sessionId && r.seq === row.seq)) throw new SeqConflict(new Error("seq"));
        if (rows.some((r) => r.sessionId === row.sessionId && row.commandId !== null && r.commandId === row.commandId)) {
          throw new Error("Unique constraint failed on commandId");
        }
      }
      rows.push(...numbered);
      statements.push(data.length);
      return numbered;
    },
    async lastSeq(sessionId) {
      return last(sessionId);
    },
  };
  return { db, rows, statements };
}

const draft = (sessionId: string, n: number, extra: { commandId?: string } = {}) => ({
  sessionId,
  kind: "cli",
  payload: JSON.stringify({ n }),
  value: { n },
  ...extra,
});

const log = pino({ level: "silent" });

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
}

describe("SessionEventWriter", () => {
  it("numbers each session's events from its last stored seq, gap-free, and batches them", async () => {
    const existing: SessionEventRecord = {
      sessionId: "a",
      seq: 41,
      kind: "cli",
      payload: "{}",
      commandId: null,
      userId: null,
      createdAt: new Date(),
    };
    const { db, rows, statements } = fakeDb([existing]);
    const writer = new SessionEventWriter(db, log);
    const heard: StoredEvent[] = [];
    writer.onDidStore((s) => heard.push(s));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => writer.append(draft(i % 2 ? "a" : "b", i))));
    expect(results.filter((r) => r.record.sessionId === "a").map((r) => r.record.seq)).toEqual(
      Array.from({ length: 15 }, (_, i) => 42 + i),
    );
    expect(results.filter((r) => r.record.sessionId === "b").map((r) => r.record.seq)).toEqual(
      Array.from({ length: 15 }, (_, i) => 1 + i),
    );
    expect(heard.map((h) => h.record)).toEqual(results.map((r) => r.record));
    expect(statements).toEqual([30]);
    expect(rows).toHaveLength(31);
    expect(await writer.lastSeq("a")).toBe(56);
    await writer.close();
  });

  it("writes one by one after a failed batch: the bad event is refused, the others keep gap-free seqs", async () => {
    const { db, rows } = fakeDb([], (row) => row.payload === JSON.stringify({ n: 2 }));
    const writer = new SessionEventWriter(db, log);
    const outcomes = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => writer.append(draft("s", n))));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(rows.map((r) => [r.seq, JSON.parse(r.payload).n])).toEqual([
      [1, 0],
      [2, 1],
      [3, 3],
      [4, 4],
    ]);
    await writer.close();
  });

  it("writes a batch again when another writer took its seqs, after that writer's events", async () => {
    let intrusions = 2;
    const other = (n: number): SessionEventRecord => ({
      sessionId: "s",
      seq: 0,
      kind: "cli",
      payload: JSON.stringify({ other: n }),
      commandId: null,
      userId: null,
      createdAt: new Date(),
    });
    const { db, rows } = fakeDb([], () => false, () => {
      // Another writer commits the next seq between this writer's read and its write, twice.
      if (intrusions-- > 0) {
        const seq = Math.max(0, ...rows.map((r) => r.seq)) + 1;
        rows.push({ ...other(seq), seq });
      }
    });
    const writer = new SessionEventWriter(db, log);
    const stored = await Promise.all([0, 1, 2].map((n) => writer.append(draft("s", n))));
    expect(stored.map((s) => s.record.seq)).toEqual([3, 4, 5]);
    expect(rows.map((r) => [r.seq, r.payload])).toEqual([
      [1, JSON.stringify({ other: 1 })],
      [2, JSON.stringify({ other: 2 })],
      [3, JSON.stringify({ n: 0 })],
      [4, JSON.stringify({ n: 1 })],
      [5, JSON.stringify({ n: 2 })],
    ]);
    await writer.close();
  });

  it("writes one flush at a time: what arrives while a statement is out goes in the next, in order", async () => {
    const { db: inner, rows } = fakeDb();
    const started: string[][] = [];
    const gates: (() => void)[] = [];
    const db: EventLogStore = {
      lastSeq: inner.lastSeq,
      async insert(data) {
        started.push(data.map((r) => `${r.sessionId}${JSON.parse(r.payload).n}`));
        await new Promise<void>((r) => gates.push(r));
        return inner.insert(data);
      },
    };
    const writer = new SessionEventWriter(db, log);
    const heard: string[] = [];
    writer.onDidStore((s) => heard.push(`${s.record.sessionId}${s.record.seq}`));
    const a1 = writer.append(draft("a", 1));
    await until(() => started.length === 1);
    const a2 = writer.append(draft("a", 2));
    const b1 = writer.append(draft("b", 1));
    const c1 = writer.append(draft("c", 1));
    await new Promise((r) => setTimeout(r, 20));
    // nothing else starts while the first statement is out
    expect(started).toEqual([["a1"]]);
    let settled = false;
    const all = Promise.all([a1, a2, b1, c1]).finally(() => (settled = true));
    while (!settled) {
      gates.shift()?.();
      await new Promise((r) => setTimeout(r, 5));
    }
    await all;
    // the three that waited went together, in the order they came
    expect(started).toEqual([["a1"], ["a2", "b1", "c1"]]);
    expect(rows.filter((r) => r.sessionId === "a").map((r) => [r.seq, JSON.parse(r.payload).n])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(heard).toEqual(["a1", "a2", "b1", "c1"]);
    await writer.close();
  });

  it("writes what is queued on close and refuses appends after", async () => {
    const { db, rows } = fakeDb();
    const writer = new SessionEventWriter(db, log);
    const pending = writer.append(draft("s", 0));
    await writer.close();
    await expect(pending).resolves.toMatchObject({ record: { seq: 1 } });
    expect(rows).toHaveLength(1);
    await expect(writer.append(draft("s", 1))).rejects.toThrow(/closed/);
  });
});

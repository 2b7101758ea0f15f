import pino from "pino";
import { describe, expect, it } from "vitest";
import type { SessionEventRecord } from "@/server/db/session-events";
import { SessionEventWriter, type EventLogStore, type StoredEvent } from "./session-event-writer";

/** The store over an array, with the log's unique indexes and all-or-nothing inserts. */
function fakeDb(initial: SessionEventRecord[] = [], fail: (row: SessionEventRecord) => boolean = () => false) {
  const rows = [...initial];
  const statements: number[] = [];
  const db: EventLogStore = {
    async insert(data) {
      await new Promise((r) => setTimeout(r, 1));
      for (const row of data) {
        if (fail(row)) throw new Error("disk full");
        const clash = rows.some(
          (r) =>
            r.sessionId === row.sessionId &&
            (r.seq === row.seq || (row.commandId !== null && r.commandId === row.commandId)),
        );
        if (clash) throw new Error("Unique constraint failed");
      }
      rows.push(...data);
      statements.push(data.length);
    },
    async lastSeq(sessionId) {
      const seqs = rows.filter((r) => r.sessionId === sessionId).map((r) => r.seq);
      return seqs.length === 0 ? 0 : Math.max(...seqs);
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

  it("reloads the counter when another writer took the seq", async () => {
    const { db, rows } = fakeDb();
    const writer = new SessionEventWriter(db, log);
    await writer.append(draft("s", 0));
    rows.push({
      sessionId: "s",
      seq: 2,
      kind: "cli",
      payload: "{}",
      commandId: null,
      userId: null,
      createdAt: new Date(),
    });
    const stored = await writer.append(draft("s", 1));
    expect(stored.record.seq).toBe(3);
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

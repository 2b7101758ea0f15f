import { expect } from "vitest";
import type { Db } from "./client";
import {
  findSessionCommand,
  findSessionEvent,
  insertSessionEvents,
  lastSessionSeq,
  listResultCandidates,
  listSessionEventPage,
  listSessionEvents,
  sessionEventSize,
  type SessionEventRecord,
} from "./session-events";
import { itOnBothProviders } from "./test-support";

/** The event log's queries, the same on both providers (the INSERT is raw SQL). */
async function exerciseEventLog(db: Db): Promise<void> {
  const user = await db.user.create({ data: { email: "a@example.test", name: "A" } });
  const workspace = await db.workspace.create({ data: { name: "W", slug: "w", rootPath: "/w" } });
  const session = await db.session.create({ data: { workspaceId: workspace.id, createdById: user.id } });
  const at = new Date("2026-05-06T07:08:09.123Z");
  const row = (seq: number, extra: Partial<SessionEventRecord> = {}): SessionEventRecord => ({
    sessionId: session.id,
    seq,
    kind: "cli",
    payload: JSON.stringify({ type: "stream_event", n: seq, text: `é"\n'); DROP TABLE x; --` }),
    commandId: null,
    userId: null,
    createdAt: at,
    ...extra,
  });
  expect(await lastSessionSeq(db, session.id)).toBe(0);
  const first = [
    row(1, { kind: "prompt", commandId: "cmd-00000001", userId: user.id, payload: '{"text":"hi"}' }),
    row(2),
    row(3, { payload: '{"type":"result","subtype":"success"}' }),
  ];
  await insertSessionEvents(db, first);
  expect(await listSessionEvents(db, session.id, 0)).toEqual(first);
  expect(await listSessionEvents(db, session.id, 2)).toEqual([first[2]]);
  expect(await findSessionEvent(db, session.id, 2)).toEqual(first[1]);
  expect(await findSessionCommand(db, session.id, "cmd-00000001")).toEqual(first[0]);
  expect(await findSessionCommand(db, session.id, "cmd-missing")).toBeUndefined();
  expect(await listResultCandidates(db, session.id)).toEqual(['{"type":"result","subtype":"success"}']);
  expect(await lastSessionSeq(db, session.id)).toBe(3);

  // A clash on (sessionId, seq) or (sessionId, commandId) writes nothing of the batch.
  await expect(insertSessionEvents(db, [row(4), row(3)])).rejects.toThrow();
  await expect(insertSessionEvents(db, [row(4), row(5, { commandId: "cmd-00000001" })])).rejects.toThrow();
  expect(await lastSessionSeq(db, session.id)).toBe(3);

  // More rows than one statement takes: still all or nothing.
  const many = Array.from({ length: 1200 }, (_, i) => row(4 + i));
  await insertSessionEvents(db, many);
  expect(await lastSessionSeq(db, session.id)).toBe(1203);
  await expect(
    insertSessionEvents(db, [...Array.from({ length: 600 }, (_, i) => row(1204 + i)), row(1)]),
  ).rejects.toThrow();
  expect(await lastSessionSeq(db, session.id)).toBe(1203);

  // Pages: by count, by payload size (at least one row), and the end of the log.
  const page = await listSessionEventPage(db, session.id, 0, { maxEvents: 500, maxChars: 1_000_000 });
  expect(page.rows.map((r) => r.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  expect(page.more).toBe(true);
  const tail = await listSessionEventPage(db, session.id, 1000, { maxEvents: 500, maxChars: 1_000_000 });
  expect(tail).toMatchObject({ more: false });
  expect(tail.rows.map((r) => r.seq)).toEqual(Array.from({ length: 203 }, (_, i) => i + 1001));
  expect(await listSessionEventPage(db, session.id, 1203, { maxEvents: 5, maxChars: 10 })).toEqual({
    rows: [],
    more: false,
  });
  const size = first[1]!.payload.length;
  expect(await sessionEventSize(db, session.id, 2)).toBe(size);
  expect(await sessionEventSize(db, session.id, 99_999)).toBeUndefined();
  const bySize = await listSessionEventPage(db, session.id, 3, { maxEvents: 100, maxChars: size * 2 + 1 });
  expect(bySize.rows.map((r) => r.seq)).toEqual([4, 5]);
  const tooBig = await listSessionEventPage(db, session.id, 3, { maxEvents: 100, maxChars: 1 });
  expect(tooBig.rows.map((r) => r.seq)).toEqual([4]);
  expect(tooBig.more).toBe(true);
}

itOnBothProviders("event log store", "inserts, reads and refuses clashes", exerciseEventLog);

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
  listSessionEventTail,
  sessionEventSize,
  type SessionEventRecord,
} from "./session-events";
import { findSessionCreatedBy } from "./sessions";
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
  // a retried create finds its session by the command's id: the user's, in that workspace, recent
  const created = { workspaceId: workspace.id, userId: user.id, commandId: "cmd-00000001", since: new Date(Date.now() - 60_000) };
  const other = await db.user.create({ data: { email: "b@example.test", name: "B" } });
  const otherWorkspace = await db.workspace.create({ data: { name: "W2", slug: "w2", rootPath: "/w2" } });
  await db.session.create({ data: { workspaceId: workspace.id, createdById: user.id } });
  expect(await findSessionCreatedBy(db, created)).toBe(session.id);
  expect(await findSessionCreatedBy(db, { ...created, commandId: "cmd-missing" })).toBeUndefined();
  expect(await findSessionCreatedBy(db, { ...created, userId: other.id })).toBeUndefined();
  expect(await findSessionCreatedBy(db, { ...created, workspaceId: otherWorkspace.id })).toBeUndefined();
  expect(await findSessionCreatedBy(db, { ...created, since: new Date(Date.now() + 60_000) })).toBeUndefined();
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

/** The end of a log for the page's picture of its last screen. */
async function exerciseEventTail(db: Db): Promise<void> {
  const user = await db.user.create({ data: { email: "t@example.test", name: "T" } });
  const workspace = await db.workspace.create({ data: { name: "W", slug: "w", rootPath: "/w" } });
  const session = await db.session.create({ data: { workspaceId: workspace.id, createdById: user.id } });
  const other = await db.session.create({ data: { workspaceId: workspace.id, createdById: user.id } });
  const limits = { maxEvents: 60, maxChars: 1_000_000, maxRowChars: 1_000 };
  expect(await listSessionEventTail(db, session.id, limits)).toEqual([]);
  const at = new Date("2026-05-06T07:08:09.123Z");
  const payloads = [
    '{"text":"do it"}',
    '{"type":"system","subtype":"init"}',
    '{"type":"stream_event","event":{"type":"message_start"}}',
    '{"type":"stream_event","event":{"type":"content_block_delta"}}',
    '{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}',
    JSON.stringify({ type: "user", big: "x".repeat(2_000) }),
    '{"type":"result","subtype":"success"}',
  ];
  const rows = payloads.map((payload, i) => ({
    sessionId: session.id,
    seq: i + 1,
    kind: i === 0 ? "prompt" : "cli",
    payload,
    commandId: i === 0 ? "cmd-tail-0001" : null,
    userId: i === 0 ? user.id : null,
    createdAt: at,
  }));
  await insertSessionEvents(db, rows);
  await insertSessionEvents(db, [{ ...rows[4]!, sessionId: other.id, seq: 1 }]);

  // in seq order; no streamed delta, no row over maxRowChars, nothing of another session
  const seqs = async (l: typeof limits) => (await listSessionEventTail(db, session.id, l)).map((r) => r.seq);
  expect(await listSessionEventTail(db, session.id, limits)).toEqual([rows[0], rows[1], rows[4], rows[6]]);
  // the last maxEvents rows looked at (deltas never count), and maxChars counted back from the end
  expect(await seqs({ ...limits, maxEvents: 2 })).toEqual([7]);
  expect(await seqs({ ...limits, maxEvents: 3 })).toEqual([5, 7]);
  expect(await seqs({ ...limits, maxChars: payloads[6]!.length + payloads[4]!.length })).toEqual([5, 7]);
  expect(await seqs({ ...limits, maxChars: payloads[6]!.length - 1 })).toEqual([]);
  expect(await seqs({ ...limits, maxRowChars: 10_000 })).toEqual([1, 2, 5, 6, 7]);
}

itOnBothProviders("event log store", "reads the end of a log for the last screen's picture", exerciseEventTail);

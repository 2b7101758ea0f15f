/**
 * The event log store: `SessionEvent` rows, numbered by `seq` per session. The database assigns
 * `seq` ({@link appendSessionEvents}: the next numbers after the stored log, inside the INSERT),
 * never a process's counter, and the unique index on (sessionId, seq) refuses a second writer
 * that read the same last seq; the sidecar's event writer retries that conflict.
 */
import { Prisma } from "@/generated/prisma/client";
import { pgPoolOf, type Db } from "./client";
import { hotRows } from "./hot-statements";
import type { WireError } from "@/server/shared/errors/app-error";
import { parsePayload } from "./session-wire-event";

/** One row of the event log. `payload` is JSON text: a CLI line exactly as printed, or a command's payload. */
export interface SessionEventRecord {
  sessionId: string;
  seq: number;
  kind: string;
  payload: string;
  commandId: string | null;
  userId: string | null;
  createdAt: Date;
}

const columns = {
  sessionId: true,
  seq: true,
  kind: true,
  payload: true,
  commandId: true,
  userId: true,
  createdAt: true,
} as const;

/** Rows per INSERT: 7 parameters each stays far below SQLite's and PostgreSQL's parameter limits. */
const rowsPerStatement = 500;

/**
 * Inserts rows: all of them or none. A multi-row INSERT through `$executeRaw` (placeholders per
 * provider), because `createMany` costs about twenty times its CPU per row, and the event log
 * takes every line every CLI prints.
 */
export async function insertSessionEvents(db: Db, rows: readonly SessionEventRecord[]): Promise<void> {
  if (rows.length === 0) return;
  const statements: Prisma.PrismaPromise<number>[] = [];
  for (let i = 0; i < rows.length; i += rowsPerStatement) {
    const values = rows
      .slice(i, i + rowsPerStatement)
      .map(
        (r) =>
          Prisma.sql`(${r.sessionId}, ${r.seq}, ${r.kind}, ${r.payload}, ${r.commandId}, ${r.userId}, ${r.createdAt})`,
      );
    statements.push(
      db.$executeRaw`INSERT INTO "SessionEvent" ("sessionId", "seq", "kind", "payload", "commandId", "userId", "createdAt") VALUES ${Prisma.join(values)}`,
    );
  }
  if (statements.length === 1) await statements[0];
  else await db.$transaction(statements);
}

/** An event to append: a row without its `seq`, which the database assigns. */
export type NewSessionEvent = Omit<SessionEventRecord, "seq">;

/** The unique index an append can clash on when another writer took the same seq first. */
export class SeqConflict extends Error {
  constructor(cause: unknown) {
    super("another writer took the same seq of the session", { cause });
    this.name = "SeqConflict";
  }
}

/**
 * Whether a failed INSERT clashed on the (sessionId, seq) index: PostgreSQL names the index
 * (`SessionEvent_sessionId_seq_key`, SQLSTATE 23505), SQLite the columns
 * (`UNIQUE constraint failed: SessionEvent.sessionId, SessionEvent.seq`). Prisma wraps both; the
 * text is searched along the error's cause chain and fields.
 */
export function isSeqConflict(err: unknown): boolean {
  const seen = new Set<unknown>();
  const texts: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (depth > 4 || value === null || typeof value !== "object" || seen.has(value)) {
      if (typeof value === "string") texts.push(value);
      return;
    }
    seen.add(value);
    for (const key of Object.getOwnPropertyNames(value)) {
      walk((value as Record<string, unknown>)[key], depth + 1);
    }
  };
  walk(err, 0);
  const text = texts.join("\n");
  return /SessionEvent_sessionId_seq_key|SessionEvent\.sessionId, SessionEvent\.seq\b(?!,)/.test(text);
}

function isPostgres(db: Db): boolean {
  return (db as unknown as { _activeProvider?: string })._activeProvider === "postgresql";
}

/**
 * Appends rows to the log with `seq` taken from the stored log inside each statement:
 * `INSERT … SELECT COALESCE(MAX(seq), 0) + k` per session, k = the row's place among that
 * session's rows of the statement. All rows or none; each session's rows get consecutive seqs in
 * the given order. Two writers that read the same MAX clash on the unique (sessionId, seq) index:
 * the second gets a {@link SeqConflict} and nothing of its call is written (retry it).
 * Returns the stored rows in the given order. SQLite: a multi-row VALUES statement per 500 rows
 * (one transaction); PostgreSQL: one fixed-text statement over arrays, see {@link appendOnPostgres}.
 */
export async function appendSessionEvents(db: Db, rows: readonly NewSessionEvent[]): Promise<SessionEventRecord[]> {
  if (rows.length === 0) return [];
  if (isPostgres(db)) return appendOnPostgres(db, rows);
  const chunks: NewSessionEvent[][] = [];
  for (let i = 0; i < rows.length; i += rowsPerStatement) chunks.push(rows.slice(i, i + rowsPerStatement));
  const statements = chunks.map((chunk) => {
    // Each statement reads MAX(seq) afresh (inside one transaction it sees the chunks before it),
    // so the places restart per statement.
    const place = new Map<string, number>();
    const values = chunk.map((r) => {
      const k = (place.get(r.sessionId) ?? 0) + 1;
      place.set(r.sessionId, k);
      return Prisma.sql`(${r.sessionId}, CAST(${k} AS INTEGER), ${r.kind}, ${r.payload}, ${r.commandId}, ${r.userId}, ${r.createdAt})`;
    });
    // SQLite materialises the SELECT before inserting (it reads the target table): MAX is the
    // log before this statement.
    return Prisma.sql`
      INSERT INTO "SessionEvent" ("sessionId", "seq", "kind", "payload", "commandId", "userId", "createdAt")
      SELECT v.column1,
        COALESCE((SELECT MAX(e."seq") FROM "SessionEvent" e WHERE e."sessionId" = v.column1), 0) + v.column2,
        v.column3, v.column4, v.column5, v.column6, v.column7
      FROM (VALUES ${Prisma.join(values)}) AS v
      RETURNING "sessionId", "seq"`;
  });
  type Returned = { sessionId: string; seq: number | bigint }[];
  let results: Returned[];
  try {
    // one statement (up to 500 rows, nearly every append) is a hot statement; more go in one transaction
    results =
      statements.length === 1
        ? [await hotRows<Returned[number]>(db, statements[0]!)]
        : await db.$transaction(statements.map((statement) => db.$queryRaw<Returned>(statement)));
  } catch (err) {
    throw isSeqConflict(err) ? new SeqConflict(err) : err;
  }
  // seq = MAX + place, so a session's returned seqs in ascending order are its rows in order.
  return chunks.flatMap((chunk, i) => numberedInOrder(chunk, results[i] ?? []));
}

/**
 * {@link appendOnPostgres}'s statement: the same numbering, with the rows passed as seven arrays to one statement
 * whose text never changes (`unnest`), however many rows. The multi-row VALUES form cost the
 * sidecar 4.4 ms of CPU for a one-row append and 5.8 ms for 150 rows (Prisma builds 7 parameters
 * a row, PostgreSQL plans a new text each time); this form 1.1 and 3.6 ms through Prisma, and
 * less as a named statement on Prisma's own pool, which skips Prisma's query layer and is parsed
 * and planned once per connection (docs/PERFORMANCE.md §4).
 * PostgreSQL reads MAX(seq) from the statement's snapshot: the log before this statement.
 */
const appendOnPostgresSql = `
  INSERT INTO "SessionEvent" ("sessionId", "seq", "kind", "payload", "commandId", "userId", "createdAt")
  SELECT v.s, COALESCE((SELECT MAX(e."seq") FROM "SessionEvent" e WHERE e."sessionId" = v.s), 0) + v.k,
    v.kind, v.p, v.c, v.u, v.at
  FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamp(3)[]) AS v(s, k, kind, p, c, u, at)
  RETURNING "sessionId", "seq"`;

async function appendOnPostgres(db: Db, rows: readonly NewSessionEvent[]): Promise<SessionEventRecord[]> {
  const place = new Map<string, number>();
  const places = rows.map((r) => {
    const k = (place.get(r.sessionId) ?? 0) + 1;
    place.set(r.sessionId, k);
    return k;
  });
  const values = [
    rows.map((r) => r.sessionId),
    places,
    rows.map((r) => r.kind),
    rows.map((r) => r.payload),
    rows.map((r) => r.commandId),
    rows.map((r) => r.userId),
    // UTC, as Prisma stores DateTime in a timestamp column (the cast drops the zone)
    rows.map((r) => r.createdAt.toISOString()),
  ];
  const pool = pgPoolOf(db);
  let result: { sessionId: string; seq: number | bigint }[];
  try {
    result = pool
      ? // a named statement, prepared once per connection (`appendOnPostgresSql`'s note)
        (await pool.query<{ sessionId: string; seq: number }>({ name: "conduit_append_session_events", text: appendOnPostgresSql, values })).rows
      : await db.$queryRawUnsafe<{ sessionId: string; seq: number | bigint }[]>(appendOnPostgresSql, ...values);
  } catch (err) {
    throw isSeqConflict(err) ? new SeqConflict(err) : err;
  }
  return numberedInOrder(rows, result);
}

/** `rows` with the seqs the database returned: per session, ascending seqs are its rows in order. */
function numberedInOrder(rows: readonly NewSessionEvent[], returned: readonly { sessionId: string; seq: number | bigint }[]): SessionEventRecord[] {
  const seqs = new Map<string, number[]>();
  for (const row of returned) {
    const list = seqs.get(row.sessionId) ?? [];
    list.push(Number(row.seq));
    seqs.set(row.sessionId, list);
  }
  for (const list of seqs.values()) list.sort((a, b) => a - b);
  const taken = new Map<string, number>();
  return rows.map((r) => {
    const k = taken.get(r.sessionId) ?? 0;
    taken.set(r.sessionId, k + 1);
    const seq = seqs.get(r.sessionId)?.[k];
    if (seq === undefined) throw new Error(`the event log did not return the seq of an appended row (${r.sessionId})`);
    return { ...r, seq };
  });
}

/** The events of a session after `afterSeq`, in order. */
export async function listSessionEvents(db: Db, sessionId: string, afterSeq: number): Promise<SessionEventRecord[]> {
  return db.sessionEvent.findMany({
    where: { sessionId, seq: { gt: afterSeq } },
    orderBy: { seq: "asc" },
    select: columns,
  });
}

/** How much one page of the log may hold: rows, and characters of stored payload. */
export interface EventPageLimits {
  maxEvents: number;
  /** A page stops before the row that would pass this; it holds at least one row whatever its size. */
  maxChars: number;
}

/** A page of the log: rows in order, and whether rows follow it. */
export interface SessionEventPage {
  rows: SessionEventRecord[];
  more: boolean;
}

/**
 * The first page of events after `afterSeq`: at most `maxEvents` rows and, past the first row,
 * at most `maxChars` characters of payload. Sizes are read first (the database measures, no
 * payload is loaded), then exactly the chosen rows, so a 50,000-event log or a 64 MB line
 * costs one page of memory per call, not the log.
 */
export async function listSessionEventPage(
  db: Db,
  sessionId: string,
  afterSeq: number,
  limits: EventPageLimits,
): Promise<SessionEventPage> {
  const sizes = await db.$queryRaw<{ seq: number | bigint; size: number | bigint | null }[]>`
    SELECT "seq", length("payload") AS "size" FROM "SessionEvent"
    WHERE "sessionId" = ${sessionId} AND "seq" > ${afterSeq}
    ORDER BY "seq" ASC LIMIT ${limits.maxEvents + 1}`;
  let chars = 0;
  let count = 0;
  let lastSeq = afterSeq;
  for (const row of sizes) {
    if (count === limits.maxEvents) break;
    const size = Number(row.size ?? 0);
    if (count > 0 && chars + size > limits.maxChars) break;
    chars += size;
    lastSeq = Number(row.seq);
    count += 1;
  }
  if (count === 0) return { rows: [], more: false };
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, seq: { gt: afterSeq, lte: lastSeq } },
    orderBy: { seq: "asc" },
    select: columns,
  });
  return { rows, more: count < sizes.length };
}

/** The length (characters) of one event's payload, or undefined when there is no such event. */
export async function sessionEventSize(db: Db, sessionId: string, seq: number): Promise<number | undefined> {
  const rows = await db.$queryRaw<{ size: number | bigint | null }[]>`
    SELECT length("payload") AS "size" FROM "SessionEvent" WHERE "sessionId" = ${sessionId} AND "seq" = ${seq}`;
  return rows[0] === undefined ? undefined : Number(rows[0].size ?? 0);
}

/** One event, or undefined. */
export async function findSessionEvent(
  db: Db,
  sessionId: string,
  seq: number,
): Promise<SessionEventRecord | undefined> {
  const row = await db.sessionEvent.findUnique({ where: { sessionId_seq: { sessionId, seq } }, select: columns });
  return row ?? undefined;
}

/** The start of a `command-failed` note's text, up to its error (keys in this order). */
const failureHead = (command: string, commandSeq: number) =>
  JSON.stringify({ phase: "command-failed", command, commandSeq }).slice(0, -1);

/** The payload of the `process` event that notes a logged command's failed effect. */
export function commandFailurePayload(command: string, commandSeq: number, error: WireError): string {
  return `${failureHead(command, commandSeq)},"error":${JSON.stringify(error)}}`;
}

/**
 * The error a logged command's effect failed with (its `command-failed` note, see
 * {@link commandFailurePayload}), or undefined when none was noted. The note's text starts with
 * fixed keys, so a prefix match finds exactly it among the session's `process` events after the
 * command (`command` is one of the hub's command names: no LIKE wildcard in it).
 */
export async function findCommandFailure(
  db: Db,
  sessionId: string,
  command: string,
  commandSeq: number,
): Promise<WireError | undefined> {
  const prefix = `${failureHead(command, commandSeq)},%`;
  const rows = await db.$queryRaw<{ payload: string }[]>`
    SELECT "payload" FROM "SessionEvent"
    WHERE "sessionId" = ${sessionId} AND "kind" = 'process' AND "seq" > ${commandSeq} AND "payload" LIKE ${prefix}
    ORDER BY "seq" ASC LIMIT 1`;
  const note = rows[0] === undefined ? undefined : (parsePayload(rows[0].payload) as { error?: WireError } | undefined);
  return note?.error;
}

/** The event a command with this client-made id wrote, or undefined when it never ran. */
export async function findSessionCommand(
  db: Db,
  sessionId: string,
  commandId: string,
): Promise<SessionEventRecord | undefined> {
  // every command asks (its idempotency): a hot statement (hot-statements.ts)
  const [hit] = await hotRows<SessionEventRecord>(
    db,
    Prisma.sql`SELECT "sessionId", "seq", "kind", "payload", "commandId", "userId", "createdAt" FROM "SessionEvent"
      WHERE "sessionId" = ${sessionId} AND "commandId" = ${commandId}`,
  );
  return hit;
}

/** The highest `seq` of a session; 0 when its log is empty. */
export async function lastSessionSeq(db: Db, sessionId: string): Promise<number> {
  const row = await db.sessionEvent.findFirst({
    where: { sessionId },
    orderBy: { seq: "desc" },
    select: { seq: true },
  });
  return row?.seq ?? 0;
}

/**
 * The CLI lines that may be `result` frames (text search; the caller parses and checks `type`).
 * The CLI prints `"type":"result"` in every result line, so none is missed; an assistant text
 * quoting that string is a false candidate the caller drops.
 */
export async function listResultCandidates(db: Db, sessionId: string): Promise<string[]> {
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } },
    orderBy: { seq: "asc" },
    select: { payload: true },
  });
  return rows.map((r) => r.payload);
}

/**
 * Who sent the prompt with this uuid (the prompt event's userId), or undefined. A turn's cost is
 * charged to that person; the hub asks here only for prompts sent before it started.
 */
export async function findPromptSender(db: Db, sessionId: string, promptUuid: string): Promise<string | undefined> {
  const row = await db.sessionEvent.findFirst({
    where: { sessionId, kind: "prompt", payload: { contains: JSON.stringify(promptUuid) } },
    select: { userId: true },
  });
  return row?.userId ?? undefined;
}

/**
 * The last page of events before `beforeSeq`, in seq order: at most `maxEvents` rows and, past
 * the row nearest `beforeSeq`, at most `maxChars` characters of payload (sizes read first, as
 * {@link listSessionEventPage} does). `more` says rows precede the page. The rows are
 * consecutive in the log: every row between the page's first and `beforeSeq` is in it.
 */
export async function listSessionEventPageBefore(
  db: Db,
  sessionId: string,
  beforeSeq: number,
  limits: EventPageLimits,
): Promise<SessionEventPage> {
  const sizes = await db.$queryRaw<{ seq: number | bigint; size: number | bigint | null }[]>`
    SELECT "seq", length("payload") AS "size" FROM "SessionEvent"
    WHERE "sessionId" = ${sessionId} AND "seq" < ${beforeSeq}
    ORDER BY "seq" DESC LIMIT ${limits.maxEvents + 1}`;
  let chars = 0;
  let count = 0;
  let firstSeq = beforeSeq;
  for (const row of sizes) {
    if (count === limits.maxEvents) break;
    const size = Number(row.size ?? 0);
    if (count > 0 && chars + size > limits.maxChars) break;
    chars += size;
    firstSeq = Number(row.seq);
    count += 1;
  }
  if (count === 0) return { rows: [], more: false };
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, seq: { gte: firstSeq, lt: beforeSeq } },
    orderBy: { seq: "asc" },
    select: columns,
  });
  return { rows, more: count < sizes.length };
}

/** Limits of {@link listSessionEventTail}. */
export interface EventTailLimits {
  /** Rows looked at, from the end of the log. */
  maxEvents: number;
  /** Characters of payload in all, the last row included. */
  maxChars: number;
  /** A row longer than this is left out (a 64 MB tool result is not read for a preview). */
  maxRowChars: number;
}

/**
 * The end of a session's log for a picture of its last screen, in seq order: of the last
 * `maxEvents` rows, those that fit `maxChars` counting back from the end. Left out: streamed
 * deltas (the message they build follows them in the log) and rows over `maxRowChars`, so the
 * rows need not be consecutive. Sizes are read first, then only the chosen rows.
 */
export async function listSessionEventTail(db: Db, sessionId: string, limits: EventTailLimits): Promise<SessionEventRecord[]> {
  const sizes = await db.$queryRaw<{ seq: number | bigint; size: number | bigint | null }[]>`
    SELECT "seq", length("payload") AS "size" FROM "SessionEvent"
    WHERE "sessionId" = ${sessionId} AND "payload" NOT LIKE ${'{"type":"stream_event"%'}
    ORDER BY "seq" DESC LIMIT ${limits.maxEvents}`;
  const chosen: number[] = [];
  let chars = 0;
  for (const row of sizes) {
    const size = Number(row.size ?? 0);
    if (size > limits.maxRowChars) continue;
    if (chars + size > limits.maxChars) break;
    chars += size;
    chosen.push(Number(row.seq));
  }
  if (chosen.length === 0) return [];
  return db.sessionEvent.findMany({ where: { sessionId, seq: { in: chosen } }, orderBy: { seq: "asc" }, select: columns });
}

/**
 * The first prompt's text of each session (its first 200 characters), for titles of sessions
 * that have none: one statement for a page of sessions.
 */
export async function firstPromptsOf(db: Db, sessionIds: readonly string[]): Promise<Record<string, string>> {
  const firstPrompts: Record<string, string> = {};
  if (sessionIds.length === 0) return firstPrompts;
  const prompts = await db.sessionEvent.findMany({
    where: { sessionId: { in: [...sessionIds] }, kind: "prompt" },
    orderBy: [{ sessionId: "asc" }, { seq: "asc" }],
    distinct: ["sessionId"],
    select: { sessionId: true, payload: true },
  });
  for (const p of prompts) {
    const text = (parsePayload(p.payload) as { text?: unknown } | null | undefined)?.text;
    if (typeof text === "string") firstPrompts[p.sessionId] = text.slice(0, 200);
  }
  return firstPrompts;
}

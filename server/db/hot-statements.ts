/**
 * The raw statements a live session runs on every turn or command (the role check, the row write
 * with its search text, the budget limits, a turn's cost rows with the session's new total and its
 * change step, the command and lease lookups), run as cheaply as the database allows. On
 * PostgreSQL they go to the driver's pool as named statements: each connection parses and plans
 * a text once and then only binds and executes it, where Prisma's raw path sends every call
 * unnamed (parsed and planned again) through its own query layer. Measured on one
 * PostgreSQL, 2,000 calls each after a warm-up: the role check's join 188 µs of the caller's CPU
 * and 477 µs wall through Prisma, 76 µs and 125 µs as a named statement; a row update 253 µs
 * against 111 µs. On SQLite they run synchronously on Prisma's own better-sqlite3 connection
 * (`sqliteConnectionOf`), each text prepared once: the role check took 180 µs wall and 315 µs of
 * CPU through Prisma's raw path (its query layer, several promise hops) and 13 µs directly.
 *
 * Values and rows are converted as Prisma's raw path does on PostgreSQL, as far as the callers
 * use them: a Date parameter goes as UTC text and `timestamp` columns (Prisma's DateTime, stored
 * in UTC without a zone) come back as Dates read as UTC, whatever the process's zone (pg's
 * defaults use the local zone both ways); `bigint` (COUNT, SUM of integers) comes back as a number.
 * On SQLite as the adapter stores and Prisma reads them: a Date parameter as ISO text with
 * `+00:00`, a boolean as 1/0; a `DATETIME` column back as a Date, a `BOOLEAN` column as a boolean.
 *
 * A pooler in transaction mode (PgBouncer before 1.21) does not keep named statements on a server
 * connection; docs/DEPLOY.md says so.
 */
import pg from "pg";
import type { Prisma } from "@/generated/prisma/client";
import { pgPoolOf, sqliteConnectionOf, type Db, type StatementSource } from "./client";

/** PostgreSQL type ids whose text form is read differently from pg's defaults here. */
const TIMESTAMP = 1114;
const INT8 = 20;

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === TIMESTAMP) return (text: string) => new Date(`${text.replace(" ", "T")}Z`);
    if (oid === INT8) return (text: string) => Number(text);
    return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
  },
};

/** Distinct texts named so far; past the cap a text runs unnamed (planned per call, still without Prisma's layer). */
const names = new Map<string, string>();
const maxNames = 200;

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < maxNames) {
    name = `conduit_hot_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/**
 * A parameter as Prisma sends it: a Date as its UTC ISO text, which a `timestamp` column takes as
 * is (pg would send the process's local time, and the column drops the offset).
 */
function param(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

function config(query: Prisma.Sql): pg.QueryConfig {
  const name = nameOf(query.text);
  return { text: query.text, values: query.values.map(param), types, ...(name ? { name } : {}) };
}

/** A parameter as the SQLite adapter binds it (its default `iso8601` timestamp format). */
function sqliteParam(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

/** An integer as Prisma's raw path gives it: a number when exact, else its text. */
function integer(value: bigint): number | string {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value.toString();
}

/** How a column's stored value is read back: as Prisma reads a column of that declared type. */
type ColumnReader = (stored: unknown) => unknown;

const asDate: ColumnReader = (stored) =>
  typeof stored === "string" || typeof stored === "number" || typeof stored === "bigint"
    ? new Date(typeof stored === "string" ? stored : Number(stored))
    : stored;
const asBoolean: ColumnReader = (stored) => (stored === null ? null : Boolean(Number(stored)));

/** Per SQL text, the columns whose values need reading back (most have none). */
const readersOf = new Map<string, [string, ColumnReader][]>();

function readers(sql: string, columns: () => { name: string; type: string | null }[]): [string, ColumnReader][] {
  let found = readersOf.get(sql);
  if (found === undefined) {
    found = [];
    for (const { name, type } of columns()) {
      const declared = type?.toUpperCase();
      if (declared === "DATETIME" || declared === "TIMESTAMP") found.push([name, asDate]);
      else if (declared === "BOOLEAN") found.push([name, asBoolean]);
    }
    if (readersOf.size < maxNames) readersOf.set(sql, found);
  }
  return found;
}

/** Runs `query` on SQLite's connection: the rows of a reader (or of RETURNING), else the changes. */
function runOnSqlite(connection: StatementSource, query: Prisma.Sql): { rows: object[]; changes: number } {
  const statement = connection.prepare(query.sql);
  const params = query.values.map(sqliteParam);
  if (!statement.reader) {
    const { changes } = statement.run(...params) as { changes: number };
    return { rows: [], changes };
  }
  const rows = statement.all(...params) as Record<string, unknown>[];
  if (rows.length === 0) return { rows, changes: 0 };
  const read = readers(query.sql, () => statement.columns());
  for (const row of rows) {
    // the adapter's connection reads every integer as a bigint (`defaultSafeIntegers`)
    for (const name in row) if (typeof row[name] === "bigint") row[name] = integer(row[name]);
    for (const [name, reader] of read) row[name] = reader(row[name]);
  }
  return { rows, changes: rows.length };
}

/** Whether `db` is PostgreSQL behind its pool: statements written for PostgreSQL alone (a CTE around an INSERT, the leases) run only there. */
export function hotPath(db: Db): boolean {
  return pgPoolOf(db) !== undefined;
}

/** The rows of a query (see the module's note on types). */
export async function hotRows<T extends object>(db: Db, query: Prisma.Sql): Promise<T[]> {
  const pool = pgPoolOf(db);
  if (pool) return (await pool.query<T>(config(query))).rows;
  const sqlite = await sqliteConnectionOf(db);
  return sqlite ? (runOnSqlite(sqlite, query).rows as T[]) : db.$queryRaw<T[]>(query);
}

/** Runs a statement; how many rows it changed. */
export async function hotExecute(db: Db, query: Prisma.Sql): Promise<number> {
  const pool = pgPoolOf(db);
  if (pool) return (await pool.query(config(query))).rowCount ?? 0;
  const sqlite = await sqliteConnectionOf(db);
  return sqlite ? runOnSqlite(sqlite, query).changes : db.$executeRaw(query);
}

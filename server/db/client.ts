// The Prisma client for Conduit's database, shared by the Next server and the sidecar (so no
// `server-only` here). SQLite through better-sqlite3 by default; PostgreSQL when DATABASE_URL
// says so. Both generated clients come from the same models, so callers see one type.
import { existsSync } from "node:fs";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { PrismaClient } from "@/generated/prisma/client";
import { PrismaClient as PgPrismaClient } from "@/generated/prisma-pg/client";
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, SQLITE_BUSY_TIMEOUT_MS } from "./database-url";

/** Conduit's database client, whichever provider is behind it. */
export type Db = PrismaClient;

/**
 * The SQLite adapter, with each new connection set up for several processes: WAL lets the web
 * server read while the sidecar writes, the busy timeout makes a writer wait for the other's lock
 * instead of failing with SQLITE_BUSY, and foreign keys carry the schema's ON DELETE CASCADE.
 */
function sqliteAdapter(file: string, connection: SqliteConnection): SqlDriverAdapterFactory {
  const inner = new PrismaBetterSqlite3({ url: `file:${file}`, timeout: SQLITE_BUSY_TIMEOUT_MS, fileMustExist: true });
  return {
    provider: inner.provider,
    adapterName: inner.adapterName,
    async connect() {
      const adapter = await inner.connect();
      await adapter.executeScript("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
      const client = (adapter as unknown as { client: StatementSource }).client;
      reuseStatements(client);
      connection.current = client;
      return adapter;
    },
  };
}

/** The part of a better-sqlite3 Database the adapter uses to run SQL. */
export interface StatementSource {
  /** False once closed (Prisma's `$disconnect`). */
  readonly open: boolean;
  prepare(sql: string): SqliteStatement;
}

/** The adapter's connection, once Prisma has opened it (it connects on first use). */
interface SqliteConnection {
  current?: StatementSource;
}

export interface SqliteStatement {
  readonly reader: boolean;
  run(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  columns(): { name: string; type: string | null }[];
  raw(toggle?: boolean): SqliteStatement;
  bind(...params: unknown[]): SqliteStatement;
}

/**
 * How the adapter's transactions begin. Its plain (deferred) `BEGIN` takes the write lock only at
 * the first write; when another process commits between the transaction's first read and that
 * write, SQLite fails the write at once with SQLITE_BUSY_SNAPSHOT, and the busy timeout does not
 * help (sign-up counts users, then inserts, while the sidecar writes events). IMMEDIATE takes the
 * write lock at the start, waiting for it within the busy timeout like any other writer.
 */
const beginImmediate = "BEGIN IMMEDIATE";

/** Most distinct SQL texts kept prepared (Prisma's statements are a few hundred at most). */
const maxPreparedStatements = 500;

/**
 * Keeps the adapter's statements prepared. The better-sqlite3 adapter prepares every statement
 * anew and binds it once (`prepare(sql).bind(args)`), and preparing costs as much as running a
 * small statement: about a tenth of the sidecar's CPU went to it. Here `prepare` returns, per SQL
 * text, one kept statement behind a view whose `bind` only remembers the arguments, and whose
 * `run`, `all` and `raw` pass them on each call. Everything runs synchronously on one connection,
 * so one statement is never used by two calls at once. The adapter's `BEGIN` becomes
 * {@link beginImmediate} here too.
 */
function reuseStatements(database: StatementSource): void {
  const prepare = database.prepare.bind(database);
  const kept = new Map<string, SqliteStatement>();
  const view = (statement: SqliteStatement, params: unknown[]): SqliteStatement => ({
    reader: statement.reader,
    run: (...more) => statement.run(...params, ...more),
    all: (...more) => statement.all(...params, ...more),
    columns: () => statement.columns(),
    raw: (toggle = true) => {
      statement.raw(toggle);
      return view(statement, params);
    },
    bind: (...bound) => view(statement, [...params, ...bound]),
  });
  database.prepare = (requested: string) => {
    const sql = requested === "BEGIN" ? beginImmediate : requested;
    let statement = kept.get(sql);
    if (statement) {
      // Most recently used last: the first key is the one to drop.
      kept.delete(sql);
    } else {
      statement = prepare(sql);
      if (kept.size >= maxPreparedStatements) kept.delete(kept.keys().next().value!);
    }
    kept.set(sql, statement);
    // Plain mode unless a caller asks for raw rows again (the flag sticks to a kept statement).
    if (statement.reader) statement.raw(false);
    return view(statement, []);
  };
}

/**
 * A new client for `url` (default: `DATABASE_URL`, else `file:./data/conduit.db` under the
 * project root). The caller owns it and calls `$disconnect()`. A SQLite file must already exist:
 * `npm run db:migrate` creates it.
 */
export function createDb(url: string = process.env.DATABASE_URL || DEFAULT_DATABASE_URL): Db {
  const target = parseDatabaseUrl(url);
  if (target.provider === "sqlite") {
    if (!existsSync(target.file)) {
      throw new Error(`SQLite database ${target.file} does not exist; run \`npm run db:migrate\` first`);
    }
    const connection: SqliteConnection = {};
    const db = new PrismaClient({ adapter: sqliteAdapter(target.file, connection) });
    sqliteConnections.set(db, connection);
    return db;
  }
  // The one cast between the two generated clients: both come from the same models
  // (prisma/postgres/schema.prisma is rendered from prisma/schema.prisma, and
  // `db-migrate.ts check` fails when it is stale), so their APIs match and only the nominal
  // types differ.
  const pool = new pg.Pool({
    connectionString: target.url,
    // A connection costs ~10 ms and ~6.5 ms of this process's CPU to open (SCRAM's key
    // derivation), a backend start on the server, and its named statements prepared again
    // (`hot-statements.ts`); with pg's default of 10 s a sidecar reopened most of its pool on
    // every burst after a quiet spell. Idle ones are kept 5 minutes and hold no process open.
    idleTimeoutMillis: 5 * 60_000,
    allowExitOnIdle: true,
  });
  const db = new PgPrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) }) as unknown as Db;
  pgPools.set(db, pool);
  return db;
}

const pgPools = new WeakMap<Db, pg.Pool>();

/**
 * The connection pool under a PostgreSQL client made by {@link createDb} (undefined for SQLite
 * or a client made elsewhere). For the one hot statement that skips Prisma's query layer (the
 * event log's append, `session-events.ts`); the pool is Prisma's own, so it holds no extra
 * connections and closes with `$disconnect()`.
 */
export function pgPoolOf(db: Db): pg.Pool | undefined {
  return pgPools.get(db);
}

const sqliteConnections = new WeakMap<Db, SqliteConnection>();

/**
 * The better-sqlite3 connection under a SQLite client made by {@link createDb} (undefined for
 * PostgreSQL or a client made elsewhere), opened first if Prisma has not yet. It is Prisma's own
 * one connection, so a statement run on it directly sees and takes the same locks as Prisma's
 * (`hot-statements.ts`). Like Prisma's own queries outside a transaction, a statement run here
 * while an interactive transaction holds the connection runs inside it.
 */
export async function sqliteConnectionOf(db: Db): Promise<StatementSource | undefined> {
  const connection = sqliteConnections.get(db);
  if (!connection) return undefined;
  if (!connection.current?.open) await db.$connect();
  return connection.current?.open ? connection.current : undefined;
}

const cache = globalThis as typeof globalThis & { __conduitDb?: { url: string; db: Db } };

/**
 * The process-wide client for `DATABASE_URL`. Cached on globalThis so that Next's dev server,
 * which re-evaluates modules on every edit, keeps one connection instead of leaking one per reload.
 */
export function getDb(): Db {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (cache.__conduitDb?.url === url) return cache.__conduitDb.db;
  const db = createDb(url);
  cache.__conduitDb = { url, db };
  return db;
}

/** Disconnects the process-wide client, if any (graceful shutdown, test teardown). */
export async function closeDb(): Promise<void> {
  const current = cache.__conduitDb;
  cache.__conduitDb = undefined;
  await current?.db.$disconnect();
}

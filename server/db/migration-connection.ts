// One pinned database connection for migration work, shared by Prisma's WebAssembly schema
// engine and by our own transaction control. The Prisma CLI's migrate commands need a native
// engine that cannot be downloaded here; `@prisma/schema-engine-wasm` drives the same logic
// through a driver adapter, and owning that adapter is what lets us make deploys atomic.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from "@prisma/driver-adapter-utils";
import * as wasmBindings from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { SchemaEngine } from "@prisma/schema-engine-wasm/schema_engine_bg";
import pg from "pg";
import { SQLITE_BUSY_TIMEOUT_MS, type DatabaseTarget } from "./database-url";

export type { SchemaEngine };

/** pg's OID for the one-byte catalog type `"char"` (pg_class.relkind and friends). */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

const SAVEPOINT = "conduit_migration_script";

type Row = Record<string, unknown>;

/**
 * A single connection to the target database. `begin`/`commit`/`rollback` wrap whatever the
 * schema engine does in between; while a transaction is open, every migration script the
 * engine runs is fenced by a savepoint, so a failing script is undone before the engine writes
 * its failure log (PostgreSQL would otherwise refuse that write in an aborted transaction).
 */
export class MigrationConnection {
  private inTransaction = false;
  private closed = false;
  /** The driver error behind the last failed migration script: the engine's own message
   *  for it is sometimes only "external connector error". */
  lastScriptError: unknown = null;

  private constructor(
    readonly provider: DatabaseTarget["provider"],
    private readonly adapter: SqlDriverAdapter,
    private readonly execRaw: (sql: string) => Promise<void>,
    private readonly runScript: (script: string) => Promise<void>,
    private readonly shutdown: () => Promise<void>,
  ) {}

  static async open(target: DatabaseTarget): Promise<MigrationConnection> {
    if (target.provider === "sqlite") {
      const factory = new PrismaBetterSqlite3({ url: `file:${target.file}`, timeout: SQLITE_BUSY_TIMEOUT_MS });
      const adapter = await factory.connect();
      const exec = (sql: string) => adapter.executeScript(sql);
      return new MigrationConnection("sqlite", adapter, exec, exec, () => adapter.dispose());
    }

    // One session for everything: BEGIN and the engine's statements must share it. pg.Pool will
    // not do: a failed query makes it discard the connection (and with it the open transaction).
    // adapter-pg only accepts a Pool, so hand it one whose queries go to our single client.
    const client = new pg.Client({ connectionString: target.url });
    client.on("error", () => {
      // surfaced by the next query; without a listener pg would crash the process
    });
    await client.connect();
    const pool = new pg.Pool({ connectionString: target.url });
    pool.query = client.query.bind(client) as typeof pool.query;
    pool.connect = (() => {
      throw new Error("migrations run on a single PostgreSQL session; the engine may not open another");
    }) as typeof pool.connect;
    const adapter = await new PrismaPg(pool).connect();
    patchPgCharType(adapter);
    const exec = async (sql: string) => {
      // the whole script in one simple-protocol query (adapter-pg splits scripts at every ";")
      await client.query(sql);
    };
    return new MigrationConnection("postgresql", adapter, exec, exec, () => client.end());
  }

  /** Rows of a read-only query, as objects keyed by column name. */
  async query(sql: string): Promise<Row[]> {
    const result = await this.adapter.queryRaw({ sql, args: [], argTypes: [] });
    return result.rows.map((values) => Object.fromEntries(result.columnNames.map((name, i) => [name, values[i]])));
  }

  async exec(sql: string): Promise<void> {
    await this.execRaw(sql);
  }

  async begin(): Promise<void> {
    // IMMEDIATE takes SQLite's write lock now, so two deploying processes queue on the busy
    // timeout instead of both reading the same "pending" list.
    await this.execRaw(this.provider === "sqlite" ? "BEGIN IMMEDIATE" : "BEGIN");
    this.inTransaction = true;
    this.lastScriptError = null;
  }

  async commit(): Promise<void> {
    await this.execRaw("COMMIT");
    this.inTransaction = false;
  }

  async rollback(): Promise<void> {
    if (!this.inTransaction) return;
    this.inTransaction = false;
    await this.execRaw("ROLLBACK");
  }

  /** The driver-adapter factory the schema engine connects through: always this connection. */
  engineAdapterFactory(): SqlMigrationAwareDriverAdapterFactory {
    const inner = this.adapter;
    const adapter: SqlDriverAdapter = {
      provider: inner.provider,
      adapterName: inner.adapterName,
      queryRaw: (query) => inner.queryRaw(query),
      executeRaw: (query) => inner.executeRaw(query),
      executeScript: (script) => this.executeMigrationScript(script),
      startTransaction: (isolationLevel) => inner.startTransaction(isolationLevel),
      getConnectionInfo: inner.getConnectionInfo?.bind(inner),
      // The engine does not own the connection; close() does.
      dispose: async () => {},
    };
    return {
      provider: this.adapter.provider,
      adapterName: this.adapter.adapterName,
      connect: async () => adapter,
      connectToShadowDb: async () => {
        throw new Error("shadow databases are created by server/db/migrations.ts, not by the engine");
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.rollback();
    } catch {
      // the connection may already be broken; closing is all that is left
    }
    await this.shutdown();
  }

  private async executeMigrationScript(script: string): Promise<void> {
    if (!this.inTransaction) return this.runScript(script);
    await this.execRaw(`SAVEPOINT ${SAVEPOINT}`);
    try {
      await this.runScript(script);
    } catch (error) {
      this.lastScriptError = error;
      await this.execRaw(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      throw error;
    }
    await this.execRaw(`RELEASE SAVEPOINT ${SAVEPOINT}`);
  }
}

/**
 * adapter-pg has no column type for the catalog type `"char"` (OID 18) and throws
 * "Column type 'char' could not be deserialized" during the engine's introspection. Its values
 * are one-character strings, so reporting them as text is exact.
 */
function patchPgCharType(adapter: SqlDriverAdapter): void {
  // performIO is private in the typings but an ordinary method; queryRaw calls it via `this`.
  const target = adapter as unknown as { performIO: (query: unknown) => Promise<{ fields: { dataTypeID: number }[] }> };
  const performIO = target.performIO.bind(adapter);
  target.performIO = async (query) => {
    const result = await performIO(query);
    for (const field of result.fields) if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    return result;
  };
}

let wasmReady = false;
let openEngines = 0;
/** Timers the engine started and has not seen fire. */
const engineTimers = new Set<ReturnType<typeof setTimeout>>();

/** Instantiates the schema engine's WebAssembly once per process. */
function loadSchemaEngineWasm(): void {
  if (wasmReady) return;
  // The package's index does `import "./x.wasm"`, which Node cannot; wire the bindings by hand.
  const require = createRequire(import.meta.url);
  const bindingsPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const bytes = readFileSync(path.join(path.dirname(bindingsPath), "schema_engine_bg.wasm"));
  const imports: Record<string, unknown> = { ...wasmBindings };
  // The engine arms 10 s timeouts and never clears them (it imports no clearTimeout): they kept
  // the CLI alive for 10 s after its work was done. Track them; closeSchemaEngine clears them.
  for (const name of Object.keys(imports).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
    imports[name] = (callback: () => void, ms: number) => {
      const timer = setTimeout(() => {
        engineTimers.delete(timer);
        callback();
      }, ms >>> 0);
      engineTimers.add(timer);
      return timer;
    };
  }
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
    "./schema_engine_bg.js": imports as WebAssembly.ModuleImports,
  });
  wasmBindings.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
  wasmReady = true;
}

/** A Prisma schema file as the engine takes it. */
export interface SchemaFile {
  path: string;
  content: string;
}

/**
 * A schema engine working on `connection`. `files` are the Prisma schema the engine diffs
 * against; deploy passes a datasource-only schema, since applying migrations needs no models.
 * Close it with `closeSchemaEngine` before closing the connection.
 */
export async function openSchemaEngine(connection: MigrationConnection, files: SchemaFile[]): Promise<SchemaEngine> {
  loadSchemaEngineWasm();
  const engine = await wasmBindings.SchemaEngine.new(
    { datamodels: files.map((f) => [f.path, f.content]) },
    () => {
      // engine tracing (JSON lines); our own log says what was applied
    },
    bindMigrationAwareSqlAdapterFactory(connection.engineAdapterFactory()),
  );
  openEngines += 1;
  return engine;
}

/** Frees the engine; once none is open, clears the timeouts the engines left armed. */
export function closeSchemaEngine(engine: SchemaEngine): void {
  engine.free();
  openEngines -= 1;
  if (openEngines > 0) return;
  for (const timer of engineTimers) clearTimeout(timer);
  engineTimers.clear();
}

/**
 * The engine's errors carry a Rust span trace after the message ("\n   0: sql_schema_connector::…");
 * keep the message. A script failure is reported as "external connector error" on PostgreSQL,
 * so prefer the driver's own error when we caught it.
 */
export function describeEngineError(error: unknown, scriptError: unknown = null): string {
  if (scriptError) {
    const message = (scriptError as { message?: unknown }).message;
    return (typeof message === "string" && message ? message : String(scriptError)).trim();
  }
  const engineMessage = error instanceof Error ? error.message : String(error);
  return engineMessage.split(/\n\s+0: /)[0]?.trim() || engineMessage;
}

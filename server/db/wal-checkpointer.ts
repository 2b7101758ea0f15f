/**
 * Moves SQLite's WAL checkpoints off the sidecar's event loop. better-sqlite3 runs every
 * statement on the calling thread, and SQLite's automatic checkpoint (every 1000 WAL pages) runs
 * inside whichever commit crosses the mark: it copies pages into the database file and fsyncs,
 * stalling that commit — and with it every event waiting to be broadcast — for tens of
 * milliseconds. Here the sidecar's connection stops checkpointing, and a worker thread with its
 * own connection runs PASSIVE checkpoints (which never block writers) on a timer.
 *
 * If the worker fails, automatic checkpoints are turned back on, so the WAL never grows unbounded.
 * PostgreSQL needs none of this: {@link startWalCheckpointer} returns a no-op for it.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { Db } from "./client";
import { parseDatabaseUrl, SQLITE_BUSY_TIMEOUT_MS } from "./database-url";

/** A running checkpointer. */
export interface WalCheckpointer {
  close(): Promise<void>;
}

/** Options of {@link startWalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** Time between checkpoints. Default 100 ms: short enough that a checkpoint often catches up between two writes. */
  intervalMs?: number;
  /** WAL size, in pages, past which a checkpoint restarts the WAL (briefly holding writers). Default 4096 (16 MB of 4 KiB pages). */
  maxWalPages?: number;
  log?: Pick<Logger, "warn" | "error">;
}

const sqliteDefaultAutocheckpoint = 1000;

// Plain CommonJS, evaluated in the worker: no TypeScript loader needed there.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
const checkpoint = () => {
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)");
    // Under unbroken writing a PASSIVE checkpoint never catches up, and only a caught-up WAL is
    // restarted from its beginning: past the limit, RESTART makes writers wait for the last
    // frames (the ones PASSIVE has not copied yet) so the WAL starts over.
    if (result && result.log > workerData.maxWalPages) db.pragma("wal_checkpoint(RESTART)");
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message ? err.message : err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/** Starts checkpointing `url`'s WAL in a worker (SQLite), and stops `db` from doing it inline. */
export async function startWalCheckpointer(
  db: Db,
  url: string,
  options: WalCheckpointerOptions = {},
): Promise<WalCheckpointer> {
  const target = parseDatabaseUrl(url);
  if (target.provider !== "sqlite") return { close: async () => undefined };
  const require = createRequire(import.meta.url);
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: {
      file: target.file,
      intervalMs: options.intervalMs ?? 100,
      maxWalPages: options.maxWalPages ?? 4096,
      busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
      betterSqlite3: require.resolve("better-sqlite3"),
    },
  });
  let closing = false;
  const fallBack = (reason: unknown) => {
    if (closing) return;
    options.log?.error({ err: reason }, "WAL checkpointer stopped; SQLite checkpoints inline again");
    void db.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${sqliteDefaultAutocheckpoint}`).catch(() => undefined);
  };
  worker.on("message", (message: { error?: string }) => {
    if (message.error) options.log?.warn({ error: message.error }, "WAL checkpoint failed");
  });
  worker.on("error", fallBack);
  worker.on("exit", (code) => fallBack(new Error(`checkpoint worker exited with ${code}`)));
  // Only once the worker is up: the WAL must always have someone checkpointing it.
  await new Promise<void>((resolve, reject) => {
    worker.once("online", resolve);
    worker.once("error", reject);
  });
  // It must not keep the process alive on its own.
  worker.unref();
  await db.$queryRawUnsafe("PRAGMA wal_autocheckpoint = 0");
  return {
    async close() {
      if (closing) return;
      closing = true;
      // Held while it finishes its last checkpoint: an unreferenced worker would let the process exit mid-way.
      worker.ref();
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.postMessage("close");
      await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref())]);
      await worker.terminate();
      await db.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${sqliteDefaultAutocheckpoint}`).catch(() => undefined);
    },
  };
}

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
import { parseDatabaseUrl } from "./database-url";

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
  /** The WAL file is truncated to this size when it restarts. Default 16 MB. */
  journalSizeLimitBytes?: number;
  log?: Pick<Logger, "warn" | "error">;
  /** Told each checkpoint's mode, duration and WAL size in pages (a benchmark times them). */
  onCheckpoint?: (checkpoint: CheckpointTiming) => void;
}

/** One checkpoint as the worker ran it. */
export interface CheckpointTiming {
  mode: "PASSIVE" | "RESTART";
  ms: number;
  /** WAL frames before the checkpoint (`log` of the pragma's answer). */
  walPages: number;
  /** The checkpoint could not finish (another connection held what it needed). */
  busy: boolean;
}

const sqliteDefaultAutocheckpoint = 1000;

// Plain CommonJS, evaluated in the worker: no TypeScript loader needed there.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.betterSqlite3);
// No busy wait, ever: a RESTART that waited for readers would hold the write lock meanwhile, and
// the sidecar's next commit would wait behind it on the sidecar's own thread (seconds of event-loop
// lag under a long web read: bench/sqlite-lag.ts). Busy now means "try again at the next tick".
const db = new Database(workerData.file, { timeout: 0, fileMustExist: true });
// After a reset, the WAL file is cut back to this size instead of staying at its high-water mark.
db.pragma("journal_size_limit = " + workerData.journalSizeLimit);
const run = (mode) => {
  const started = performance.now();
  const [result] = db.pragma("wal_checkpoint(" + mode + ")");
  if (workerData.report) parentPort.postMessage({ timing: { mode, ms: performance.now() - started, walPages: result ? result.log : 0, busy: result ? result.busy === 1 : false } });
  return result;
};
const checkpoint = () => {
  try {
    const result = run("PASSIVE");
    // Under unbroken writing a PASSIVE checkpoint never catches up, and only a caught-up WAL is
    // restarted from its beginning: past the limit, RESTART makes writers wait for the last
    // frames (the ones PASSIVE has not copied yet) so the WAL starts over. While a reader still
    // needs older frames it answers busy at once (no busy timeout here) and is tried again later.
    if (result && result.log > workerData.maxWalPages) run("RESTART");
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
      journalSizeLimit: options.journalSizeLimitBytes ?? 16 * 1024 * 1024,
      betterSqlite3: require.resolve("better-sqlite3"),
      report: options.onCheckpoint !== undefined,
    },
  });
  let closing = false;
  const fallBack = (reason: unknown) => {
    if (closing) return;
    options.log?.error({ err: reason }, "WAL checkpointer stopped; SQLite checkpoints inline again");
    void db.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${sqliteDefaultAutocheckpoint}`).catch(() => undefined);
  };
  worker.on("message", (message: { error?: string; timing?: CheckpointTiming }) => {
    if (message.timing) options.onCheckpoint?.(message.timing);
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

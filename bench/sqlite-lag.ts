/**
 * `npm run bench -- sqlite-lag`: the sidecar's event-loop lag while SQLite's WAL is checkpointed
 * under a long-running web read (issue #14 item 8).
 *
 * This process plays the sidecar: the Prisma client of server/db, the WAL checkpointer worker
 * (server/db/wal-checkpointer.ts) exactly as server/sidecar/main.ts starts it, and the hub's
 * event writer appending CLI-sized events at a steady rate. A second process plays the web app
 * running a long report: it holds a read transaction open for `READ_HOLD_MS` at a time (its
 * snapshot pins the WAL: no checkpoint may copy past it), releases it briefly, and reads again.
 * `perf_hooks.monitorEventLoopDelay` measures the lag of this process's loop throughout.
 *
 *   sqlite-lag: writes=… lag_p99_ms=… lag_max_ms=… wal_max_mb=… checkpoint_ms=… restart_ms=…
 *
 * `checkpoint_ms` is the longest checkpoint the worker ran, `restart_ms` the longest RESTART (the
 * one kind that makes writers wait). Environment: SQLITE_LAG_SECONDS (default 12),
 * SQLITE_LAG_RATE (events per second, default 500), SQLITE_LAG_BYTES (payload, default 2000).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import pino from "pino";
import { createDb } from "@/server/db/client";
import { deployMigrations } from "@/server/db/migrations";
import { startWalCheckpointer, type CheckpointTiming } from "@/server/db/wal-checkpointer";
import { eventLogStoreOf, SessionEventWriter } from "@/server/sidecar/session/session-event-writer";

const READ_HOLD_MS = 4_000;

// The web app's long read, in its own process with its own connection (plain CommonJS).
const readerSource = `
const Database = require(process.argv[1]);
const db = new Database(process.argv[2], { readonly: true, timeout: 10000 });
const holdMs = Number(process.argv[3]);
let reads = 0;
const cycle = () => {
  db.exec("BEGIN");
  db.prepare('SELECT COUNT(*) AS n, SUM(LENGTH("payload")) AS bytes FROM "SessionEvent"').get();
  reads++;
  setTimeout(() => {
    db.exec("COMMIT");
    setTimeout(cycle, 100);
  }, holdMs);
};
cycle();
process.on("SIGTERM", () => { process.stdout.write(String(reads)); process.exit(0); });
`;

export default async function run(): Promise<void> {
  const seconds = Number(process.env.SQLITE_LAG_SECONDS ?? 12);
  const rate = Number(process.env.SQLITE_LAG_RATE ?? 500);
  const bytes = Number(process.env.SQLITE_LAG_BYTES ?? 2000);
  const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-sqlite-lag-"));
  const file = path.join(dir, "conduit.db");
  const url = `file:${file}`;
  await deployMigrations({ url });
  const db = createDb(url);
  const log = pino({ level: "silent" });
  const user = await db.user.create({ data: { email: "lag@example.test", name: "Lag" } });
  const workspace = await db.workspace.create({ data: { name: "Lag", slug: "lag", rootPath: dir } });
  const sessions = await Promise.all(
    Array.from({ length: 10 }, () =>
      db.session.create({ data: { workspaceId: workspace.id, createdById: user.id, status: "running" } }),
    ),
  );

  const checkpoints: CheckpointTiming[] = [];
  const checkpointer = await startWalCheckpointer(db, url, { log, onCheckpoint: (c) => checkpoints.push(c) });
  const writer = new SessionEventWriter(eventLogStoreOf(db), log);

  const require = createRequire(import.meta.url);
  // SQLITE_LAG_READER=0: no reader, the baseline
  const holdMs = process.env.SQLITE_LAG_READER === "0" ? 0 : READ_HOLD_MS;
  const reader = spawn(
    process.execPath,
    [
      "-e",
      holdMs > 0 ? readerSource : "setInterval(() => {}, 1000); process.on('SIGTERM', () => process.exit(0));",
      require.resolve("better-sqlite3"),
      file,
      String(holdMs),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let readerOut = "";
  reader.stdout.on("data", (c: Buffer) => (readerOut += c.toString()));
  await new Promise((r) => setTimeout(r, 300));

  const payload = JSON.stringify({
    type: "stream_event",
    event: { type: "content_block_delta", delta: { type: "text_delta", text: "x".repeat(bytes) } },
  });
  let writes = 0;
  let failures = 0;
  let walMax = 0;
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  const tickMs = 10;
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
  const started = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (Date.now() - started >= seconds * 1000) {
        clearInterval(timer);
        resolve();
        return;
      }
      for (let i = 0; i < perTick; i++) {
        const session = sessions[(writes + i) % sessions.length]!;
        writer.append({ sessionId: session.id, kind: "cli", payload, value: undefined }).then(
          () => void writes++,
          () => void failures++,
        );
      }
      try {
        walMax = Math.max(walMax, statSync(`${file}-wal`).size);
      } catch {
        // no WAL yet
      }
    }, tickMs);
  });
  await writer.close();
  lag.disable();
  reader.kill("SIGTERM");
  await new Promise((r) => reader.once("exit", r));
  await checkpointer.close();
  await db.$disconnect();
  rmSync(dir, { recursive: true, force: true });

  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  const longest = (mode?: string) =>
    Math.max(0, ...checkpoints.filter((c) => !mode || c.mode === mode).map((c) => c.ms));
  const restarts = checkpoints.filter((c) => c.mode === "RESTART");
  console.log(
    `sqlite-lag: ${seconds} s at ${rate} events/s of ${bytes} B, reader holding ${holdMs / 1000} s reads (${readerOut || "?"} reads); ` +
      `${checkpoints.length} checkpoints (${restarts.length} RESTART, ${checkpoints.filter((c) => c.busy).length} busy); write failures ${failures}; lag p50 ${ms(lag.percentile(50))} ms`,
  );
  console.log(
    `sqlite-lag: writes=${writes} lag_p99_ms=${ms(lag.percentile(99))} lag_max_ms=${ms(lag.max)} wal_max_mb=${(walMax / 1024 / 1024).toFixed(1)} checkpoint_ms=${longest().toFixed(1)} restart_ms=${longest("RESTART").toFixed(1)}`,
  );
}

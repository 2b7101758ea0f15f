/**
 * What starting CLIs costs the sidecar's event loop (every session's events wait behind it): a
 * burst of `SPAWN_STALL_BURST` children (default 20, as when sessions resume together), started
 * the way the session runner starts a CLI (`spawnCliProcess`), spawned by this process
 * (`spawnDetached`, the sidecar before 2026-12-04) and by the spawn helper
 * (`server/sidecar/process/spawn-helper.ts`), interleaved round by round. This process holds
 * `SPAWN_STALL_RSS_MB` (default 350) of memory, as a working sidecar does: a spawn copies the
 * spawning process's page tables. Each spawn call is timed (the loop can do nothing else while it
 * runs), and the longest gap between the ticks of a 1 ms timer while a burst starts is reported
 * beside it; each child is a shell that answers a line on stdin (so its pipes are proven to
 * work), then all are stopped.
 *
 * Last line: `spawn-stall: rss_mb=… burst=… here_spawn_ms=… helper_spawn_ms=… here_stall_max_ms=… helper_stall_max_ms=… here_burst_ms=… helper_burst_ms=…`
 * (spawn: median ms of one spawn call; stall: the longest timer gap over all rounds; burst: median
 * ms from the first spawn to every child answering).
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  spawnCliProcess,
  spawnDetached,
  type CliProcess,
  type SpawnFunction,
} from "../server/sidecar/process/cli-process";
import { createSpawnHelper } from "../server/sidecar/process/spawn-helper";

const ROUNDS = Number(process.env.SPAWN_STALL_ROUNDS ?? 8);
const BURST = Number(process.env.SPAWN_STALL_BURST ?? 20);
const RSS_MB = Number(process.env.SPAWN_STALL_RSS_MB ?? 350);

const config = { stdinGraceMs: 500, termGraceMs: 1_000, killWaitMs: 2_000, exitDrainMs: 200, maxStderrLineBytes: 4096 };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Starts `BURST` children with `spawn`, each answering one line; resolves once all answered. */
async function burst(spawn: SpawnFunction): Promise<CliProcess[]> {
  const answered: Promise<void>[] = [];
  const children = await Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      let answer!: () => void;
      answered.push(new Promise<void>((resolve) => (answer = resolve)));
      const child = await spawnCliProcess({
        cliPath: "/bin/sh",
        args: ["-c", 'read line; echo "$line"; cat >/dev/null'],
        cwd: "/tmp",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        config,
        spawn,
        onStdout: (chunk) => {
          if (Buffer.from(chunk).toString().includes(`child ${i}`)) answer();
        },
        onStderrLine: () => undefined,
        onExit: () => undefined,
      });
      child.write(`child ${i}\n`);
      return child;
    }),
  );
  await Promise.all(answered);
  return children;
}

export async function run(): Promise<void> {
  // memory the kernel must map into each child, as in a working sidecar
  const ballast: Buffer[] = [];
  for (let i = 0; i < RSS_MB; i++) ballast.push(Buffer.alloc(1024 * 1024, i));
  const helper = createSpawnHelper();
  try {
    const ways: [string, SpawnFunction][] = [
      ["here", spawnDetached],
      ["helper", helper.spawn],
    ];
    const stats = new Map(ways.map(([name]) => [name, { ms: [] as number[], stall: 0, spawnMs: [] as number[] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, spawn] of ways) {
        const spawnMs: number[] = [];
        const timed: SpawnFunction = (file, args, options) => {
          const t0 = performance.now();
          try {
            return spawn(file, args, options);
          } finally {
            spawnMs.push(performance.now() - t0);
          }
        };
        // a 1 ms timer's longest gap: how long the loop could not run anything else
        let last = performance.now();
        let stall = 0;
        const ticker = setInterval(() => {
          const now = performance.now();
          stall = Math.max(stall, now - last);
          last = now;
        }, 1);
        await new Promise((r) => setTimeout(r, 20));
        const started = performance.now();
        const children = await burst(timed);
        const ms = performance.now() - started;
        clearInterval(ticker);
        await Promise.all(children.map((child) => child.stop()));
        // the first round of each way warms it up (the helper's start)
        if (round === 0) continue;
        const s = stats.get(name)!;
        s.ms.push(ms);
        s.stall = Math.max(s.stall, stall);
        s.spawnMs.push(...spawnMs);
      }
    }
    const rss = process.memoryUsage().rss / 1e6;
    const here = stats.get("here")!;
    const viaHelper = stats.get("helper")!;
    console.log(
      `spawn-stall: ${ROUNDS - 1} rounds each way of ${BURST} children started together, this process at ${rss.toFixed(0)} MB`,
    );
    for (const [name, s] of [
      ["spawned here", here],
      ["spawned by the spawn helper", viaHelper],
    ] as const) {
      console.log(
        `  ${name.padEnd(28)} a spawn call ${median(s.spawnMs).toFixed(2)} ms (median), the loop's longest stall ${s.stall.toFixed(1)} ms; ` +
          `${median(s.ms).toFixed(1)} ms to every child answering`,
      );
    }
    console.log(
      `spawn-stall: rss_mb=${rss.toFixed(0)} burst=${BURST} here_spawn_ms=${median(here.spawnMs).toFixed(2)} helper_spawn_ms=${median(viaHelper.spawnMs).toFixed(2)} ` +
        `here_stall_max_ms=${here.stall.toFixed(1)} helper_stall_max_ms=${viaHelper.stall.toFixed(1)} ` +
        `here_burst_ms=${median(here.ms).toFixed(1)} helper_burst_ms=${median(viaHelper.ms).toFixed(1)}`,
    );
    // the ballast is used here, so it stays allocated through every round
    ballast.length = 0;
  } finally {
    helper.close();
  }
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

/**
 * What a git run costs the sidecar's event loop (every session's events wait behind it): turn
 * snapshots of a small workspace (`ShadowRepo.snapshot` after a file changed, then `diff`), with
 * git spawned by this process (`execFileHere`, the sidecar before 2026-12-02) and by the exec
 * helper (`server/sidecar/process/exec-helper.ts`), interleaved round by round. This process holds
 * `EXEC_STALL_RSS_MB` (default 350) of memory, as a working sidecar does: a spawn copies the
 * spawning process's page tables, so its cost grows with that. The loop's delay is sampled every
 * millisecond (`monitorEventLoopDelay`) while the snapshots run.
 *
 * Last line: `exec-stall: rss_mb=… here_delay_max_ms=… helper_delay_max_ms=… here_delay_p99_ms=… helper_delay_p99_ms=… here_ms=… helper_ms=…`
 * (delays over all rounds of each way; times: median ms per round).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { ShadowRepo } from "../server/workspace-changes/shadow-repo";
import { execFileHere, setExecFileRunner, type ExecFileRunner } from "../server/workspace-fs/exec-file";
import { createExecHelper } from "../server/sidecar/process/exec-helper";

const ROUNDS = Number(process.env.EXEC_STALL_ROUNDS ?? 12);
const RSS_MB = Number(process.env.EXEC_STALL_RSS_MB ?? 350);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export async function run(): Promise<void> {
  // memory the kernel must map into each child, as in a working sidecar
  const ballast: Buffer[] = [];
  for (let i = 0; i < RSS_MB; i++) ballast.push(Buffer.alloc(1024 * 1024, i));
  const dir = await mkdtemp(path.join(os.tmpdir(), "conduit-exec-stall-"));
  const helper = createExecHelper();
  try {
    const workTree = path.join(dir, "work");
    await mkdir(workTree, { recursive: true });
    for (let i = 0; i < 20; i++) await writeFile(path.join(workTree, `file-${i}.txt`), `line ${i}\n`.repeat(50));
    const repo = new ShadowRepo(path.join(dir, "shadow.git"), workTree);
    await repo.snapshot("first");
    const ways: [string, ExecFileRunner][] = [
      ["here", execFileHere],
      ["helper", helper.run],
    ];
    const stats = new Map(ways.map(([name]) => [name, { ms: [] as number[], max: 0, p99: [] as number[] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, runner] of ways) {
        setExecFileRunner(runner);
        await writeFile(path.join(workTree, `file-${round % 20}.txt`), `changed in round ${round} by ${name}\n`);
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const started = performance.now();
        const before = await repo.snapshot(`before ${round} ${name}`);
        await writeFile(path.join(workTree, `new-${round}-${name}.txt`), "new\n");
        const after = await repo.snapshot(`after ${round} ${name}`);
        await repo.diff(before, after);
        const ms = performance.now() - started;
        delay.disable();
        // the first round of each way warms it up (the helper's start)
        if (round === 0) continue;
        const s = stats.get(name)!;
        s.ms.push(ms);
        s.max = Math.max(s.max, delay.max / 1e6);
        s.p99.push(delay.percentile(99) / 1e6);
      }
    }
    setExecFileRunner(execFileHere);
    const rss = process.memoryUsage().rss / 1e6;
    const here = stats.get("here")!;
    const viaHelper = stats.get("helper")!;
    console.log(`exec-stall: ${ROUNDS - 1} rounds each way (two snapshots and a diff), this process at ${rss.toFixed(0)} MB`);
    for (const [name, s] of [["spawned here", here], ["spawned by the exec helper", viaHelper]] as const) {
      console.log(`  ${name.padEnd(28)} loop delay max ${s.max.toFixed(1)} ms, p99 (median of rounds) ${median(s.p99).toFixed(1)} ms; ${median(s.ms).toFixed(1)} ms per round`);
    }
    console.log(
      `exec-stall: rss_mb=${rss.toFixed(0)} here_delay_max_ms=${here.max.toFixed(1)} helper_delay_max_ms=${viaHelper.max.toFixed(1)} ` +
        `here_delay_p99_ms=${median(here.p99).toFixed(1)} helper_delay_p99_ms=${median(viaHelper.p99).toFixed(1)} here_ms=${median(here.ms).toFixed(1)} helper_ms=${median(viaHelper.ms).toFixed(1)}`,
    );
    // the ballast is used here, so it stays allocated through every round
    ballast.length = 0;
  } finally {
    helper.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export default run;

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

/**
 * What a turn's snapshots cost the sidecar's event loop (every session's events wait behind it):
 * turn snapshots of a small workspace (a snapshot after a file changed, another after a new file,
 * then their diff), as the sidecar takes them: in the workspace's door (`server/workspace-agent`),
 * which spawns git itself, so this process only writes a request line and reads the answer. Two
 * ways, interleaved round by round: the door as CONDUIT_SANDBOX=auto starts it (`door`: bubblewrap
 * when it works here) and unsandboxed (`plain`, CONDUIT_SANDBOX=off). Until 2026-12 the sidecar
 * spawned git itself (through its exec helper from 2026-12-02): a spawn blocks the spawning
 * thread while the kernel copies its page tables, which is what this bench was written to see.
 * This process holds `EXEC_STALL_RSS_MB` (default 350) of memory, as a working sidecar does. The
 * loop's delay is sampled every millisecond (`monitorEventLoopDelay`) while the snapshots run.
 *
 * Last line: `exec-stall: rss_mb=… door_delay_max_ms=… plain_delay_max_ms=… door_delay_p99_ms=… plain_delay_p99_ms=… door_ms=… plain_ms=… door_mode=…`
 * (delays over all rounds of each way; times: median ms per round).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { createDoorLauncher, DoorPool, doorPoolDefaults, filesScope } from "../server/workspace-agent";

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
  const pools = {
    door: new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting: "auto" }) }),
    plain: new DoorPool({ ...doorPoolDefaults, launcher: () => createDoorLauncher({ setting: "off" }) }),
  };
  try {
    const workTree = path.join(dir, "work");
    await mkdir(workTree, { recursive: true });
    for (let i = 0; i < 20; i++) await writeFile(path.join(workTree, `file-${i}.txt`), `line ${i}\n`.repeat(50));
    const ways = (["door", "plain"] as const).map((name) => {
      // one workspace (and shadow folder) per way: each door is its repository's only writer
      const id = `stall-${name}`;
      const scope = filesScope({ id, rootPath: workTree }, path.join(dir, `data-${name}`));
      const repo = { repoKey: id, workTree };
      return {
        name,
        snapshot: async (message: string) => (await pools[name].call(await scope, "changes.snapshot", { ...repo, message, watch: {} })).commit,
        diff: async (from: string, to: string) => pools[name].call(await scope, "changes.diff", { repoKey: id, from, to }),
      };
    });
    for (const way of ways) await way.snapshot("first");
    const stats = new Map(ways.map(({ name }) => [name, { ms: [] as number[], max: 0, p99: [] as number[] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const way of ways) {
        await writeFile(path.join(workTree, `file-${round % 20}.txt`), `changed in round ${round} by ${way.name}\n`);
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const started = performance.now();
        const before = await way.snapshot(`before ${round} ${way.name}`);
        await writeFile(path.join(workTree, `new-${round}-${way.name}.txt`), "new\n");
        const after = await way.snapshot(`after ${round} ${way.name}`);
        await way.diff(before, after);
        const ms = performance.now() - started;
        delay.disable();
        // the first round of each way warms it up
        if (round === 0) continue;
        const s = stats.get(way.name)!;
        s.ms.push(ms);
        s.max = Math.max(s.max, delay.max / 1e6);
        s.p99.push(delay.percentile(99) / 1e6);
      }
    }
    const rss = process.memoryUsage().rss / 1e6;
    const door = stats.get("door")!;
    const plain = stats.get("plain")!;
    const mode = await pools.door.mode();
    console.log(`exec-stall: ${ROUNDS - 1} rounds each way (two snapshots and a diff, in a workspace door), this process at ${rss.toFixed(0)} MB`);
    for (const [name, s] of [[`door (${mode})`, door], ["door (no sandbox)", plain]] as const) {
      console.log(`  ${name.padEnd(28)} loop delay max ${s.max.toFixed(1)} ms, p99 (median of rounds) ${median(s.p99).toFixed(1)} ms; ${median(s.ms).toFixed(1)} ms per round`);
    }
    console.log(
      `exec-stall: rss_mb=${rss.toFixed(0)} door_delay_max_ms=${door.max.toFixed(1)} plain_delay_max_ms=${plain.max.toFixed(1)} ` +
        `door_delay_p99_ms=${median(door.p99).toFixed(1)} plain_delay_p99_ms=${median(plain.p99).toFixed(1)} door_ms=${median(door.ms).toFixed(1)} plain_ms=${median(plain.ms).toFixed(1)} door_mode=${mode}`,
    );
    // the ballast is used here, so it stays allocated through every round
    ballast.length = 0;
  } finally {
    pools.door.close();
    pools.plain.close();
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

/**
 * The workspace file layer on a generated workspace of 20,000 files plus a 100,000-entry
 * `node_modules`: the tree's first level, a name search (which must skip node_modules) and
 * opening a 5 MB text file (read, UTF-8 check, sha256), and the Changes capture's snapshots of
 * the workspace's shadow repository (`server/workspace-changes`, through the work tree's watcher
 * as the sidecar takes them): one after a turn that changed 10 files, one after a turn that
 * changed nothing; the same by scanning (no watcher) on the line before, with the ratios. p50 of
 * repeated runs, warm page cache.
 *
 * Everything people wait for goes through the workspace door (`server/workspace-agent`: a
 * sandboxed process per workspace, bubblewrap when it works here), as the web app and the
 * sidecar do: the headline figures are the door's. The same reads run in this process too, on
 * the line before, so the door's cost shows side by side; `door_roundtrip_p50_ms` is an empty
 * request's round trip to a warm door.
 * Last line: `files: tree_first_level_ms=… name_search_ms=… open_5mb_ms=… snapshot_turn_ms=… snapshot_noop_ms=… door_roundtrip_p50_ms=…`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readWorkspaceFile } from "@/server/workspace-fs/file-content";
import { listWorkspaceDirectory } from "@/server/workspace-fs/list-directory";
import { searchWorkspaceNames } from "@/server/workspace-fs/search-names";
import type { WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { createDoorLauncher, DoorPool, type DoorScope } from "@/server/workspace-agent";

async function generate(root: string): Promise<void> {
  for (let p = 0; p < 20; p++) {
    for (let m = 0; m < 10; m++) {
      const dir = path.join(root, "src", `pkg-${p}`, `mod-${m}`);
      await mkdir(dir, { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(path.join(dir, `file-${f}.ts`), `export const v${f} = ${f};\n`)));
    }
  }
  for (let n = 0; n < 1000; n++) {
    const dir = path.join(root, "node_modules", `dep-${n}`);
    await mkdir(dir, { recursive: true });
    await Promise.all(Array.from({ length: 99 }, (_, f) => writeFile(path.join(dir, `index-${f}.js`), "")));
  }
  await writeFile(path.join(root, ".gitignore"), "dist/\n*.log\n");
  await writeFile(path.join(root, "README.md"), "# bench\n");
  await writeFile(path.join(root, "src", "pkg-19", "mod-9", "needle-target.ts"), "x\n");
  const line = "const value = 'the quick brown fox jumps over the lazy dog';\n";
  await writeFile(path.join(root, "big.ts"), line.repeat(Math.floor((5 * 1024 * 1024 - 1024) / line.length)));
}

async function p50(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  await fn();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export default async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "conduit-bench-files-"));
  try {
    const t = performance.now();
    await generate(dir);
    console.log(`generated 20,000 files + 100,000 in node_modules in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const ws: WorkspaceRoot = { root: dir };
    // in this process (the layer alone), for the side-by-side line
    const plainTree = await p50(30, () => listWorkspaceDirectory(ws, ""));
    const plainSearch = await p50(15, () => searchWorkspaceNames(ws, "needle-target"));
    const plainOpen = await p50(15, () => readWorkspaceFile(ws, "big.ts"));

    const pool = new DoorPool({ launcher: () => createDoorLauncher({ setting: "auto" }), idleMs: 600_000 });
    const mode = await pool.mode();
    // The shadow folder lies outside the workspace, as DATA_DIR/shadow/<workspaceId> does; its name is the repo key.
    const scope: DoorScope = { purpose: "files", workspace: { root: dir, excluded: [] }, shadowDir: `${dir}-shadow/ws` };
    await mkdir(scope.shadowDir!, { recursive: true });
    const started = performance.now();
    await pool.call(scope, "door.ping", {});
    const coldMs = performance.now() - started;
    const roundtrip = await p50(200, () => pool.call(scope, "door.ping", {}));
    const tree = await p50(30, () => pool.call(scope, "files.list", { path: "" }));
    let found = 0;
    const search = await p50(15, async () => {
      found = (await pool.call(scope, "files.search", { query: "needle-target" })).matches.length;
    });
    if (found !== 1) throw new Error(`the search found ${found} matches, expected 1`);
    const open5 = await p50(15, async () => {
      const r = await pool.call(scope, "files.read", { path: "big.ts" });
      if (r.kind !== "text") throw new Error(`big.ts read as ${r.kind}`);
    });
    console.log(
      `door (${mode}): cold start ${coldMs.toFixed(0)} ms; in this process vs through the door: ` +
        `tree ${plainTree.toFixed(2)} / ${tree.toFixed(2)} ms, search ${plainSearch.toFixed(1)} / ${search.toFixed(1)} ms, open 5 MB ${plainOpen.toFixed(1)} / ${open5.toFixed(1)} ms`,
    );
    // Snapshots as the sidecar takes them, in the door: through a watcher of the work tree
    // (change-watcher.ts), and a second repository without a watcher that scans the same tree
    // each time (the fallback, and the figures before the watcher), in the same rounds.
    const watched = { repoKey: "ws", workTree: dir, watch: { readyWaitMs: 60_000 } } as const;
    const scanned = { repoKey: "ws-wt-scan", workTree: dir, watch: false } as const;
    const first = performance.now();
    await pool.call(scope, "changes.snapshot", { ...watched, message: "baseline" });
    console.log(`first snapshot (hashes every file) in ${((performance.now() - first) / 1000).toFixed(1)} s`);
    await pool.call(scope, "changes.snapshot", { ...scanned, message: "baseline" });
    let round = 0;
    const turnTimes: number[] = [];
    const scanTurnTimes: number[] = [];
    const ways = new Map<string, number>();
    for (let i = 0; i < 16; i++) {
      round += 1;
      // a turn that changed 10 files: modified in place across packages
      await Promise.all(
        Array.from({ length: 10 }, (_, f) => writeFile(path.join(dir, "src", `pkg-${f}`, `mod-${f % 10}`, `file-${f}.ts`), `export const v${f} = ${round};\n`)),
      );
      const t0 = performance.now();
      const { way } = await pool.call(scope, "changes.snapshot", { ...watched, message: `turn ${round}` });
      const t1 = performance.now();
      await pool.call(scope, "changes.snapshot", { ...scanned, message: `turn ${round}` });
      if (i > 0) {
        turnTimes.push(t1 - t0);
        scanTurnTimes.push(performance.now() - t1);
        ways.set(way, (ways.get(way) ?? 0) + 1);
      }
    }
    const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
    const turn = median(turnTimes);
    const scanTurn = median(scanTurnTimes);
    let noopWay = "";
    const noop = await p50(30, async () => {
      noopWay = (await pool.call(scope, "changes.snapshot", { ...watched, message: "noop" })).way;
    });
    const scanNoop = await p50(30, () => pool.call(scope, "changes.snapshot", { ...scanned, message: "noop" }));
    pool.close();
    console.log(
      `snapshots by watched paths (turns: ${[...ways].map(([w, n]) => `${n} ${w}`).join(", ")}; noop: ${noopWay}) vs by scanning, same rounds: ` +
        `scan_turn_ms=${scanTurn.toFixed(1)} scan_noop_ms=${scanNoop.toFixed(1)} turn_ratio=${(scanTurn / turn).toFixed(1)} noop_ratio=${(scanNoop / noop).toFixed(0)}`,
    );
    console.log(
      `files: tree_first_level_ms=${tree.toFixed(2)} name_search_ms=${search.toFixed(1)} open_5mb_ms=${open5.toFixed(1)} snapshot_turn_ms=${turn.toFixed(1)} snapshot_noop_ms=${noop.toFixed(2)} door_roundtrip_p50_ms=${roundtrip.toFixed(3)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}-shadow`, { recursive: true, force: true });
  }
}

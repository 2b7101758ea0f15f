/**
 * The workspace file layer on a generated workspace of 20,000 files plus a 100,000-entry
 * `node_modules`: the tree's first level, a name search (which must skip node_modules) and
 * opening a 5 MB text file (read, UTF-8 check, sha256), and the Changes capture's snapshots of
 * the workspace's shadow repository (`server/workspace-changes`, through the work tree's watcher
 * as the sidecar takes them): one after a turn that changed 10 files, one after a turn that
 * changed nothing; the same by scanning (no watcher) on the line before, with the ratios. p50 of
 * repeated runs, warm page cache.
 * Last line: `files: tree_first_level_ms=… name_search_ms=… open_5mb_ms=… snapshot_turn_ms=… snapshot_noop_ms=…`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readWorkspaceFile } from "@/server/workspace-fs/file-content";
import { listWorkspaceDirectory } from "@/server/workspace-fs/list-directory";
import { searchWorkspaceNames } from "@/server/workspace-fs/search-names";
import type { WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
import { WorkTreeWatchers } from "@/server/workspace-changes/change-watcher";
import { ShadowRepo } from "@/server/workspace-changes/shadow-repo";

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
    const tree = await p50(30, () => listWorkspaceDirectory(ws, ""));
    let found = 0;
    const search = await p50(15, async () => {
      const r = await searchWorkspaceNames(ws, "needle-target", { maxResults: 200, maxDirectories: 1_000_000, budgetMs: 60_000 });
      found = r.matches.length;
    });
    if (found !== 1) throw new Error(`the search found ${found} matches, expected 1`);
    const open5 = await p50(15, async () => {
      const r = await readWorkspaceFile(ws, "big.ts");
      if (r.kind !== "text") throw new Error(`big.ts read as ${r.kind}`);
    });
    // The shadow repository lives outside the workspace, as DATA_DIR/shadow/<id>.git does. It
    // snapshots as the sidecar's does, through a watcher of the work tree (change-watcher.ts);
    // a second one without a watcher scans the same tree each time (the fallback, and the figures
    // before the watcher), measured in the same rounds for the ratio.
    const watchers = new WorkTreeWatchers({ readyWaitMs: 60_000 });
    const repo = new ShadowRepo(path.join(`${dir}-shadow`, "ws.git"), dir, false, watchers);
    const scanning = new ShadowRepo(path.join(`${dir}-shadow`, "scan.git"), dir);
    const first = performance.now();
    await repo.snapshot("baseline");
    console.log(`first snapshot (hashes every file) in ${((performance.now() - first) / 1000).toFixed(1)} s`);
    await scanning.snapshot("baseline");
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
      await repo.snapshot(`turn ${round}`);
      const t1 = performance.now();
      await scanning.snapshot(`turn ${round}`);
      if (i > 0) {
        turnTimes.push(t1 - t0);
        scanTurnTimes.push(performance.now() - t1);
        ways.set(repo.lastWay ?? "none", (ways.get(repo.lastWay ?? "none") ?? 0) + 1);
      }
    }
    const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
    const turn = median(turnTimes);
    const scanTurn = median(scanTurnTimes);
    const noop = await p50(30, () => repo.snapshot("noop"));
    const noopWay = repo.lastWay;
    const scanNoop = await p50(30, () => scanning.snapshot("noop"));
    watchers.close();
    console.log(
      `snapshots by watched paths (turns: ${[...ways].map(([w, n]) => `${n} ${w}`).join(", ")}; noop: ${noopWay}) vs by scanning, same rounds: ` +
        `scan_turn_ms=${scanTurn.toFixed(1)} scan_noop_ms=${scanNoop.toFixed(1)} turn_ratio=${(scanTurn / turn).toFixed(1)} noop_ratio=${(scanNoop / noop).toFixed(0)}`,
    );
    console.log(
      `files: tree_first_level_ms=${tree.toFixed(2)} name_search_ms=${search.toFixed(1)} open_5mb_ms=${open5.toFixed(1)} snapshot_turn_ms=${turn.toFixed(1)} snapshot_noop_ms=${noop.toFixed(2)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}-shadow`, { recursive: true, force: true });
  }
}

/**
 * The workspace file layer on a generated workspace of 20,000 files plus a 100,000-entry
 * `node_modules`: the tree's first level, a name search (which must skip node_modules) and
 * opening a 5 MB text file (read, UTF-8 check, sha256), and the Changes capture's snapshots of
 * the workspace's shadow repository (`server/workspace-changes`): one after a turn that changed
 * 10 files, one after a turn that changed nothing. p50 of repeated runs, warm page cache.
 * Last line: `files: tree_first_level_ms=… name_search_ms=… open_5mb_ms=… snapshot_turn_ms=… snapshot_noop_ms=…`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readWorkspaceFile } from "@/server/workspace-fs/file-content";
import { listWorkspaceDirectory } from "@/server/workspace-fs/list-directory";
import { searchWorkspaceNames } from "@/server/workspace-fs/search-names";
import type { WorkspaceRoot } from "@/server/workspace-fs/workspace-path";
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
    // the shadow repository lives outside the workspace, as DATA_DIR/shadow/<id>.git does
    const repo = new ShadowRepo(path.join(`${dir}-shadow`, "ws.git"), dir);
    const first = performance.now();
    await repo.snapshot("baseline");
    console.log(`first snapshot (hashes every file) in ${((performance.now() - first) / 1000).toFixed(1)} s`);
    let round = 0;
    const turnTimes: number[] = [];
    for (let i = 0; i < 16; i++) {
      round += 1;
      // a turn that changed 10 files: modified in place across packages
      await Promise.all(
        Array.from({ length: 10 }, (_, f) => writeFile(path.join(dir, "src", `pkg-${f}`, `mod-${f % 10}`, `file-${f}.ts`), `export const v${f} = ${round};\n`)),
      );
      const t0 = performance.now();
      await repo.snapshot(`turn ${round}`);
      if (i > 0) turnTimes.push(performance.now() - t0);
    }
    turnTimes.sort((a, b) => a - b);
    const turn = turnTimes[Math.floor(turnTimes.length / 2)]!;
    const noop = await p50(30, () => repo.snapshot("noop"));
    console.log(
      `files: tree_first_level_ms=${tree.toFixed(2)} name_search_ms=${search.toFixed(1)} open_5mb_ms=${open5.toFixed(1)} snapshot_turn_ms=${turn.toFixed(1)} snapshot_noop_ms=${noop.toFixed(1)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}-shadow`, { recursive: true, force: true });
  }
}

// Snapshots from watched paths (change-watcher.ts) against real git, real files and real inotify:
// after random adds, modifies, deletes and renames (nested new folders, folder deletes, modes,
// symlinks, .gitignore edits, heavy folders) a watched snapshot has exactly the tree a full scan
// of the same work tree has; a watcher that overflowed, went idle, hit its folder limit or was
// closed makes the next snapshot scan; a write right before a snapshot is in it.
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WorkTreeWatchers } from "./change-watcher";
import { ShadowRepo } from "./shadow-repo";
import { until } from "@/test/until";
import { seededRandom as prng } from "@/test/seeded-random";

const run = promisify(execFile);


/** Every file and folder under `root` (relative), skipping .git. */
async function walk(root: string, rel = ""): Promise<{ files: string[]; dirs: string[] }> {
  const files: string[] = [];
  const dirs: string[] = [];
  const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.name === ".git") continue;
    if (e.isDirectory()) {
      dirs.push(p);
      const sub = await walk(root, p);
      files.push(...sub.files);
      dirs.push(...sub.dirs);
    } else files.push(p);
  }
  return { files, dirs };
}

describe("snapshots from watched paths", () => {
  let dir: string;
  let ws: string;
  let watchers: WorkTreeWatchers;
  let watched: ShadowRepo;
  let scanned: ShadowRepo;

  const treeOf = async (repo: ShadowRepo, commit: string) => (await repo.git(["rev-parse", `${commit}^{tree}`])).stdout.toString().trim();
  const filesOf = async (repo: ShadowRepo, commit: string) =>
    (await repo.git(["ls-tree", "-r", "-z", "--name-only", commit])).stdout.toString().split("\0").filter(Boolean);
  /** Snapshots with both repositories; their trees must be the same. */
  async function both(): Promise<{ commit: string; way: ShadowRepo["lastWay"] }> {
    const commit = await watched.snapshot();
    const way = watched.lastWay;
    const reference = await scanned.snapshot();
    if ((await treeOf(watched, commit)) !== (await treeOf(scanned, reference))) {
      const list = async (repo: ShadowRepo, c: string) => (await repo.git(["ls-tree", "-r", c])).stdout.toString();
      expect(await list(watched, commit), `watched (${way}) and scanned trees differ`).toBe(await list(scanned, reference));
    }
    return { commit, way };
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "conduit-watch-"));
    ws = path.join(dir, "ws");
    await mkdir(path.join(ws, "src", "a"), { recursive: true });
    await writeFile(path.join(ws, "src", "a", "one.ts"), "one\n");
    await writeFile(path.join(ws, "README.md"), "# ws\n");
    await writeFile(path.join(ws, ".gitignore"), "*.log\n");
    await mkdir(path.join(ws, "node_modules", "dep"), { recursive: true });
    await writeFile(path.join(ws, "node_modules", "dep", "index.js"), "1\n");
    watchers = new WorkTreeWatchers({ readyWaitMs: 5_000 });
    watched = new ShadowRepo(path.join(dir, "watched.git"), ws, false, watchers);
    scanned = new ShadowRepo(path.join(dir, "scanned.git"), ws);
  });
  afterEach(async () => {
    watchers.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("equal a full scan after random adds, modifies, deletes and renames", async () => {
    const seed = Number(process.env.WATCH_SEED ?? 20261201);
    const random = prng(seed);
    const pick = <T,>(list: T[]): T | undefined => (list.length === 0 ? undefined : list[Math.floor(random() * list.length)]);
    const name = () => `n${Math.floor(random() * 1000)}`;
    const ways: string[] = [];
    const first = await both();
    expect(first.way).toBe("scan");
    for (let round = 0; round < 40; round++) {
      const { files, dirs } = await walk(ws);
      const ops = 1 + Math.floor(random() * 4);
      for (let i = 0; i < ops; i++) {
        const choice = Math.floor(random() * 14);
        const someDir = () => pick(dirs.filter((d) => !d.startsWith("node_modules"))) ?? "";
        const someFile = () => pick(files.filter((f) => !f.startsWith("node_modules")));
        try {
          switch (choice) {
            case 0: {
              // a new file in nested new folders
              const sub = path.join(someDir(), name(), name());
              await mkdir(path.join(ws, sub), { recursive: true });
              await writeFile(path.join(ws, sub, `${name()}.txt`), `new ${round}\n`);
              break;
            }
            case 1:
            case 2: {
              const f = someFile();
              if (f) await writeFile(path.join(ws, f), `changed ${round} ${random()}\n`);
              break;
            }
            case 3: {
              const f = someFile();
              if (f) await rm(path.join(ws, f), { force: true });
              break;
            }
            case 4: {
              const f = someFile();
              if (f) await rename(path.join(ws, f), path.join(ws, someDir(), `${name()}.moved`));
              break;
            }
            case 5: {
              const d = someDir();
              if (d) await rename(path.join(ws, d), path.join(ws, path.dirname(d), `${name()}-renamed`));
              break;
            }
            case 6: {
              const d = someDir();
              if (d) await rm(path.join(ws, d), { recursive: true, force: true });
              break;
            }
            case 7: {
              const f = someFile();
              if (f) await chmod(path.join(ws, f), (await stat(path.join(ws, f))).mode & 0o100 ? 0o644 : 0o755);
              break;
            }
            case 8:
              await symlink(`target-${name()}`, path.join(ws, someDir(), `${name()}.link`));
              break;
            case 9: {
              // a file replaced by a folder of the same name
              const f = someFile();
              if (f) {
                await rm(path.join(ws, f), { force: true });
                await mkdir(path.join(ws, f));
                await writeFile(path.join(ws, f, "inside.txt"), "inside\n");
              }
              break;
            }
            case 10: {
              // ignored files, heavy folders: never snapshotted
              const d = someDir();
              await writeFile(path.join(ws, d, `${name()}.log`), "noise\n");
              await mkdir(path.join(ws, d, "node_modules", "x"), { recursive: true });
              await writeFile(path.join(ws, d, "node_modules", "x", "i.js"), "x\n");
              break;
            }
            case 11: {
              // a .gitignore that un-ignores (or ignores) files that did not change themselves
              const d = someDir();
              const ignore = path.join(ws, d, ".gitignore");
              const on = random() < 0.5;
              await writeFile(ignore, on ? "*.txt\n" : "# nothing\n");
              break;
            }
            case 12:
              // an empty folder (git keeps none) and one that gets a file right after
              await mkdir(path.join(ws, someDir(), name()), { recursive: true });
              break;
            default: {
              // many files in a new folder, written as fast as possible, the snapshot right after
              const sub = path.join(someDir(), `burst-${name()}`);
              await mkdir(path.join(ws, sub), { recursive: true });
              for (let k = 0; k < 30; k++) writeFileSync(path.join(ws, sub, `f${k}.txt`), `${k}\n`);
            }
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          // a random operation on a path an earlier one of this round removed or occupied
          if (code !== "ENOENT" && code !== "EEXIST" && code !== "ENOTDIR" && code !== "EISDIR" && code !== "ENOTEMPTY" && code !== "EINVAL") throw err;
        }
      }
      // no await between the last write and the snapshot: its events must still be counted
      ways.push((await both()).way ?? "none");
    }
    // the watcher did the work: at most the first snapshot after a root .gitignore edit scans
    const scans = ways.filter((w) => w === "scan").length;
    expect(ways.filter((w) => w === "paths" || w === "unchanged").length, `seed ${seed}: ${ways.join(",")}`).toBeGreaterThan(30);
    expect(scans, `seed ${seed}: ${ways.join(",")}`).toBeLessThan(10);
  });

  it("a snapshot with nothing changed runs no git; a write right before a snapshot is in it", async () => {
    const base = await both();
    const calls: string[] = [];
    const git = watched.git.bind(watched);
    watched.git = (args, options) => {
      calls.push(args.join(" "));
      return git(args, options);
    };
    expect(await watched.snapshot()).toBe(base.commit);
    expect(watched.lastWay).toBe("unchanged");
    expect(calls).toEqual([]);
    // written by a child process, in a folder made just now, and by this process synchronously
    // right before the snapshot (its event is not even read yet)
    await run("sh", ["-c", "mkdir -p fresh/deeper && echo child > fresh/deeper/c.txt && echo two > src/a/two.ts"], { cwd: ws });
    writeFileSync(path.join(ws, "src", "a", "one.ts"), "ONE\n");
    const next = await watched.snapshot();
    expect(watched.lastWay).toBe("paths");
    expect(calls.some((c) => c.startsWith("status") || c.includes(" -- ."))).toBe(false);
    expect(await filesOf(watched, next)).toEqual([".gitignore", "README.md", "fresh/deeper/c.txt", "src/a/one.ts", "src/a/two.ts"]);
    expect((await watched.read(next, "src/a/one.ts"))?.toString()).toBe("ONE\n");
    // a synchronous write and the snapshot right after it: the event is still in the kernel's queue
    writeFileSync(path.join(ws, "src", "a", "one.ts"), "ONE AGAIN\n");
    const sync = await watched.snapshot();
    expect(watched.lastWay).toBe("paths");
    expect((await watched.read(sync, "src/a/one.ts"))?.toString()).toBe("ONE AGAIN\n");
    // the new folder is watched now: a later write in it is seen
    await until(() => (watchers.watcherOf(ws)?.watchedFolders ?? 0) >= 4, 5_000, "fresh folders watched");
    await writeFile(path.join(ws, "fresh", "deeper", "c.txt"), "again\n");
    const again = await watched.snapshot();
    expect(watched.lastWay).toBe("paths");
    expect((await watched.read(again, "fresh/deeper/c.txt"))?.toString()).toBe("again\n");
    await both();
  });

  it("renamed and deleted folders: their old paths leave, their new ones are watched", async () => {
    await both();
    await mkdir(path.join(ws, "lib", "inner"), { recursive: true });
    await writeFile(path.join(ws, "lib", "inner", "x.ts"), "x\n");
    await both();
    await rename(path.join(ws, "lib"), path.join(ws, "moved"));
    expect((await both()).way).toBe("paths");
    // the moved folder's watches follow its new name
    await until(async () => {
      await writeFile(path.join(ws, "moved", "inner", "x.ts"), `y ${Date.now()}\n`);
      const { commit, way } = await both();
      return way === "paths" && (await filesOf(watched, commit)).includes("moved/inner/x.ts");
    }, 5_000, "the moved folder snapshotted");
    await rm(path.join(ws, "moved"), { recursive: true });
    const gone = await both();
    expect(gone.way).toBe("paths");
    expect((await filesOf(watched, gone.commit)).some((f) => f.startsWith("moved"))).toBe(false);
  });

  it("a .gitignore edit re-reads its folder: files it no longer ignores are added", async () => {
    await mkdir(path.join(ws, "sub"));
    await writeFile(path.join(ws, "sub", ".gitignore"), "*.txt\n");
    await writeFile(path.join(ws, "sub", "kept.txt"), "kept\n");
    const ignoring = await both();
    expect(await filesOf(watched, ignoring.commit)).not.toContain("sub/kept.txt");
    await writeFile(path.join(ws, "sub", ".gitignore"), "# nothing ignored\n");
    const unignored = await both();
    expect(unignored.way).toBe("paths");
    expect(await filesOf(watched, unignored.commit)).toContain("sub/kept.txt");
    // the root's .gitignore concerns every folder: a scan
    await writeFile(path.join(ws, "README.log"), "now ignored, then not\n");
    await writeFile(path.join(ws, ".gitignore"), "# nothing\n");
    const root = await both();
    expect(root.way).toBe("scan");
    expect(await filesOf(watched, root.commit)).toContain("README.log");
  });

  it("a nested repository is git's to judge, on every snapshot", async () => {
    const nested = path.join(ws, "vendor", "lib");
    await mkdir(nested, { recursive: true });
    const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
    await run("git", ["init", "-q", nested], { env });
    await writeFile(path.join(nested, "f.txt"), "1\n");
    await run("git", ["-C", nested, "add", "."], { env });
    await run("git", ["-C", nested, "commit", "-qm", "one"], { env });
    await both();
    // a commit inside it changes its gitlink without any event in a watched folder
    await writeFile(path.join(nested, "f.txt"), "2\n");
    await run("git", ["-C", nested, "commit", "-qam", "two"], { env });
    expect((await both()).way).toBe("paths");
  });

  it("overflow, idleness, too many folders and closing make the next snapshot scan", async () => {
    await both();
    // a burst of events larger than the (lowered) overflow mark
    const small = new WorkTreeWatchers({ overflowBurst: 20, readyWaitMs: 5_000 });
    const repo = new ShadowRepo(path.join(dir, "small.git"), ws, false, small);
    try {
      await repo.snapshot();
      await writeFile(path.join(ws, "README.md"), "changed\n");
      await repo.snapshot();
      expect(repo.lastWay).toBe("paths");
      for (let k = 0; k < 40; k++) writeFileSync(path.join(ws, `burst-${k}.txt`), `${k}\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(small.watcherOf(ws)).toBeUndefined();
      const after = await repo.snapshot();
      expect(repo.lastWay).toBe("scan");
      expect(await filesOf(repo, after)).toContain("burst-39.txt");
      // a new watcher took over with that scan
      await writeFile(path.join(ws, "README.md"), "again\n");
      await repo.snapshot();
      expect(repo.lastWay).toBe("paths");
    } finally {
      small.close();
    }

    const idle = new WorkTreeWatchers({ idleMs: 1_500, readyWaitMs: 5_000 });
    const idleRepo = new ShadowRepo(path.join(dir, "idle.git"), ws, false, idle);
    try {
      await idleRepo.snapshot();
      await idleRepo.snapshot();
      expect(idleRepo.lastWay).toBe("unchanged");
      await until(() => idle.size === 0, 5_000, "the idle watcher closed");
      await idleRepo.snapshot();
      expect(idleRepo.lastWay).toBe("scan");
    } finally {
      idle.close();
    }

    const few = new WorkTreeWatchers({ maxDirectories: 2, readyWaitMs: 5_000 });
    const fewRepo = new ShadowRepo(path.join(dir, "few.git"), ws, false, few);
    try {
      await fewRepo.snapshot();
      await fewRepo.snapshot();
      expect(fewRepo.lastWay).toBe("scan");
      expect(few.size).toBe(0);
    } finally {
      few.close();
    }

    // more changed paths than pathspecs pay off for
    await both();
    await mkdir(path.join(ws, "many"));
    await both();
    for (let k = 0; k < 600; k += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => writeFile(path.join(ws, "many", `m${k + j}.txt`), "m\n")));
    }
    expect((await both()).way).toBe("scan");
    await writeFile(path.join(ws, "many", "m0.txt"), "again\n");
    expect((await both()).way).toBe("paths");

    watchers.close();
    await writeFile(path.join(ws, "README.md"), "closed\n");
    const closed = await both();
    expect(closed.way).toBe("scan");
  });
});

/**
 * A workspace's shadow git repository: `DATA_DIR/shadow/<workspaceId>/<repoKey>.git`, run with
 * `--git-dir` and `--work-tree` so it never reads or writes the workspace's own `.git`. A
 * snapshot is a commit of the work tree as it is (`.git`, heavy folders such as `node_modules`
 * and `.gitignore`d paths excluded); two snapshots give exactly what changed between them,
 * whoever changed it (a file tool, Bash, a person).
 *
 * Used only inside the workspace door (`server/workspace-agent/ops/changes.ts`), whose sandbox
 * holds the workspace and its shadow folder and nothing else. Git is run with `execFile` (no
 * shell), with a fixed environment: no system or global config, no hooks, no pager, no prompts.
 * Writers (snapshots, restores) run one at a time per repository object: git's index lock would
 * otherwise fail the second.
 */
import { lstat, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { heavyDirectoryNames } from "@/server/workspace-fs/list-directory";
import { execFileBuffered } from "@/server/workspace-fs/exec-file";
import { maxDiffedFileBytes, type ChangedFile } from "@/server/shared/wire/changes";
import { maxChangedPaths, type DirtyTracker, type WorkTreeWatchers } from "./change-watcher";

/** The ref that holds the latest snapshot; every earlier one is its ancestor, so none is collected. */
const headRef = "refs/conduit/snapshots";
/** Largest blob read whole (restores of big files); diffs stop at {@link maxDiffedFileBytes}. */
const maxBlobBytes = 512 * 1024 * 1024;

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** The paths not under another one of the list (a folder stands for its subtree), sorted. */
export function coveringPaths(paths: readonly string[]): string[] {
  const all = new Set(paths);
  const out: string[] = [];
  for (const p of all) {
    let covered = false;
    for (let i = p.indexOf("/"); i !== -1 && !covered; i = p.indexOf("/", i + 1)) covered = all.has(p.slice(0, i));
    if (!covered) out.push(p);
  }
  return out.sort();
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  /** git's exit code (-1 when it did not exit normally) */
  code: number;
}

/** A blob of a snapshot, with its git mode (100644, 100755, 120000 symlink). */
export interface SnapshotBlob {
  mode: string;
  size: number;
}

export class ShadowRepo {
  private queue: Promise<unknown> = Promise.resolve();
  private ready: Promise<void> | undefined;
  /** The latest snapshot and its tree, so an unchanged work tree costs no commit. */
  private latest: { commit: string; tree: string } | undefined;
  /** The index holds exactly the latest snapshot's tree (known only after a snapshot in this process). */
  private indexIsLatest = false;
  private tracker: { from: WorkTreeWatchers; tracker: DirtyTracker } | undefined;
  /**
   * How the latest {@link snapshot} knew what changed: `unchanged` (the watcher saw nothing; no
   * git), `paths` (only the paths the watcher saw went to git), `scan` (the whole work tree).
   */
  lastWay: "unchanged" | "paths" | "scan" | undefined;

  /**
   * `readOnly`: this object only reads commits (a door answering the web app, or any caller's
   * diff): it never creates, configures or unlocks the repository, whose writer is the sidecar's
   * door, and never touches the work tree.
   */
  constructor(
    readonly gitDir: string,
    readonly workTree: string,
    readonly readOnly = false,
    /** Watchers of work trees (`change-watcher.ts`): with them a snapshot gets by without scanning. */
    public watchers?: WorkTreeWatchers,
  ) {}

  /**
   * Commits the work tree as it is now and returns the commit; when nothing changed since the
   * latest snapshot, returns that one (no new commit).
   */
  snapshot(message = "snapshot"): Promise<string> {
    if (this.readOnly) return Promise.reject(new Error("a read-only shadow repository takes no snapshots"));
    return this.exclusive(async () => {
      await this.init();
      const tracker = this.currentTracker();
      // With a trusted watcher, only the paths it saw change go to git (none: no git at all).
      if (tracker && this.indexIsLatest && this.latest) {
        const paths = await tracker.take();
        if (paths) {
          try {
            const commit = await this.snapshotPaths(paths, message);
            if (commit !== undefined) return commit;
          } catch {
            // whatever git refused (a path that vanished meanwhile, one beyond a symlink): the scan below covers it
          }
        }
      }
      // A full scan; the watcher's paths start afresh from here. A file that vanishes between
      // git's walk and its read ("unable to stat") means the tree changed under the scan: scan
      // again, a few times, then say so (a conflict, not a server failure).
      await tracker?.begin();
      for (let attempt = 1; ; attempt++) {
        try {
          const commit = await this.snapshotAll(message);
          this.lastWay = "scan";
          return commit;
        } catch (err) {
          tracker?.distrust();
          const vanished = err instanceof Error && /unable to stat|No such file or directory|Not a directory|beyond a symbolic link/.test(err.message);
          if (!vanished) throw err;
          if (attempt >= 4) throw new AppError(ErrorCode.conflict, "The workspace kept changing while Conduit took its snapshot; try again.");
        }
      }
    });
  }

  /**
   * A snapshot from the paths changed since the latest one (folders: their whole subtree), the
   * index holding the latest snapshot's tree: the missing ones leave the index (`git rm
   * --cached`), the others are added (`git add -A`, which honours `.gitignore` and the excludes
   * as a scan does); then `write-tree` and `commit-tree`, as a scan. Undefined: too many paths
   * for pathspecs to pay off (the caller scans).
   */
  private async snapshotPaths(paths: string[], message: string): Promise<string | undefined> {
    const latest = this.latest!;
    if (paths.length === 0) {
      this.lastWay = "unchanged";
      return latest.commit;
    }
    if (paths.length > maxChangedPaths || paths.includes("")) return undefined;
    const covering = coveringPaths(paths);
    const present = await Promise.all(
      covering.map((p) => lstat(path.join(/*turbopackIgnore: true*/ this.workTree, p)).then(() => true, () => false)),
    );
    const gone = covering.filter((_, i) => !present[i]);
    const here = covering.filter((_, i) => present[i]);
    // until git is done the index may be neither the latest snapshot nor the next one
    this.indexIsLatest = false;
    let changed = false;
    if (gone.length > 0) {
      // --ignore-unmatch: a path created and removed between two snapshots was never in the index
      const removed = await this.git(
        ["-c", "core.preloadIndex=false", "rm", "-r", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
        { input: `${gone.join("\0")}\0` },
      );
      if (removed.stdout.length > 0) changed = true;
    }
    if (here.length > 0) {
      // exit code 1 with no "fatal:": some paths are ignored (said on stderr), the rest is added
      const added = await this.git(
        // no preload: its threads would only match 20,000 index entries against the pathspecs
        ["-c", "core.preloadIndex=false", "add", "-A", "-v", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"],
        { input: `${here.join("\0")}\0`, allowFailure: true },
      );
      if (added.code > 1 || added.stderr.includes("fatal:")) throw new Error(`git add failed: ${added.stderr.trim()}`);
      if (added.stdout.length > 0) changed = true;
    }
    this.lastWay = "paths";
    if (!changed) {
      this.indexIsLatest = true;
      return latest.commit;
    }
    return this.commitIndex(latest, message);
  }

  /** The scan: the whole work tree through `git add -A` (or `git status` first when it may be unchanged). */
  private async snapshotAll(message: string): Promise<string> {
    // The fast path for a turn that changed nothing: HEAD is the snapshots ref, so an empty
    // `git status` (lstat per tracked file, the untracked cache per folder) means the work tree
    // is exactly the latest snapshot; cheaper than `git add -A`, which reads every folder. A
    // nested repository whose commit moved shows (`dirty`: only its own uncommitted files do not).
    if (this.indexIsLatest && this.latest) {
      const status = await this.git(["status", "--porcelain=v1", "-z", "--no-renames", "--ignore-submodules=dirty"], { allowFailure: true });
      if (status.code === 0 && status.stdout.length === 0) return this.latest.commit;
    }
    // --ignore-errors: an unreadable file is left out, the rest is still snapshotted
    const added = await this.git(["add", "-A", "-v", "--ignore-errors", "--", "."], { allowFailure: true });
    if (added.stderr.includes("fatal:")) throw new Error(`git add failed: ${added.stderr.trim()}`);
    const latest = await this.latestSnapshot();
    // The fast path: git added and removed nothing, and the index is the latest snapshot's.
    if (latest && this.indexIsLatest && added.stdout.length === 0) return latest.commit;
    return this.commitIndex(latest, message);
  }

  /** Commits the index as the next snapshot (none when its tree is the latest one's). */
  private async commitIndex(latest: { commit: string; tree: string } | undefined, message: string): Promise<string> {
    this.indexIsLatest = false;
    const tree = (await this.git(["write-tree"])).stdout.toString().trim();
    if (latest && latest.tree === tree) {
      this.indexIsLatest = true;
      return latest.commit;
    }
    const args = ["commit-tree", tree, "-m", message];
    if (latest) args.push("-p", latest.commit);
    const commit = (await this.git(args)).stdout.toString().trim();
    await this.writeHeadRef(commit);
    this.latest = { commit, tree };
    this.indexIsLatest = true;
    return commit;
  }

  /** This repository's tracker on its work tree's watcher (a new one when the last one's watcher ended). */
  private currentTracker(): DirtyTracker | undefined {
    const watchers = this.watchers;
    if (!watchers) return undefined;
    if (!this.tracker || this.tracker.from !== watchers || this.tracker.tracker.ended) {
      const tracker = watchers.track(this.workTree);
      this.tracker = tracker ? { from: watchers, tracker } : undefined;
    }
    return this.tracker?.tracker;
  }

  /**
   * The files that differ between two snapshots (`from` null: the empty tree), with line counts.
   * The same snapshot twice (a turn that changed nothing) differs in nothing: no git process.
   */
  async diff(from: string | null, to: string): Promise<ChangedFile[]> {
    if (from === to) return [];
    await this.init();
    const out = (
      await this.git(["diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", from ?? emptyTree, to])
    ).stdout.toString("utf8");
    const parts = out.split("\0");
    const raw = new Map<string, { status: ChangedFile["status"]; blobs: string[] }>();
    const counts = new Map<string, { insertions: number; deletions: number; binary: boolean }>();
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (part.startsWith(":")) {
        // ":100644 100644 <old> <new> M" then the path
        const [, , oldSha, newSha, letter] = part.slice(1).split(" ");
        const file = parts[++i]!;
        const status = letter === "A" ? "added" : letter === "D" ? "deleted" : "modified";
        raw.set(file, { status, blobs: [oldSha!, newSha!].filter((b) => !/^0+$/.test(b)) });
      } else if (part.includes("\t")) {
        const [added, deleted, file] = part.split("\t");
        if (file === undefined) continue;
        const binary = added === "-";
        counts.set(file, { insertions: binary ? 0 : Number(added), deletions: binary ? 0 : Number(deleted), binary });
      }
    }
    const sizes = await this.blobSizes([...raw.values()].flatMap((r) => r.blobs));
    const files: ChangedFile[] = [];
    for (const [file, { status, blobs }] of raw) {
      const count = counts.get(file) ?? { insertions: 0, deletions: 0, binary: false };
      const large = blobs.some((b) => (sizes.get(b) ?? 0) > maxDiffedFileBytes);
      files.push({
        path: file,
        status,
        insertions: large ? 0 : count.insertions,
        deletions: large ? 0 : count.deletions,
        binary: count.binary && !large,
        large,
      });
    }
    return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** A file's mode and size in a snapshot, or undefined when it is not there. */
  async stat(commit: string, file: string): Promise<SnapshotBlob | undefined> {
    await this.init();
    const out = (await this.git(["ls-tree", "-z", "-l", commit, "--", file])).stdout.toString("utf8");
    const entry = out.split("\0").find((e) => e.endsWith(`\t${file}`));
    if (!entry) return undefined;
    const [meta] = entry.split("\t");
    const [mode, type, , size] = meta!.trim().split(/\s+/);
    if (type !== "blob") return undefined;
    return { mode: mode!, size: Number(size) };
  }

  /** A file's bytes in a snapshot (undefined when absent); at most `maxBytes`, else an error. */
  async read(commit: string, file: string, maxBytes = maxBlobBytes): Promise<Buffer | undefined> {
    const blob = await this.stat(commit, file);
    if (!blob) return undefined;
    if (blob.size > maxBytes) throw new Error(`${file} is larger than ${maxBytes} bytes`);
    return (await this.git(["cat-file", "blob", `${commit}:${file}`], { maxBuffer: maxBytes + 1024 })).stdout;
  }

  /** Runs `fn` while no other writer of this repository runs. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Points the snapshots ref at `commit` by writing the loose ref file (temp file + rename): one
   * git process less per snapshot. Safe because this object is the repository's only writer and
   * its refs are never packed (no gc, no pack-refs).
   */
  private async writeHeadRef(commit: string): Promise<void> {
    const file = path.join(/*turbopackIgnore: true*/ this.gitDir, ...headRef.split("/"));
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${commit}\n`);
    await rename(tmp, file);
  }

  private async latestSnapshot(): Promise<{ commit: string; tree: string } | undefined> {
    if (this.latest) return this.latest;
    const found = await this.git(["rev-parse", "--verify", "-q", `${headRef}^{commit}`], { allowFailure: true });
    const commit = found.stdout.toString().trim();
    if (!commit) return undefined;
    const tree = (await this.git(["rev-parse", `${commit}^{tree}`])).stdout.toString().trim();
    this.latest = { commit, tree };
    return this.latest;
  }

  private async blobSizes(blobs: string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    if (blobs.length === 0) return sizes;
    const out = (await this.git(["cat-file", "--batch-check"], { input: `${blobs.join("\n")}\n` })).stdout.toString();
    for (const line of out.split("\n")) {
      const [sha, type, size] = line.split(" ");
      if (sha && type === "blob") sizes.set(sha, Number(size));
    }
    return sizes;
  }

  private init(): Promise<void> {
    if (this.readOnly) return Promise.resolve();
    this.ready ??= (async () => {
      const exists = await stat(path.join(/*turbopackIgnore: true*/ this.gitDir, "HEAD")).then(
        () => true,
        () => false,
      );
      if (!exists) {
        await mkdir(path.dirname(this.gitDir), { recursive: true, mode: 0o700 });
        await this.git(["init", "-q", "--bare", this.gitDir], { noDirs: true });
      }
      // Only this process writes here: a lock left by a crash would stop every later snapshot.
      await rm(path.join(this.gitDir, "index.lock"), { force: true });
      // Written every time (one file, no git process per key): an older repository gets the current settings too.
      const config = [
        "[core]",
        "\trepositoryformatversion = 0",
        "\tbare = false",
        "\tfilemode = true",
        "\tautocrlf = false",
        "\tsafecrlf = false",
        "\tsymlinks = true",
        "\tquotePath = false",
        // above this size a file is stored whole and treated as binary by diff (listed, not diffed)
        "\tbigFileThreshold = 1m",
        "\tuntrackedCache = true",
        "\tfsmonitor = false",
        // A snapshot of a few changed paths reads the index twice (add, write-tree) and writes it
        // twice: split, each write is the few changed entries, not all 20,000 (the shared part is
        // rewritten once a fifth of it changed; the replaced one is deleted right away).
        "\tsplitIndex = true",
        "[splitIndex]",
        "\tsharedIndexExpire = now",
        "[index]",
        "\tversion = 4",
        "[gc]",
        "\tauto = 0",
        "[advice]",
        "\taddEmbeddedRepo = false",
        "\taddIgnoredFile = false",
      ];
      await writeFile(path.join(this.gitDir, "config"), `${config.join("\n")}\n`);
      // HEAD names the snapshots ref, so `git status` compares against the latest snapshot
      await writeFile(path.join(this.gitDir, "HEAD"), `ref: ${headRef}\n`);
      await mkdir(path.join(this.gitDir, "info"), { recursive: true });
      const excludes = ["# Conduit: never snapshotted", ...[...heavyDirectoryNames].map((name) => `${name}/`), ".*.conduit-*.tmp"];
      await writeFile(path.join(this.gitDir, "info", "exclude"), `${excludes.join("\n")}\n`);
    })();
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  /** Runs git on this repository; rejects with git's stderr unless `allowFailure`. */
  git(
    args: string[],
    options: { input?: string; maxBuffer?: number; allowFailure?: boolean; noDirs?: boolean; noWorkTree?: boolean } = {},
  ): Promise<GitResult> {
    // a reader reads commits only: it never names or enters the work tree (which may be gone, a
    // discarded session worktree)
    const noWorkTree = options.noWorkTree || this.readOnly;
    const full = options.noDirs
      ? args
      : noWorkTree
        ? ["--git-dir", this.gitDir, ...args]
        : ["--git-dir", this.gitDir, "--work-tree", this.workTree, ...args];
    return execFileBuffered("git", ["-c", "core.hooksPath=/dev/null", ...full], { cwd: this.readOnly ? this.gitDir : this.workTree, env: gitEnv() as NodeJS.ProcessEnv, maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024 }, options.input).then(
      ({ error, stdout, stderr }) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        const result = { stdout, stderr: stderr.toString("utf8"), code };
        if (error && !options.allowFailure) throw new Error(`git ${args[0]} failed: ${result.stderr.trim() || error.message}`);
        return result;
      },
    );
  }
}

/** git's environment: nothing of the operator's configuration, the same identity on every commit. */
function gitEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: "/nonexistent",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    // a file name is a name, never a pattern (`*`, `:(glob)`)
    GIT_LITERAL_PATHSPECS: "1",
    GIT_AUTHOR_NAME: "Conduit",
    GIT_AUTHOR_EMAIL: "snapshots@conduit.invalid",
    GIT_COMMITTER_NAME: "Conduit",
    GIT_COMMITTER_EMAIL: "snapshots@conduit.invalid",
  };
}

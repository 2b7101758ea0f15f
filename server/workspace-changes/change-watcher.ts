/**
 * Knowing what changed under a snapshotted work tree instead of scanning it: one inotify watcher
 * per root (a `fs.watch` per folder; Node 20's `recursive: true` on Linux polls every file with
 * `fs.watchFile`, unusable here), collecting the paths touched since the shadow repository's
 * previous snapshot. {@link ShadowRepo.snapshot} then hands only those paths to git, and a
 * snapshot with none spawns no git at all. Whenever the watcher cannot vouch for what it saw, it
 * says so and the snapshot scans the whole tree, as before.
 *
 * Why what it reports is complete (the reasoning the snapshots rely on):
 * - Coverage. Every folder of the root is watched except the ones a snapshot never holds: `.git`,
 *   the heavy folders the shadow repository excludes (`node_modules`, `dist`, …, `.conduit`:
 *   `heavyDirectoryNames`, excluded there as `name/` at any depth), symlinks (git stores the
 *   link, not its target) and nested repositories (a folder holding a `.git`, which git stores as
 *   a gitlink or, when the `.git` is not a repository, scans like any folder): those are not
 *   descended into and are handed to git on every snapshot ("sticky"), so git decides for them.
 *   A folder is watched before it is read, so an entry made after the read is reported by the
 *   folder's watch and one made before is found by the read.
 * - New and replaced folders. An event on an entry marks its path (git adds a folder's whole
 *   subtree); a `rename` event on a folder also re-watches its subtree (watches follow inodes, so
 *   a folder moved or replaced is watched afresh under its new name) and marks the folder again
 *   once its watches exist, covering whatever was written into it before they did.
 * - `.gitignore`. An edit can un-ignore files that did not change themselves: the folder holding
 *   the `.gitignore` is marked, so git re-reads its subtree (the root's: a full scan).
 * - Late events. The kernel queues an inotify event inside the writing syscall, so a write that
 *   finished before a snapshot is asked for is already in the queue; {@link DirtyTracker.take}
 *   first lets the event loop run one full poll phase that started after the call (two
 *   `setImmediate` turns: libuv's poll reads the inotify descriptor until it is empty), so those
 *   events are counted. For a turn's after-snapshot this holds by causality: the CLI wrote its
 *   `result` after its tools' writes returned.
 * - Lost events. The kernel drops events when its queue (`fs.inotify.max_queued_events`) fills,
 *   and libuv drops the overflow notice silently. All of this process's watches share one inotify
 *   descriptor that libuv drains completely within one poll phase, so an overflow means at least
 *   a full queue's worth of events arrived within one poll phase: when half of that many do, every
 *   watcher is declared untrusted (the next snapshot of each root scans). A watcher error, a root
 *   that moved, more folders than {@link WatchLimits.maxDirectories} or the kernel's watch limit
 *   do the same (the last two also stop watching that root for a while).
 * Not seen by inotify: writes through `mmap` (git's own scan would see them only through a
 * changed mtime too), through a hard link from outside the root, and changes a network or FUSE
 * file system gets from elsewhere (a root on one is not watched at all; see
 * `remoteFileSystems`). Writes from the session's sandbox (bubblewrap bind mounts) are seen: a
 * bind mount shares the inodes.
 *
 * Bounded: at most one watcher per root (several shadow repositories of one root each get their
 * own {@link DirtyTracker}); a watcher no tracker has used for {@link WatchLimits.idleMs} closes
 * (its next snapshot scans and starts a new one); {@link WorkTreeWatchers.close} closes them all.
 */
import { readFileSync, watch, type Dirent, type FSWatcher } from "node:fs";
import { lstat, readdir, statfs } from "node:fs/promises";
import path from "node:path";
import { heavyDirectoryNames } from "@/server/workspace-fs/list-directory";

export interface WatchLimits {
  /** A watcher unused for this long is closed (default 10 minutes). */
  idleMs: number;
  /** Most folders watched under one root; a larger tree is scanned by git (default 20,000). */
  maxDirectories: number;
  /** Events within one poll phase that make every watcher untrusted (default half the kernel's queue). */
  overflowBurst: number;
  /**
   * How long a scanning snapshot waits for a new watcher's first walk. Default 0: a scan never
   * waits (a prompt's before-snapshot has a deadline); a watcher not ready at one scan is trusted
   * from the next scan on, so a new watcher costs at most one more scan.
   */
  readyWaitMs: number;
  /** After a resource limit (folders, kernel watches), how long a root is not watched (default `idleMs`). */
  backoffMs: number;
}

/** Why a watcher stopped vouching for its root. */
export type WatchEnd = "closed" | "idle" | "overflow" | "error" | "root-moved" | "too-many-folders" | "kernel-limit" | "remote-fs";

/**
 * File systems whose files can change without an inotify event here (written by another machine
 * or through another kernel): NFS, SMB/CIFS, FUSE, 9p, Ceph, AFS, Coda, GFS2, OCFS2, Lustre. A
 * root on one is never watched: its snapshots scan.
 */
const remoteFileSystems: ReadonlySet<number> = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x00c36400, 0x5346414f, 0x73757245, 0x01161970, 0x7461636f, 0x0bd00bd0,
]);

/** The events of one poll phase, over all watchers of this process (they share libuv's inotify descriptor). */
let burst = 0;
let burstResetScheduled = false;
const burstListeners = new Set<(count: number) => void>();

function countEvent(): void {
  burst += 1;
  if (!burstResetScheduled) {
    burstResetScheduled = true;
    setImmediate(() => {
      burst = 0;
      burstResetScheduled = false;
    });
  }
  for (const listener of burstListeners) listener(burst);
}

function kernelQueueSize(): number {
  try {
    const n = Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim());
    return Number.isFinite(n) && n > 0 ? n : 16_384;
  } catch {
    return 16_384;
  }
}

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A folder git never snapshots, so never watched. */
function skippedFolder(name: string): boolean {
  return name === ".git" || heavyDirectoryNames.has(name);
}

/**
 * Above this many changed paths a snapshot scans: matching every index entry against that many
 * pathspecs costs about what a scan does (and a tracker stops collecting there).
 */
export const maxChangedPaths = 500;

const dotGit = Buffer.from(".git");
/** Folders read at once while watching a tree. */
const walkWidth = 8;

/** Names of Conduit's own atomic-write temp files (excluded from snapshots too). */
const conduitTemp = /^\..*\.conduit-.*\.tmp$/;

function join(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

function isUnder(rel: string, dir: string): boolean {
  return rel === dir || rel.startsWith(`${dir}/`);
}

/** A name as bytes, or undefined when it is not valid UTF-8 (such names are handled through their folder). */
function nameOf(raw: string | Buffer | null): string | undefined {
  if (raw === null) return undefined;
  if (typeof raw === "string") return raw;
  const text = raw.toString("utf8");
  return Buffer.from(text, "utf8").equals(raw) ? text : undefined;
}

/**
 * One consumer's view of a watcher: the paths changed since its last {@link take} (or
 * {@link begin}). Untrusted until a {@link begin} on a ready watcher, and again after
 * {@link distrust} or once the watcher ends.
 */
export class DirtyTracker {
  private paths = new Set<string>();
  /** More paths than a snapshot hands to git: they are no longer collected, the next snapshot scans. */
  private overfull = false;
  private trusted = false;

  constructor(private readonly watcher: WorkTreeWatcher) {}

  /** Whether the watcher behind this tracker has ended (the consumer should ask for a new one). */
  get ended(): boolean {
    return this.watcher.end !== undefined;
  }

  /** @internal the watcher reports a changed path (relative, `""` for the whole root). */
  mark(rel: string): void {
    if (this.overfull) return;
    this.paths.add(rel);
    if (this.paths.size > maxChangedPaths) {
      this.overfull = true;
      this.paths = new Set();
    }
  }

  /**
   * A full scan starts now: everything before is covered by it, so the paths are forgotten; the
   * tracker is trusted from here on when the watcher is ready (waited for a bounded time).
   */
  async begin(): Promise<void> {
    this.watcher.touch();
    const ready = await this.watcher.whenReady();
    this.paths = new Set();
    this.overfull = false;
    this.trusted = ready && this.watcher.end === undefined;
  }

  /** What the scan that followed {@link begin} covered is unknown (it failed): trust nothing until the next. */
  distrust(): void {
    this.trusted = false;
  }

  /**
   * After letting pending events arrive: the paths changed since the previous take or begin
   * (folders stand for their whole subtree; the sticky nested repositories included), or
   * undefined when they are not known (the caller scans). Starts the next period.
   */
  async take(): Promise<string[] | undefined> {
    if (!this.trusted || this.watcher.end !== undefined) return undefined;
    this.watcher.touch();
    await this.watcher.settle();
    if (!this.trusted || this.watcher.end !== undefined || this.overfull) return undefined;
    const taken = this.paths;
    this.paths = new Set();
    for (const nested of this.watcher.nestedRepositories()) taken.add(nested);
    return [...taken];
  }
}

/** The watches of one root. */
export class WorkTreeWatcher {
  /** Watched folders (relative, `""` the root). */
  private readonly folders = new Map<string, FSWatcher>();
  /** Folders holding a `.git`, not descended into: handed to git whole on every snapshot. */
  private readonly nested = new Set<string>();
  private readonly trackers = new Set<DirtyTracker>();
  /** Re-watching after `rename` events, one at a time and in order. */
  private work: Promise<void> = Promise.resolve();
  private pending = 0;
  private lastUsed = Date.now();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly onBurst: (count: number) => void;
  private rootIno: number | undefined;
  /** Why it ended; undefined while it runs. */
  end: WatchEnd | undefined;
  readonly ready: Promise<boolean>;

  constructor(
    readonly root: string,
    private readonly limits: WatchLimits,
    private readonly onEnd: (watcher: WorkTreeWatcher, why: WatchEnd) => void,
  ) {
    this.onBurst = (count) => {
      if (count >= this.limits.overflowBurst) this.stop("overflow");
    };
    burstListeners.add(this.onBurst);
    this.ready = this.start();
    this.idleTimer = setTimeout(() => this.checkIdle(), this.limits.idleMs);
    this.idleTimer.unref();
  }

  /** A new consumer. */
  tracker(): DirtyTracker {
    const tracker = new DirtyTracker(this);
    this.trackers.add(tracker);
    return tracker;
  }

  /** Whether the first walk finished with the watcher running; waits at most `readyWaitMs`. */
  async whenReady(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      this.ready,
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.limits.readyWaitMs);
      }),
    ]);
    clearTimeout(timer);
    return ready && this.end === undefined;
  }

  /** Marks the watcher as used now (idle closing counts from the last use). */
  touch(): void {
    this.lastUsed = Date.now();
  }

  /** How many folders are watched (for tests and the bench). */
  get watchedFolders(): number {
    return this.folders.size;
  }

  nestedRepositories(): string[] {
    return [...this.nested];
  }

  /**
   * Lets the events of every write that finished before this call arrive: a full poll phase
   * that started after it (see the module comment), then the re-watching they started (bounded:
   * paths are marked when the event arrives, waiting only spares the next snapshot a re-scan of
   * a new folder).
   */
  async settle(): Promise<void> {
    await immediate();
    await immediate();
    if (this.pending === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.work,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 100);
      }),
    ]);
    clearTimeout(timer);
    await immediate();
    await immediate();
  }

  /** Closes every watch; the trackers become untrusted. */
  stop(why: WatchEnd): void {
    if (this.end !== undefined) return;
    this.end = why;
    burstListeners.delete(this.onBurst);
    clearTimeout(this.idleTimer);
    for (const watcher of this.folders.values()) watcher.close();
    this.folders.clear();
    this.nested.clear();
    this.trackers.clear();
    this.onEnd(this, why);
  }

  private async start(): Promise<boolean> {
    try {
      this.rootIno = (await lstat(this.root)).ino;
      if (remoteFileSystems.has((await statfs(this.root)).type)) {
        this.stop("remote-fs");
        return false;
      }
    } catch {
      this.stop("error");
      return false;
    }
    // in the queue, so the refreshes of events that arrive meanwhile run after it
    await this.enqueue(() => this.watchTree(""));
    return this.end === undefined;
  }

  private checkIdle(): void {
    if (this.end !== undefined) return;
    const left = this.limits.idleMs - (Date.now() - this.lastUsed);
    if (left <= 0) {
      this.stop("idle");
      return;
    }
    this.idleTimer = setTimeout(() => this.checkIdle(), left);
    this.idleTimer.unref();
  }

  private mark(rel: string): void {
    for (const tracker of this.trackers) tracker.mark(rel);
  }

  /**
   * Watches `rel` and every folder under it that a snapshot holds (already watched ones are
   * kept), reading {@link walkWidth} folders at a time.
   */
  private async watchTree(rel: string): Promise<void> {
    const queue = [rel];
    let active = 0;
    await new Promise<void>((resolve) => {
      const next = (): void => {
        while (active < walkWidth && queue.length > 0 && this.end === undefined) {
          const dir = queue.pop()!;
          active += 1;
          void this.watchOne(dir, queue).finally(() => {
            active -= 1;
            next();
          });
        }
        if (active === 0 && (queue.length === 0 || this.end !== undefined)) resolve();
      };
      next();
    });
  }

  /** Watches one folder, then reads it: its subfolders to watch go to `queue`. */
  private async watchOne(dir: string, queue: string[]): Promise<void> {
    if (!this.watchFolder(dir)) return;
    let entries: Dirent<Buffer>[];
    try {
      entries = await readdir(path.join(this.root, dir), { withFileTypes: true, encoding: "buffer" });
    } catch {
      // gone or unreadable meanwhile: its parent's event (or git's scan of the marked path) covers it
      return;
    }
    if (this.end !== undefined) return;
    if (dir !== "" && entries.some((e) => e.name.equals(dotGit))) {
      // a nested repository: git decides what it is; handed over whole on every snapshot
      this.unwatch(dir);
      this.nested.add(dir);
      return;
    }
    const subfolders: string[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const name = nameOf(entry.name);
      if (name === undefined) {
        // a folder name that is not UTF-8 cannot be named to git from here: its parent goes whole
        this.unwatch(dir);
        this.nested.add(dir);
        return;
      }
      if (!skippedFolder(name)) subfolders.push(join(dir, name));
    }
    queue.push(...subfolders);
  }

  /** Starts watching one folder; false when it is gone (or the watcher ended). */
  private watchFolder(dir: string): boolean {
    if (this.folders.has(dir)) return true;
    if (this.folders.size >= this.limits.maxDirectories) {
      this.stop("too-many-folders");
      return false;
    }
    let watcher: FSWatcher;
    try {
      watcher = watch(path.join(this.root, dir), { persistent: false, encoding: "buffer" }, (event, name) =>
        this.onEvent(dir, event, name),
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return false;
      this.stop(code === "ENOSPC" || code === "EMFILE" ? "kernel-limit" : "error");
      return false;
    }
    watcher.on("error", () => this.stop("error"));
    this.folders.set(dir, watcher);
    return true;
  }

  /** Stops watching `rel` and everything under it. */
  private unwatch(rel: string): void {
    for (const nested of this.nested) if (isUnder(nested, rel)) this.nested.delete(nested);
    if (!this.folders.has(rel)) return;
    for (const [dir, watcher] of this.folders) {
      if (isUnder(dir, rel)) {
        watcher.close();
        this.folders.delete(dir);
      }
    }
  }

  private onEvent(dir: string, event: string, raw: string | Buffer | null): void {
    countEvent();
    if (this.end !== undefined || !this.folders.has(dir)) return;
    const name = nameOf(raw);
    if (name === undefined) {
      // no name, or not UTF-8: the folder's whole subtree
      this.mark(dir);
      return;
    }
    if (dir === "" && name === ".git") return;
    if (conduitTemp.test(name)) return;
    const rel = join(dir, name);
    // an event on the watched folder itself carries its own name (libuv): checked where it matters
    if (dir === "" && name === path.basename(this.root)) void this.enqueue(() => this.checkRoot());
    if (name === ".gitignore") this.mark(dir);
    else if (name === ".git") {
      // the folder became (or stopped being) a nested repository
      this.mark(dir);
      void this.enqueue(() => this.refresh(dir));
      return;
    }
    this.mark(rel);
    if (event === "rename") void this.enqueue(() => this.refresh(rel));
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    this.pending += 1;
    this.work = this.work
      .then(fn)
      .catch(() => this.stop("error"))
      .finally(() => {
        this.pending -= 1;
      });
    return this.work;
  }

  /** An entry appeared, went or was replaced: its watches (if a folder) start afresh. */
  private async refresh(rel: string): Promise<void> {
    if (this.end !== undefined) return;
    this.unwatch(rel);
    // under a nested repository or a skipped folder nothing is watched
    const parts = rel.split("/");
    if (parts.some((p) => skippedFolder(p))) return;
    for (const nested of this.nested) if (isUnder(rel, nested)) return;
    const stat = await lstat(path.join(this.root, rel)).catch(() => undefined);
    if (!stat?.isDirectory() || this.end !== undefined) return;
    await this.watchTree(rel);
    // whatever was written into it before its watches existed
    this.mark(rel);
  }

  private async checkRoot(): Promise<void> {
    const stat = await lstat(this.root).catch(() => undefined);
    if (!stat || stat.ino !== this.rootIno) this.stop("root-moved");
  }
}


/**
 * The watchers of one process's shadow repositories, one per root. The workspace door holds
 * them (`server/workspace-agent/ops/changes.ts`); they end with the door.
 */
export class WorkTreeWatchers {
  private readonly watchers = new Map<string, WorkTreeWatcher>();
  /** Roots not watched until then (after a resource limit). */
  private readonly backoff = new Map<string, number>();
  private readonly limits: WatchLimits;
  private closed = false;

  constructor(limits: Partial<WatchLimits> = {}) {
    const idleMs = limits.idleMs ?? 10 * 60_000;
    this.limits = {
      idleMs,
      maxDirectories: limits.maxDirectories ?? 20_000,
      overflowBurst: limits.overflowBurst ?? Math.floor(kernelQueueSize() / 2),
      readyWaitMs: limits.readyWaitMs ?? 0,
      backoffMs: limits.backoffMs ?? idleMs,
    };
  }

  /** A new tracker on the watcher of `root` (started when there is none); undefined when not watched. */
  track(root: string): DirtyTracker | undefined {
    if (this.closed) return undefined;
    const until = this.backoff.get(root);
    if (until !== undefined) {
      if (Date.now() < until) return undefined;
      this.backoff.delete(root);
    }
    let watcher = this.watchers.get(root);
    if (!watcher) {
      watcher = new WorkTreeWatcher(root, this.limits, (ended, why) => {
        if (this.watchers.get(root) === ended) this.watchers.delete(root);
        if (why === "too-many-folders" || why === "kernel-limit" || why === "remote-fs") this.backoff.set(root, Date.now() + this.limits.backoffMs);
      });
      this.watchers.set(root, watcher);
    }
    return watcher.tracker();
  }

  /** The running watcher of `root`, if any (tests and the bench). */
  watcherOf(root: string): WorkTreeWatcher | undefined {
    return this.watchers.get(root);
  }

  get size(): number {
    return this.watchers.size;
  }

  /** Closes every watcher; later {@link track} calls get nothing. */
  close(): void {
    this.closed = true;
    for (const watcher of [...this.watchers.values()]) watcher.stop("closed");
    this.watchers.clear();
  }
}

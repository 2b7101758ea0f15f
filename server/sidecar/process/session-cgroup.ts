/**
 * A memory and process cap per CLI child: each spawn runs in cgroups of its own,
 * `<sidecar's cgroup>/conduit/<sidecarId>/<sessionId>-<n>` under each controller used
 * (cgroup v1: memory, pids, freezer; cgroup v2: one directory), with `memory.limit_in_bytes`
 * (and memory+swap) / `memory.max` (and no swap) at CONDUIT_SESSION_MEMORY_MB and `pids.max` at
 * CONDUIT_SESSION_PIDS_MAX.
 *
 * - The child enters before it can fork: it is started through the fixed launcher
 *   `cgroup-enter.sh`, which writes its own pid into each `cgroup.procs` and then execs the real
 *   argv (Node cannot clone into a cgroup). The sandbox's argv (bwrap) is what the launcher runs.
 * - Its end takes everything along: freeze, SIGKILL every task, thaw, wait until empty, rmdir
 *   (v2: `cgroup.kill` where the kernel has it). A `setsid` grandchild does not escape.
 * - An OOM kill is told apart from a crash: the memory cgroup's `oom_kill` counter (v1
 *   `memory.oom_control`, v2 `memory.events`) went up and the child died by SIGKILL.
 * - The directories sit below the sidecar's own cgroup, so whatever limits it runs under still
 *   hold for its children (and whoever manages the sidecar's cgroup still sees them).
 * - When cgroups are not usable (not root, not mounted, v2 without delegation) `openSessionCgroups`
 *   says why, and `openSessionCaps` falls back to rlimits (`session-rlimit.ts`): weaker, but not
 *   nothing.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { CliSpawnError } from "./cli-process";
import type { CliLaunch } from "./sandbox";

/** The launcher every capped child is started through (run by /bin/sh, never given a command string). */
export const cgroupEnterScript = path.join(import.meta.dirname, "cgroup-enter.sh");

/** The caps of one session's CLI child and everything it starts; 0 is no cap of that kind. */
export interface SessionCaps {
  memoryMb: number;
  pidsMax: number;
}

/** Where this sidecar's session cgroups live. */
export type CgroupLayout =
  | { version: "v1"; memory: string; pids?: string; freezer?: string }
  | { version: "v2"; unified: string };

/**
 * Which limits hold, and over what: cgroups cap a session's whole tree; rlimits cap each process
 * (memory, as RLIMIT_DATA) and the sidecar's whole user on the host (processes, RLIMIT_NPROC).
 * null: no such limit.
 */
export interface CapsLimits {
  memoryMb: number | null;
  memoryScope: "session" | "process";
  processes: number | null;
  processScope: "session" | "user";
  fileSizeMb: number | null;
}

/** What `/api/health` and the log say about the caps. */
export interface CapsStatus {
  on: boolean;
  /** Which mechanism holds them (absent: none). */
  kind?: "cgroup" | "rlimit";
  version?: "v1" | "v2";
  memoryMb?: number;
  pidsMax?: number;
  limits?: CapsLimits;
  /** Why the caps are off, or (rlimit) why cgroups are not used. */
  reason?: string;
}

/** How one capped child ended, as far as its cgroup knows. */
export interface CgroupExitFacts {
  /** Processes the kernel's OOM killer ended in this cgroup. */
  oomKills: number;
}

/** One spawn's cgroups. */
export interface SessionCgroup {
  /** `<sessionId>-<n>` */
  readonly name: string;
  /** The `cgroup.procs` files the launcher writes its pid into. */
  readonly procsFiles: readonly string[];
  /** The launch that starts `launch` inside these cgroups. */
  wrap(launch: CliLaunch): CliLaunch;
  /** The memory cgroup's counters now (read synchronously, at the child's exit). */
  facts(): CgroupExitFacts;
  /** Pids of every process inside now. */
  pids(): number[];
  /** Kills everything inside and removes the directories; resolves when done (never rejects). */
  destroy(): Promise<void>;
}

/**
 * What confines each spawn to its caps: cgroups (here), or, where they are not usable, rlimits
 * set by `prlimit` (`session-rlimit.ts`). The runner sees only this.
 */
export interface SessionConfinement {
  /** Which mechanism holds the caps. */
  readonly kind: "cgroup" | "rlimit";
  readonly caps: SessionCaps;
  /** Creates the confinement of a new spawn with the caps written; throws when the kernel refuses. */
  create(sessionId: string): Promise<SessionCgroup>;
  /** Earlier runs' leftovers of this sidecar id: emptied (killed) and removed. */
  cleanLeftovers(): Promise<{ removed: string[]; killed: number }>;
  /** Waits for the destroys under way, then removes this sidecar's (empty) parent directories. */
  close(): Promise<void>;
}

/** The sidecar's cgroups of sessions. */
export interface SessionCgroups extends SessionConfinement {
  readonly kind: "cgroup";
  readonly layout: CgroupLayout;
}

/** What `openSessionCgroups` reads from the system; injected in tests. */
export interface CgroupHost {
  /** Contents of /proc/self/mountinfo. */
  mountinfo(): string;
  /** Contents of /proc/self/cgroup. */
  selfCgroup(): string;
  /** Effective uid (root is needed to create cgroups that nothing delegated). */
  uid(): number;
}

const procHost: CgroupHost = {
  mountinfo: () => readFileSync("/proc/self/mountinfo", "utf8"),
  selfCgroup: () => readFileSync("/proc/self/cgroup", "utf8"),
  uid: () => process.geteuid?.() ?? -1,
};

/** Options of {@link openSessionCgroups}. */
export interface OpenCgroupsOptions {
  sidecarId: string;
  caps: SessionCaps;
  host?: CgroupHost;
  /** Called with the number of OOM kills a destroyed cgroup saw (the metrics counter). */
  onOomKills?: (count: number) => void;
  /** Poll interval and bound of the kill's wait for an empty cgroup. */
  pollMs?: number;
  killWaitMs?: number;
}

/** The caps in force, or why there are none. */
export type OpenedCgroups = { cgroups: SessionCgroups; status: CapsStatus } | { cgroups?: undefined; status: CapsStatus };

/** The mount of each cgroup hierarchy (v1 by controller, v2 as `""`), with the root it shows. */
interface Mount {
  mountPoint: string;
  root: string;
}

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** cgroup mounts of /proc/self/mountinfo: v1 by controller name, v2 under `""`. */
export function parseCgroupMounts(mountinfo: string): Map<string, Mount> {
  const mounts = new Map<string, Mount>();
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 6 || fields.length < dash + 3) continue;
    const fsType = fields[dash + 1];
    const root = unescapeMount(fields[3]!);
    const mountPoint = unescapeMount(fields[4]!);
    if (fsType === "cgroup2") {
      if (!mounts.has("")) mounts.set("", { mountPoint, root });
    } else if (fsType === "cgroup") {
      for (const option of (fields[dash + 3] ?? "").split(",")) {
        if (!mounts.has(option)) mounts.set(option, { mountPoint, root });
      }
    }
  }
  return mounts;
}

/** /proc/self/cgroup: the cgroup path by controller name (v1), and `""` for v2. */
export function parseSelfCgroup(text: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    for (const name of match[1]!.split(",")) paths.set(name, match[2]!);
  }
  return paths;
}

function ownDir(mount: Mount | undefined, cgroupPath: string | undefined): string | undefined {
  if (mount === undefined || cgroupPath === undefined) return undefined;
  // Inside a cgroup namespace or a bind mount, the mount shows a subtree: the path is relative to it.
  const root = mount.root === "/" ? "" : mount.root;
  if (root !== "" && cgroupPath !== root && !cgroupPath.startsWith(`${root}/`)) return undefined;
  return path.join(mount.mountPoint, cgroupPath.slice(root.length));
}

/** Where this sidecar's session cgroups go, or why there is nowhere. */
export function findCgroupLayout(sidecarId: string, host: CgroupHost = procHost): CgroupLayout | { problem: string } {
  if (host.uid() !== 0) return { problem: "the sidecar does not run as root, so it cannot create cgroups" };
  let mounts: Map<string, Mount>;
  let self: Map<string, string>;
  try {
    mounts = parseCgroupMounts(host.mountinfo());
    self = parseSelfCgroup(host.selfCgroup());
  } catch (error) {
    return { problem: `cannot read /proc/self: ${error instanceof Error ? error.message : String(error)}` };
  }
  const base = (dir: string | undefined) => (dir === undefined ? undefined : path.join(dir, "conduit", sidecarId));
  const memory = base(ownDir(mounts.get("memory"), self.get("memory")));
  if (memory !== undefined) {
    const pids = base(ownDir(mounts.get("pids"), self.get("pids")));
    const freezer = base(ownDir(mounts.get("freezer"), self.get("freezer")));
    return { version: "v1", memory, ...(pids !== undefined ? { pids } : {}), ...(freezer !== undefined ? { freezer } : {}) };
  }
  const unified = ownDir(mounts.get(""), self.get(""));
  if (unified === undefined) return { problem: "no cgroup memory controller is mounted (neither v1 nor v2)" };
  let controllers: string[];
  try {
    controllers = readFileSync(path.join(unified, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  } catch {
    controllers = [];
  }
  if (!controllers.includes("memory")) {
    return { problem: `cgroup v2 at ${unified} offers no memory controller to the sidecar's cgroup (nothing delegated it)` };
  }
  return { version: "v2", unified: path.join(unified, "conduit", sidecarId) };
}

/**
 * Sets up this sidecar's session cgroups: checks where they go, creates the parent directories
 * (v2: with the memory and pids controllers enabled below them) and proves it with a trial cgroup.
 * Never throws: an unusable system is `{status: {on: false, reason}}`.
 */
export function openSessionCgroups(options: OpenCgroupsOptions): OpenedCgroups {
  const { caps } = options;
  if (caps.memoryMb <= 0 && caps.pidsMax <= 0) {
    return { status: { on: false, reason: "CONDUIT_SESSION_MEMORY_MB and CONDUIT_SESSION_PIDS_MAX are both 0" } };
  }
  const layout = findCgroupLayout(options.sidecarId, options.host);
  if ("problem" in layout) return { status: { on: false, reason: layout.problem } };
  try {
    const cgroups = new CgroupManager(layout, options);
    cgroups.prepare();
    const limits: CapsLimits = {
      memoryMb: caps.memoryMb > 0 ? caps.memoryMb : null,
      memoryScope: "session",
      processes: caps.pidsMax > 0 ? caps.pidsMax : null,
      processScope: "session",
      fileSizeMb: null,
    };
    return { cgroups, status: { on: true, kind: "cgroup", version: layout.version, memoryMb: caps.memoryMb, pidsMax: caps.pidsMax, limits } };
  } catch (error) {
    return { status: { on: false, reason: `cgroups are not usable here: ${error instanceof Error ? error.message : String(error)}` } };
  }
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function readPids(dir: string): number[] {
  const text = read(path.join(dir, "cgroup.procs"));
  if (text === undefined) return [];
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** The `oom_kill <n>` line of memory.oom_control (v1) or memory.events (v2); else 0. */
export function oomKillCount(text: string | undefined): number {
  const match = text === undefined ? null : /^oom_kill (\d+)$/m.exec(text);
  return match === null ? 0 : Number(match[1]);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class CgroupManager implements SessionCgroups {
  readonly kind = "cgroup";
  readonly layout: CgroupLayout;
  readonly caps: SessionCaps;
  private spawns = 0;
  private readonly destroying = new Set<Promise<void>>();
  private readonly options: OpenCgroupsOptions;

  constructor(layout: CgroupLayout, options: OpenCgroupsOptions) {
    this.layout = layout;
    this.caps = options.caps;
    this.options = options;
  }

  /** Every parent directory of this sidecar's cgroups (one per controller; v2 one). */
  private get bases(): string[] {
    const layout = this.layout;
    if (layout.version === "v2") return [layout.unified];
    return [layout.memory, layout.pids, layout.freezer].filter((dir): dir is string => dir !== undefined);
  }

  prepare(): void {
    for (const base of this.bases) mkdirSync(base, { recursive: true });
    if (this.layout.version === "v2") {
      // Controllers are enabled level by level from the sidecar's own cgroup down.
      const conduit = path.dirname(this.layout.unified);
      for (const dir of [path.dirname(conduit), conduit, this.layout.unified]) {
        writeFileSync(path.join(dir, "cgroup.subtree_control"), this.caps.pidsMax > 0 ? "+memory +pids" : "+memory");
      }
    }
    // A trial cgroup: the limits can be written here (empty, so it goes at once).
    const trial = new CgroupDirs(`probe-${process.pid}`, this.layout, this.options, () => undefined);
    try {
      trial.makeNow(this.caps);
    } finally {
      trial.removeEmpty();
    }
  }

  async create(sessionId: string): Promise<SessionCgroup> {
    for (let attempt = 0; ; attempt++) {
      const cgroup = new CgroupDirs(`${sessionId}-${++this.spawns}`, this.layout, this.options, (destroying) => {
        this.destroying.add(destroying);
        void destroying.finally(() => this.destroying.delete(destroying));
      });
      try {
        await cgroup.make(this.caps);
        return cgroup;
      } catch (error) {
        cgroup.removeEmpty();
        // a directory an earlier run could not remove: the next number
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 5) {
          // Never started uncapped when caps are in force: the spawn fails with the reason.
          throw new CliSpawnError(`Could not create the session's cgroup (memory and process caps): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
      }
    }
  }

  async cleanLeftovers(): Promise<{ removed: string[]; killed: number }> {
    const names = new Set<string>();
    for (const base of this.bases) {
      try {
        for (const entry of readdirSync(base, { withFileTypes: true })) if (entry.isDirectory()) names.add(entry.name);
      } catch {
        // no directory yet: nothing left over
      }
    }
    let killed = 0;
    for (const name of names) {
      const leftover = new CgroupDirs(name, this.layout, this.options, () => undefined);
      killed += leftover.pids().length;
      await leftover.destroy();
    }
    return { removed: [...names], killed };
  }

  async close(): Promise<void> {
    await Promise.all([...this.destroying]);
    for (const base of this.bases) {
      for (const dir of [base, path.dirname(base)]) {
        try {
          rmdirSync(dir);
        } catch {
          // not empty (another sidecar's, or a child that would not die): left as it is
        }
      }
    }
  }
}

class CgroupDirs implements SessionCgroup {
  readonly name: string;
  private readonly layout: CgroupLayout;
  private readonly options: OpenCgroupsOptions;
  private readonly track: (destroying: Promise<void>) => void;
  private destroying: Promise<void> | undefined;
  private oomReported = 0;

  constructor(name: string, layout: CgroupLayout, options: OpenCgroupsOptions, track: (destroying: Promise<void>) => void) {
    this.name = name;
    this.layout = layout;
    this.options = options;
    this.track = track;
  }

  private dir(base: string): string {
    return path.join(base, this.name);
  }

  private get dirs(): string[] {
    const layout = this.layout;
    if (layout.version === "v2") return [this.dir(layout.unified)];
    return [layout.memory, layout.pids, layout.freezer].filter((base): base is string => base !== undefined).map((base) => this.dir(base));
  }

  private get memoryDir(): string {
    return this.dir(this.layout.version === "v2" ? this.layout.unified : this.layout.memory);
  }

  get procsFiles(): string[] {
    return this.dirs.map((dir) => path.join(dir, "cgroup.procs"));
  }

  /** What making this cgroup writes: its directories, then each cap's file (`optional`: absent where the kernel lacks it). */
  private plan(caps: SessionCaps): { dirs: string[]; files: { file: string; text: string; optional?: boolean }[] } {
    const layout = this.layout;
    const bytes = String(caps.memoryMb * 1024 * 1024);
    const files: { file: string; text: string; optional?: boolean }[] = [];
    if (layout.version === "v1") {
      if (caps.memoryMb > 0) {
        const memory = this.dir(layout.memory);
        files.push({ file: path.join(memory, "memory.limit_in_bytes"), text: bytes });
        // memory+swap at the same number: swapping does not stretch the cap (absent without swap accounting)
        files.push({ file: path.join(memory, "memory.memsw.limit_in_bytes"), text: bytes, optional: true });
      }
      if (caps.pidsMax > 0 && layout.pids !== undefined) files.push({ file: path.join(this.dir(layout.pids), "pids.max"), text: String(caps.pidsMax) });
    } else {
      const dir = this.dir(layout.unified);
      if (caps.memoryMb > 0) {
        files.push({ file: path.join(dir, "memory.max"), text: bytes });
        files.push({ file: path.join(dir, "memory.swap.max"), text: "0", optional: true });
      }
      if (caps.pidsMax > 0) files.push({ file: path.join(dir, "pids.max"), text: String(caps.pidsMax) });
    }
    return { dirs: this.dirs, files };
  }

  /** Makes the cgroup at startup (the trial). */
  makeNow(caps: SessionCaps): void {
    const { dirs, files } = this.plan(caps);
    for (const dir of dirs) mkdirSync(dir);
    for (const { file, text, optional } of files) {
      try {
        writeFileSync(file, text);
      } catch (error) {
        if (!optional || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }

  /**
   * Makes the cgroup of a spawn off the event loop: a cgroup's mkdir is the kernel's slow part of
   * a start (~4 ms each, 0.6 s of the loop's time when 150 sessions resumed after a restart).
   */
  async make(caps: SessionCaps): Promise<void> {
    const { dirs, files } = this.plan(caps);
    for (const dir of dirs) await mkdir(dir);
    for (const { file, text, optional } of files) {
      try {
        await writeFile(file, text);
      } catch (error) {
        if (!optional || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }

  /** Removes the directories this object made while nothing runs in them (errors ignored). */
  removeEmpty(): void {
    for (const dir of this.dirs) {
      try {
        rmdirSync(dir);
      } catch {
        // absent, or not empty: destroy() is the way for those
      }
    }
  }

  wrap(launch: CliLaunch): CliLaunch {
    return { ...launch, file: "/bin/sh", args: [cgroupEnterScript, ...this.procsFiles, "--", launch.file, ...launch.args] };
  }

  facts(): CgroupExitFacts {
    const file = this.layout.version === "v1" ? "memory.oom_control" : "memory.events";
    return { oomKills: oomKillCount(read(path.join(this.memoryDir, file))) };
  }

  pids(): number[] {
    return [...new Set(this.dirs.flatMap(readPids))];
  }

  destroy(): Promise<void> {
    if (this.destroying === undefined) {
      this.destroying = this.killAndRemove().catch(() => undefined);
      this.track(this.destroying);
    }
    return this.destroying;
  }

  private async killAndRemove(): Promise<void> {
    const pollMs = this.options.pollMs ?? 20;
    const killWaitMs = this.options.killWaitMs ?? 5_000;
    const layout = this.layout;
    const freezer = layout.version === "v1" && layout.freezer !== undefined ? this.dir(layout.freezer) : undefined;
    const killFile = layout.version === "v2" ? path.join(this.dir(layout.unified), "cgroup.kill") : undefined;
    const killEach = () => {
      for (const pid of this.pids()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
    };
    if (this.pids().length > 0) {
      if (killFile !== undefined && read(killFile) !== undefined) {
        writeFileSync(killFile, "1");
      } else if (freezer !== undefined) {
        // Frozen, nothing inside can fork while the list is read and killed; the kills land at the thaw.
        const state = path.join(freezer, "freezer.state");
        writeFileSync(state, "FROZEN");
        for (let waited = 0; read(state)?.trim() !== "FROZEN" && waited < 1_000; waited += pollMs) await sleep(pollMs);
        killEach();
        writeFileSync(state, "THAWED");
      } else {
        killEach();
      }
    }
    for (let waited = 0; this.pids().length > 0 && waited < killWaitMs; waited += pollMs) {
      // Without a freezer a fork may race the list: kill again until nothing is left.
      killEach();
      await sleep(pollMs);
    }
    const oomKills = this.facts().oomKills - this.oomReported;
    this.oomReported += oomKills;
    if (oomKills > 0) this.options.onOomKills?.(oomKills);
    for (const dir of this.dirs) {
      // A dying task leaves the list a moment before rmdir accepts: a few tries.
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") break;
          if (code !== "EBUSY" || attempt === 49) throw error;
          await sleep(pollMs);
        }
      }
    }
  }
}

/**
 * Whether a child's exit is the kernel's OOM killer at the session's cap: it died by SIGKILL and
 * its memory cgroup counted an OOM kill. The message the session's log shows, else undefined.
 */
export function oomExitReason(exit: { signal: string | null }, facts: CgroupExitFacts | undefined, caps: SessionCaps): string | undefined {
  if (facts === undefined || exit.signal !== "SIGKILL" || facts.oomKills <= 0 || caps.memoryMb <= 0) return undefined;
  return `The CLI was stopped for exceeding the session's memory cap of ${caps.memoryMb} MB (CONDUIT_SESSION_MEMORY_MB).`;
}

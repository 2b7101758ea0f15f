/**
 * The caps' fallback where cgroups are not usable (an unprivileged sidecar, as the docs
 * recommend, or a container without a writable cgroup tree): each CLI child starts through
 * `prlimit` (util-linux, on every Debian and Ubuntu), which sets its rlimits, soft and hard at the
 * same value, and execs the rest of the argv (the cgroup launcher is not used in this mode; the
 * sandbox's bwrap argv is what prlimit execs). Rlimits are inherited by everything the CLI starts,
 * across bwrap's user namespace, and a process cannot raise its own hard limit.
 *
 * What each holds, and what it does not:
 * - memory: `RLIMIT_DATA` at CONDUIT_SESSION_MEMORY_MB, per process (not the session's sum). Not
 *   `RLIMIT_AS`: node reserves ~10 GB of address space for any WebAssembly memory (every node tool
 *   failed under AS ≤ 8 GB), and the CLI's Bun runtime fails near 1.5 GB of AS, while
 *   RLIMIT_DATA counts only writable private mappings (measured: the CLI needs more than 512 MB
 *   and runs a turn at 768 MB), so it is raised to at least {@link minDataMb}.
 * - processes: `RLIMIT_NPROC` counts every process and thread of the sidecar's *user* on the
 *   host, not the session's: it is set to CONDUIT_SESSION_PIDS_MAX × CONDUIT_SESSION_MAX, a
 *   ceiling that stops a fork bomb before it takes the host's process table; while one session
 *   sits at it, every session's forks fail until that session's CLI ends. Root ignores it (the
 *   status says so and claims no process limit then).
 * - file size: `RLIMIT_FSIZE` at CONDUIT_SESSION_FILE_MB: a write past it fails (SIGXFSZ).
 * - no kill of the whole tree at the end (no cgroup): bwrap's PID namespace does that when the
 *   sandbox is on.
 */
import { execFileSync } from "node:child_process";
import { findOnPath } from "@/server/workspace-agent/host-system";
import { openSessionCgroups, type CapsLimits, type CapsStatus, type OpenCgroupsOptions, type SessionCaps, type SessionCgroup, type SessionConfinement } from "./session-cgroup";
import type { CliLaunch } from "./sandbox";

/** The least RLIMIT_DATA the CLI starts under (measured 768 MB; a margin on top). */
export const minDataMb = 1024;

const MB = 1024 * 1024;

/** Options of {@link openSessionRlimits}. */
export interface RlimitOptions {
  caps: SessionCaps;
  /** RLIMIT_FSIZE in MB (CONDUIT_SESSION_FILE_MB); 0: none. */
  fileSizeMb: number;
  /** CONDUIT_SESSION_MAX: the per-user process ceiling is `pidsMax` times this. */
  sessionMax: number;
  /** Default: `prlimit` on PATH (undefined: not installed). */
  findPrlimit?: () => string | undefined;
  /** Default: the effective uid (root is exempt from RLIMIT_NPROC). */
  uid?: number;
  /** Default: runs `prlimit … -- true` once; resolves with why it failed, or undefined. */
  probe?: (prlimitPath: string, args: readonly string[]) => string | undefined;
}

/** The rlimits of each spawn, or why there are none. */
export type OpenedRlimits = { confinement: SessionConfinement; status: CapsStatus } | { confinement?: undefined; status: CapsStatus };

/** prlimit's arguments and what they hold (pure; `uid` 0 gets no process limit). */
export function rlimitPlan(options: Pick<RlimitOptions, "caps" | "fileSizeMb" | "sessionMax"> & { uid: number }): { args: string[]; limits: CapsLimits; raised: boolean } {
  const { caps } = options;
  const memoryMb = caps.memoryMb > 0 ? Math.max(caps.memoryMb, minDataMb) : null;
  const processes = caps.pidsMax > 0 && options.uid !== 0 ? caps.pidsMax * Math.max(1, options.sessionMax) : null;
  const fileSizeMb = options.fileSizeMb > 0 ? options.fileSizeMb : null;
  const args: string[] = [];
  if (memoryMb !== null) args.push(`--data=${memoryMb * MB}`);
  if (processes !== null) args.push(`--nproc=${processes}`);
  if (fileSizeMb !== null) args.push(`--fsize=${fileSizeMb * MB}`);
  return {
    args,
    limits: { memoryMb, memoryScope: "process", processes, processScope: "user", fileSizeMb },
    raised: memoryMb !== null && memoryMb !== caps.memoryMb,
  };
}

function runProbe(prlimitPath: string, args: readonly string[]): string | undefined {
  const truePath = findOnPath("true");
  if (truePath === undefined) return "no `true` executable on PATH to try prlimit with";
  try {
    execFileSync(prlimitPath, [...args, "--", truePath], { timeout: 5_000, stdio: ["ignore", "ignore", "pipe"] });
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (error instanceof Error ? error.message : String(error));
  }
}

/**
 * Sets up the rlimit fallback: finds `prlimit`, tries it once. Never throws: unusable is
 * `{status: {on: false, reason}}`.
 */
export function openSessionRlimits(options: RlimitOptions): OpenedRlimits {
  const uid = options.uid ?? process.geteuid?.() ?? -1;
  const plan = rlimitPlan({ ...options, uid });
  if (plan.args.length === 0) return { status: { on: false, reason: "no limit to set (memory, processes and file size are all 0, or root ignores the process limit)" } };
  const prlimitPath = (options.findPrlimit ?? (() => findOnPath("prlimit")))();
  if (prlimitPath === undefined) return { status: { on: false, reason: "`prlimit` is not installed (Debian/Ubuntu: apt-get install util-linux)" } };
  const failed = (options.probe ?? runProbe)(prlimitPath, plan.args);
  if (failed !== undefined) return { status: { on: false, reason: `prlimit at ${prlimitPath} does not work here: ${failed}` } };
  const notes = [
    ...(plan.raised ? [`memory limit raised to ${minDataMb} MB per process (the CLI needs about 768 MB to start)`] : []),
    ...(options.caps.pidsMax > 0 && uid === 0 ? ["no process limit: root ignores RLIMIT_NPROC"] : []),
  ];
  let spawns = 0;
  const confinement: SessionConfinement = {
    kind: "rlimit",
    caps: options.caps,
    create: async (sessionId) => rlimitSpawn(`${sessionId}-${++spawns}`, prlimitPath, plan.args),
    cleanLeftovers: async () => ({ removed: [], killed: 0 }),
    close: async () => undefined,
  };
  return {
    confinement,
    status: {
      on: true,
      kind: "rlimit",
      ...(plan.limits.memoryMb !== null ? { memoryMb: plan.limits.memoryMb } : {}),
      ...(plan.limits.processes !== null ? { pidsMax: plan.limits.processes } : {}),
      limits: plan.limits,
      ...(notes.length > 0 ? { reason: notes.join("; ") } : {}),
    },
  };
}

/** One spawn under rlimits: nothing to make or remove, the launch starts through prlimit. */
function rlimitSpawn(name: string, prlimitPath: string, args: readonly string[]): SessionCgroup {
  return {
    name,
    procsFiles: [],
    wrap: (launch: CliLaunch): CliLaunch => ({ ...launch, file: prlimitPath, args: [...args, "--", launch.file, ...launch.args] }),
    facts: () => ({ oomKills: 0 }),
    pids: () => [],
    destroy: async () => undefined,
  };
}

/** The caps in force (cgroups, else rlimits), or why there are none. */
export type OpenedCaps = { confinement: SessionConfinement; status: CapsStatus } | { confinement?: undefined; status: CapsStatus };

/**
 * The per-session caps: cgroups when usable, else the rlimit fallback (its status says why
 * cgroups were not used), else none (the status says why neither).
 */
export function openSessionCaps(
  cgroupOptions: OpenCgroupsOptions,
  rlimitOptions: Omit<RlimitOptions, "caps">,
  open: { cgroups?: typeof openSessionCgroups; rlimits?: typeof openSessionRlimits } = {},
): OpenedCaps {
  const opened = (open.cgroups ?? openSessionCgroups)(cgroupOptions);
  if (opened.cgroups !== undefined) return { confinement: opened.cgroups, status: opened.status };
  const caps = cgroupOptions.caps;
  if (caps.memoryMb <= 0 && caps.pidsMax <= 0 && rlimitOptions.fileSizeMb <= 0) return { status: opened.status };
  const fallback = (open.rlimits ?? openSessionRlimits)({ ...rlimitOptions, caps });
  const why = `cgroups: ${opened.status.reason ?? "not usable"}`;
  if (fallback.confinement === undefined) return { status: { on: false, reason: `${why}; rlimits: ${fallback.status.reason ?? "not usable"}` } };
  return { confinement: fallback.confinement, status: { ...fallback.status, reason: [why, fallback.status.reason].filter(Boolean).join("; ") } };
}

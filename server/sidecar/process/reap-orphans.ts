/**
 * Reaping: CLI children an earlier sidecar left behind (it crashed, or was killed with SIGKILL)
 * keep running, holding memory and their conversation. At start, the sidecar hands the pids it
 * recorded (Session.pid) to `reapOrphans`, which ends the process groups that are still Conduit's
 * `claude` children. A pid is only acted on when /proc says it is a group leader running
 * `claude` with Conduit's stream-json flags, so a recycled pid of anything else is left alone.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { globalTimers, killProcessGroup, type KillGroup, type Timers } from "./cli-process";

/** What reaping needs to know about processes; injected so that tests use a made-up table. */
export interface ProcessTable {
  /** argv of `pid` (from /proc/<pid>/cmdline), or undefined when no such process runs. */
  cmdline(pid: number): string[] | undefined;
  /** The process group of `pid`, or undefined when no such process runs. */
  processGroup(pid: number): number | undefined;
  /** True while `pid` exists and is not a zombie. */
  isAlive(pid: number): boolean;
  killGroup: KillGroup;
}

/** What happened to each pid. */
export interface ReapReport {
  /** Groups that were signalled and ended. */
  reaped: number[];
  /** Groups still running after SIGKILL and the wait (should not happen). */
  survived: number[];
  /** Pids left alone, and why. */
  skipped: Array<{ pid: number; reason: "not-running" | "not-claude" | "not-group-leader" | "invalid-pid" | "self" }>;
}

/** Options of {@link reapOrphans}. */
export interface ReapOptions {
  table?: ProcessTable;
  timers?: Timers;
  /** Time between SIGTERM and SIGKILL. Default 2000 ms. */
  termGraceMs?: number;
  /** How often to look whether the groups ended. Default 50 ms. */
  pollMs?: number;
  /** Also accepted as the executable (resolveClaudeBinary()), besides names `claude` / `claude.exe`. */
  cliPath?: string;
}

/** The real process table (Linux /proc). */
export const procProcessTable: ProcessTable = {
  cmdline(pid) {
    try {
      const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return raw.split("\0").filter((part, index, all) => part !== "" || index < all.length - 1);
    } catch {
      return undefined;
    }
  },
  processGroup(pid) {
    const fields = readStat(pid);
    return fields === undefined ? undefined : Number(fields[2]);
  },
  isAlive(pid) {
    const fields = readStat(pid);
    return fields !== undefined && fields[0] !== "Z" && fields[0] !== "X";
  },
  killGroup: killProcessGroup,
};

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, … */
function readStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may itself contain spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** True when argv is a `claude` child started the way Conduit starts them. */
export function isConduitClaudeCommand(argv: readonly string[], cliPath?: string): boolean {
  // A sandboxed child is bwrap running claude after `--`: judge the command inside.
  if (argv[0] !== undefined && path.basename(argv[0]) === "bwrap") {
    const separator = argv.indexOf("--");
    return separator !== -1 && isConduitClaudeCommand(argv.slice(separator + 1), cliPath);
  }
  const executable = argv[0];
  if (executable === undefined) return false;
  const name = path.basename(executable);
  const isClaude = name === "claude" || name === "claude.exe" || (cliPath !== undefined && executable === cliPath);
  if (!isClaude) return false;
  const inputFormat = argv.indexOf("--input-format");
  return inputFormat !== -1 && argv[inputFormat + 1] === "stream-json";
}

/** Ends the process groups of `pids` that are still Conduit's claude children: SIGTERM, grace, SIGKILL. */
export async function reapOrphans(pids: readonly number[], options: ReapOptions = {}): Promise<ReapReport> {
  const table = options.table ?? procProcessTable;
  const timers = options.timers ?? globalTimers;
  const termGraceMs = options.termGraceMs ?? 2000;
  const pollMs = options.pollMs ?? 50;
  const report: ReapReport = { reaped: [], survived: [], skipped: [] };
  const targets: number[] = [];
  for (const pid of new Set(pids)) {
    if (!Number.isInteger(pid) || pid <= 1) report.skipped.push({ pid, reason: "invalid-pid" });
    else if (pid === process.pid) report.skipped.push({ pid, reason: "self" });
    else {
      const argv = table.cmdline(pid);
      if (argv === undefined || !table.isAlive(pid)) report.skipped.push({ pid, reason: "not-running" });
      else if (!isConduitClaudeCommand(argv, options.cliPath)) report.skipped.push({ pid, reason: "not-claude" });
      // Conduit spawns every child as the leader of its own group; anything else is not ours.
      else if (table.processGroup(pid) !== pid) report.skipped.push({ pid, reason: "not-group-leader" });
      else targets.push(pid);
    }
  }
  if (targets.length === 0) return report;

  const sleep = (ms: number) => new Promise<void>((resolve) => timers.setTimeout(resolve, ms));
  const waitForEnd = async (waiting: number[], ms: number): Promise<number[]> => {
    let left = waiting.filter((pid) => table.isAlive(pid));
    for (let waited = 0; left.length > 0 && waited < ms; waited += pollMs) {
      await sleep(pollMs);
      left = left.filter((pid) => table.isAlive(pid));
    }
    return left;
  };
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      table.killGroup(pid, name);
    } catch {
      // EPERM: reported as a survivor below
    }
  };

  for (const pid of targets) signal(pid, "SIGTERM");
  const stubborn = await waitForEnd(targets, termGraceMs);
  for (const pid of targets) signal(pid, "SIGKILL"); // also the group's other members
  const survived = await waitForEnd(stubborn, 1000);
  report.survived = survived;
  report.reaped = targets.filter((pid) => !survived.includes(pid));
  return report;
}

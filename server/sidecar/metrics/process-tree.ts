/**
 * The sidecar's CLI children and their memory, read from /proc: every direct child of the
 * sidecar is a CLI (or the bubblewrap around one), and its resident memory is that of its whole
 * process tree (bwrap, the CLI, the tools it runs). Linux only; elsewhere nothing is found.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface ChildTree {
  pid: number;
  /** Processes in the tree, the child included. */
  processes: number;
  /** Resident memory of the tree, bytes. */
  rssBytes: number;
}

function parentOf(procDir: string, pid: number): number | undefined {
  try {
    const stat = readFileSync(path.join(procDir, String(pid), "stat"), "utf8");
    // the command name may hold spaces and parentheses: the fields after the last ")" are fixed
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isFinite(ppid) ? ppid : undefined;
  } catch {
    return undefined; // gone meanwhile
  }
}

function rssOf(procDir: string, pid: number): number {
  try {
    const status = readFileSync(path.join(procDir, String(pid), "status"), "utf8");
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** The trees below `rootPid`, one per direct child. */
export function childTrees(rootPid: number = process.pid, procDir = "/proc"): ChildTree[] {
  let names: string[];
  try {
    names = readdirSync(procDir);
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const ppid = parentOf(procDir, pid);
    if (ppid === undefined) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  return (children.get(rootPid) ?? []).map((pid) => {
    let processes = 0;
    let rssBytes = 0;
    const stack = [pid];
    const seen = new Set<number>();
    while (stack.length > 0) {
      const current = stack.pop()!;
      if (seen.has(current)) continue;
      seen.add(current);
      processes += 1;
      rssBytes += rssOf(procDir, current);
      stack.push(...(children.get(current) ?? []));
    }
    return { pid, processes, rssBytes };
  });
}

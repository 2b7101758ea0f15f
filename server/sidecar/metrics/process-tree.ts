/**
 * The sidecar's CLI children and their memory, read from /proc: every child of the spawn helper
 * and every other direct child of the sidecar but its helpers is a CLI (or the bubblewrap around
 * one), and its resident memory is that of its whole process tree (bwrap, the CLI, the tools it
 * runs). Linux only; elsewhere nothing is found.
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

/**
 * The CLI trees below `rootPid`: one per direct child, and one per child of the spawn helper
 * (`spawn-helper.ts`, which starts the CLIs for the sidecar); the helpers themselves (`helpers`)
 * are not CLIs and are left out, with whatever else they run.
 */
export function childTrees(
  rootPid: number = process.pid,
  procDir = "/proc",
  helpers: { spawner?: number | undefined; others?: readonly (number | undefined)[] } = {},
): ChildTree[] {
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
  const notCli = new Set([helpers.spawner, ...(helpers.others ?? [])]);
  const direct = [
    ...(children.get(rootPid) ?? []).filter((pid) => !notCli.has(pid)),
    ...(helpers.spawner === undefined ? [] : (children.get(helpers.spawner) ?? [])),
  ];
  return direct.map((pid) => {
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

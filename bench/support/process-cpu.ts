/**
 * CPU time by process while a benchmark runs (Linux): every `intervalMs` the run time of every
 * thread of the processes of interest (`/proc/<pid>/task/<tid>/schedstat`, ns), so a window of
 * a turn can be split by who used the machine's cores in it. The sampler itself costs the bench
 * process a few per cent of a core; it is off unless a bench asks for it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

export interface ProcessCpuSampler {
  /** CPU ms each label's processes used between two epoch-ms times (the samples around them). */
  between(from: number, to: number): Map<string, number>;
  stop(): void;
}

interface Sample {
  t: number;
  ns: Map<string, number>;
}

/** Names a process by its command line, or undefined to leave it out. */
export type ProcessLabeler = (cmdline: string, pid: string) => string | undefined;

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function tasksOf(pid: string): string[] | undefined {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
}

/** The CPU a thread has run, ns (`schedstat`'s first field); 0 once it is gone. */
function threadNs(pid: string, tid: string): number {
  return Number(readText(`/proc/${pid}/task/${tid}/schedstat`)?.split(" ")[0] ?? 0);
}

/** The roots and every process below them (pids, from each process's parent in /proc: one scan). */
export function processTree(...roots: number[]): string[] {
  const children = new Map<string, string[]>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = readText(`/proc/${pid}/stat`);
    if (stat === undefined) continue;
    // the fields after the command's closing parenthesis: state, ppid, …
    const ppid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]!;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree: string[] = [];
  const pending = roots.map(String);
  while (pending.length > 0) {
    const pid = pending.pop()!;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU ms one process has used so far, every thread of it, its children not counted (a one-off read). */
export function processCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of tasksOf(String(pid)) ?? []) ns += threadNs(String(pid), tid);
  return ns / 1e6;
}

/** CPU ms the roots and their descendants have used so far, every thread of each (a one-off read, no sampler). */
export function processTreeCpuMs(...roots: number[]): number {
  return processTree(...roots).reduce((ms, pid) => ms + processCpuMs(Number(pid)), 0);
}

export function startProcessCpuSampler(label: ProcessLabeler, intervalMs = 20): ProcessCpuSampler {
  const labels = new Map<string, string>();
  // each process's threads, listed again at every scan (a tick reads only their schedstat files)
  const tasks = new Map<string, string[]>();
  const samples: Sample[] = [];
  let scanned = 0;
  const now = () => performance.timeOrigin + performance.now();
  const scan = () => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid) || labels.has(pid)) continue;
      const cmdline = readText(`/proc/${pid}/cmdline`)?.replaceAll("\0", " ");
      const name = cmdline === undefined ? undefined : label(cmdline, pid);
      if (name !== undefined) labels.set(pid, name);
    }
    for (const pid of labels.keys()) {
      const list = tasksOf(pid);
      if (list === undefined) labels.delete(pid);
      else tasks.set(pid, list);
    }
  };
  const tick = () => {
    const t = now();
    if (t - scanned > 1000) {
      scanned = t;
      scan();
    }
    const ns = new Map<string, number>();
    for (const [pid, name] of labels) {
      let run = 0;
      for (const tid of tasks.get(pid) ?? []) run += threadNs(pid, tid);
      ns.set(`${name}\0${pid}`, run);
    }
    samples.push({ t, ns });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  const at = (t: number): Sample | undefined => samples.find((s) => s.t >= t) ?? samples.at(-1);
  return {
    between(from, to) {
      const a = at(from);
      const b = at(to);
      const out = new Map<string, number>();
      if (!a || !b) return out;
      for (const [key, end] of b.ns) {
        const start = a.ns.get(key);
        if (start === undefined) continue;
        const name = key.slice(0, key.indexOf("\0"));
        // a thread that ended between two scans takes its time with it: never below zero
        out.set(name, (out.get(name) ?? 0) + Math.max(0, end - start) / 1e6);
      }
      return out;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * CPU ms the whole machine has spent so far, every core (`/proc/stat`'s first line: user, nice,
 * system, irq, softirq and steal; idle and iowait left out), at the kernel's tick (10 ms a core).
 */
export function machineCpuMs(): number {
  const fields = (readText("/proc/stat") ?? "").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return ((user + nice + system + irq + softirq + steal) * 1000) / 100;
}

/** CPU ms used so far by the processes of each command name (`/proc/<pid>/comm`), summed per name, in one scan. */
export function commandCpuMs<Name extends string>(...comms: Name[]): Record<Name, number> {
  const ms = Object.fromEntries(comms.map((comm) => [comm, 0])) as Record<Name, number>;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const comm = readText(`/proc/${pid}/comm`)?.trim();
    if (comm !== undefined && Object.hasOwn(ms, comm)) ms[comm as Name] += processCpuMs(Number(pid));
  }
  return ms;
}

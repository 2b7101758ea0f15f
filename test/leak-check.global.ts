// Fails the integration run when a test left a process behind. Every process a test starts
// carries CONDUIT_LEAK_TAG (set here, inherited by the workers, and passed on by test/cli-env
// and by the supervisor's environment allow-list), so this run's leftovers are found by tag —
// also after they were reparented — and other runs on the machine are left alone.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The variable that marks every process started by this test run. */
export const leakTagVariable = "CONDUIT_LEAK_TAG";

function taggedProcesses(tag: string): { pid: number; cmd: string }[] {
  const needle = `${leakTagVariable}=${tag}`;
  const found: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!environ.includes(needle)) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      // vitest's own workers inherit the tag too; they are not leaks
      if (/vitest|tinypool|node_modules\/\.bin/.test(cmd) || cmd === "") continue;
      found.push({ pid, cmd });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

export default function setup() {
  const tag = process.env[leakTagVariable] ?? randomUUID();
  process.env[leakTagVariable] = tag;
  return async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const leaked = taggedProcesses(tag);
    for (const { pid } of leaked) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (leaked.length > 0) throw new Error(`integration tests leaked child processes: ${JSON.stringify(leaked)}`);
  };
}

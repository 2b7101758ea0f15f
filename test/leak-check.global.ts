// Fails the integration run when a test left a CLI child (real or fake) running. A process
// matching the pattern that did not exist before the run and still exists after it leaked.
import { execFileSync } from "node:child_process";

const pattern = /claude-code|fake-cli|bin\/claude/;

function cliProcesses(): Map<number, string> {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  const found = new Map<number, string>();
  for (const line of out.split("\n")) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (m && pattern.test(m[2] ?? "") && !/ps -eo/.test(m[2] ?? "")) found.set(Number(m[1]), m[2] ?? "");
  }
  return found;
}

export default function setup() {
  const before = cliProcesses();
  return async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const leaked = [...cliProcesses()].filter(([pid]) => !before.has(pid));
    if (leaked.length > 0) {
      for (const [pid] of leaked) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      throw new Error(`integration tests leaked child processes: ${JSON.stringify(leaked)}`);
    }
  };
}

/**
 * The README's first command, run as a newcomer runs it: a copy of the working tree as a clone
 * would be (tracked and untracked-but-not-ignored files only: no `data/`, no `.env`, no
 * generated client), started with `npm install && npm start` under a scrubbed environment.
 *
 * To keep CI time flat it reuses the suite's install and build: `node_modules` is copied as hard
 * links (npm then finds it up to date and only runs the postinstall), and `.next` is copied whole
 * with its timestamps, so `npm start` sees a build newer than the sources and does not rebuild.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { acceptsTcp } from "../../scripts/tcp-probe";

/** A copy of `repo` as a fresh clone plus the suite's install and build. */
export function makeFreshClone(repo: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-clone-"));
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repo })
    .toString()
    .split("\0")
    .filter((f) => f !== "" && existsSync(path.join(repo, f)));
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(repo, file), path.join(dir, file), { preserveTimestamps: true });
  }
  // hard links: instant, and npm replaces rather than rewrites files it changes
  execFileSync("cp", ["-al", path.join(repo, "node_modules"), path.join(dir, "node_modules")]);
  if (existsSync(path.join(repo, ".next", "BUILD_ID"))) {
    // a real copy: `next start` writes into .next, which must not reach the suite's build
    execFileSync("cp", ["-a", path.join(repo, ".next"), path.join(dir, ".next")]);
  }
  return dir;
}

/** Ports nobody listens on right now, chosen by the kernel. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<net.Server>((resolve) => {
      const server = net.createServer();
      server.listen(0, "127.0.0.1", () => resolve(server));
    })),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** True when something accepts connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
  return acceptsTcp(port);
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StartedConduit {
  /** The URL `npm start` printed in its ready line. */
  url: string;
  child: ChildProcess;
  /** Everything printed so far. */
  output: () => string;
  /** Ctrl-C as a terminal sends it (SIGINT to the whole process group); resolves with how `sh` ended. */
  interrupt: () => Promise<Exit>;
}

/**
 * Runs the README's start command in `dir` with only `PATH`, `HOME` and `extraEnv` set, and
 * waits for its `ready … open <url>` line.
 */
export async function startLikeReadme(dir: string, extraEnv: Record<string, string>, timeoutMs: number): Promise<StartedConduit> {
  // nothing else: no NODE_ENV, no CI, no variable of the suite's own Conduit
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? os.homedir(), ...extraEnv } as Record<string, string> as NodeJS.ProcessEnv;
  // detached: its own process group, as a terminal's foreground job is
  const child = spawn("sh", ["-c", "npm install && npm start"], { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no ready line within ${timeoutMs / 1000} s:\n${output.slice(-4000)}`)), timeoutMs);
    const check = () => {
      const match = /\[conduit\] ready in [\d.]+ s: open (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${signal ?? code}) before it was ready:\n${output.slice(-4000)}`));
    });
  });

  return {
    url,
    child,
    output: () => output,
    interrupt: async () => {
      try {
        process.kill(-child.pid!, "SIGINT");
      } catch {
        // already gone
      }
      return exited;
    },
  };
}

/** True while any process of the group `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export function removeClone(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

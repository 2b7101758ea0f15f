/**
 * The bubblewrap command line of a door process. Pure (the host is inspected by the caller), so
 * every rule is unit-tested. Tighter than a session's sandbox, since a door needs no network,
 * no shell profile and no TLS roots:
 * - every namespace unshared (`--unshare-all`: user, pid, net, ipc, uts, cgroup), an
 *   unprivileged uid and gid inside, no user namespace below it (`--disable-userns`), no
 *   capability, its own session (no terminal to push keys into), gone with its parent;
 * - an empty root with the system directories, the loader's files and `passwd`/`group` read-only,
 *   the door's own script and git config read-only, its own `/dev`, `/proc`, `/tmp` and HOME;
 * - the directories of its scope read-write at their real paths, and the workspaces nested in
 *   its workspace covered by an empty tmpfs.
 * Nothing else of the host is there: no data directory, no checkout, no other workspace.
 */
import path from "node:path";
import type { SystemEntry } from "./host-system";

/** `/etc` entries a door needs: user names (git, node), the loader, the time zone. */
export const doorEtcAllowList: readonly string[] = ["passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives"];

/** Top-level system directories a door sees read-only. */
export const doorSystemDirs: readonly string[] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The uid and gid a door runs as inside its user namespace (mapped to Conduit's own outside). */
export const doorUid = 1000;

/** The door's HOME inside (an empty tmpfs). */
export const doorHome = "/home/door";

export interface DoorSandboxInput {
  system: readonly SystemEntry[];
  /** Files and directories shown read-only at their own path: the node binary's directory, the door's script, its git config. */
  readOnly: readonly string[];
  /** Directories shown read-write at their own path (the scope's). */
  readWrite: readonly string[];
  /** Directories inside a read-write one covered by an empty tmpfs (nested workspaces). */
  hidden: readonly string[];
  /** The program run inside and its arguments. */
  file: string;
  args: readonly string[];
}

/** A path bwrap can take as an argument: absolute, normalized, no NUL, not `/` (the session sandbox uses it too). */
export function checkedPath(what: string, value: string): string {
  if (!path.isAbsolute(value) || value.includes("\0") || path.normalize(value) !== value || value === "/") {
    throw new Error(`${what} must be an absolute, normalized path other than /: ${JSON.stringify(value)}`);
  }
  return value;
}

/** Whether `candidate` is `parent` or lies under it. */
export function isSameOrInside(parent: string, candidate: string): boolean {
  const rel = path.relative(parent, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The bwrap argv (without the executable) of a door. */
export function buildDoorSandboxArgv(input: DoorSandboxInput): string[] {
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--uid",
    String(doorUid),
    "--gid",
    String(doorUid),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
  ];
  for (const entry of input.system) {
    const at = checkedPath("system path", entry.path);
    if (entry.kind === "symlink") args.push("--symlink", entry.target, at);
    else args.push("--ro-bind", at, at);
  }
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", doorHome);
  for (const at of input.readOnly) args.push("--ro-bind", checkedPath("read-only path", at), checkedPath("read-only path", at));
  const rw = input.readWrite.map((dir) => checkedPath("read-write path", dir));
  for (const dir of rw) {
    if (input.system.some((entry) => isSameOrInside(entry.path, dir) || isSameOrInside(dir, entry.path))) {
      throw new Error(`A door's read-write directory (${dir}) must lie apart from the system directories`);
    }
    args.push("--bind", dir, dir);
  }
  for (const dir of input.hidden) {
    const at = checkedPath("hidden path", dir);
    if (!rw.some((parent) => isSameOrInside(parent, at) && parent !== at)) throw new Error(`A hidden directory (${at}) must lie inside a read-write one`);
    args.push("--tmpfs", at);
  }
  args.push("--chdir", "/", "--", input.file, ...input.args);
  return args;
}

/** The environment of a door: nothing of the caller's. */
export function doorEnv(home: string): Record<string, string> & { NODE_ENV: "production" } {
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, TMPDIR: "/tmp", LANG: "C", LC_ALL: "C", NODE_ENV: "production" };
}

/**
 * The bubblewrap command line around one `claude` child. Pure: what exists on the host is
 * looked up by the caller (`sandbox.ts`) and handed in, so every rule here is unit-tested.
 *
 * Deny by default: the child starts in an empty root and sees only what is bound below —
 * system directories and the CLI's install read-only, its workspace and its CLI config
 * directory read-write at their real absolute paths (transcripts and diffs name real paths),
 * a private `/tmp` and `HOME`, its own `/dev` and `/proc`. Conduit's data directory, the
 * checkout, other workspaces and the sidecar's home are simply not there.
 *
 * Why these flags:
 * - `--unshare-pid` + `--die-with-parent`: bwrap's init is PID 1 of a namespace of its own, so
 *   when the CLI ends (or the sidecar dies) every process the session started ends with it,
 *   `setsid` daemons and `nohup` jobs included — they cannot leave the namespace.
 * - no `--new-session`: the sidecar already spawns bwrap in a new session without a terminal
 *   (no TIOCSTI to fear), and the CLI must stay in bwrap's process group so that the stop
 *   escalation's SIGTERM to the group reaches it directly.
 * - `--cap-drop ALL`: a session running as root inside has no capability, so it cannot remount,
 *   ptrace or reach past its binds.
 * - the network namespace stays shared in an `open` workspace: tools need it (WebFetch, package
 *   installs) and the CLI reaches the credential proxy on loopback. A narrowed workspace (`none`,
 *   `allowlist`) gets `--unshare-net`: a loopback of its own and no route out; what it may still
 *   reach comes in as Unix sockets in `privateNetwork.socketDir` (see `server/sidecar/network`).
 */
import path from "node:path";

import type { SystemEntry } from "@/server/workspace-agent/host-system";

export type { SystemEntry };

/** What the sandbox of one child is made of. */
export interface SandboxArgvInput {
  /** The bwrap executable. */
  bwrapPath: string;
  /** System directories and files to show read-only (`/usr`, `/bin`, chosen `/etc` entries…), as found on the host. */
  system: readonly SystemEntry[];
  /** Directories shown read-only at the same path: the CLI's install, an interpreter's script dir. */
  readOnly: readonly string[];
  /** The workspace (real path): read-write, and the child's working directory. */
  workspaceRoot: string;
  /** The child's working directory when not the workspace root: a folder inside it (a session's worktree). */
  cwd?: string;
  /** The CLI config directory of this workspace (real path): read-write. */
  configDir: string;
  /** The private HOME inside the sandbox (an empty tmpfs). */
  home: string;
  /** The program to run inside and its arguments. */
  file: string;
  args: readonly string[];
  /** A network namespace of its own (narrowed workspaces), with this directory of sockets bound in at its path. */
  privateNetwork?: { socketDir: string } | undefined;
}

/** `/etc` entries a session may see: name service, TLS roots, time, loader, shells. No shadow, no keys. */
export const etcAllowList: readonly string[] = [
  "passwd",
  "group",
  "nsswitch.conf",
  "hosts",
  "host.conf",
  "hostname",
  "resolv.conf",
  "gai.conf",
  "services",
  "protocols",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "pki",
  "crypto-policies",
  "localtime",
  "timezone",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "bash.bashrc",
  "profile",
  "inputrc",
  "gitconfig",
  "mime.types",
  "magic",
  "os-release",
  "debian_version",
  "lsb-release",
  "terminfo",
  "locale.alias",
  "locale.conf",
];

/** Top-level system directories a session may see (read-only). */
export const systemDirAllowList: readonly string[] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** A path bwrap can take as an argument: absolute, normalized, no NUL. */
function checkedPath(what: string, value: string): string {
  if (!path.isAbsolute(value) || value.includes("\0") || path.normalize(value) !== value || value === "/") {
    throw new Error(`${what} must be an absolute, normalized path other than /: ${JSON.stringify(value)}`);
  }
  return value;
}

/** The bwrap argv (without the executable) that runs `file args` in the session's sandbox. */
export function buildSandboxArgv(input: SandboxArgvInput): string[] {
  const workspace = checkedPath("workspaceRoot", input.workspaceRoot);
  const configDir = checkedPath("configDir", input.configDir);
  const home = checkedPath("home", input.home);
  const cwd = input.cwd === undefined ? workspace : checkedPath("cwd", input.cwd);
  if (!isSameOrInside(workspace, cwd)) throw new Error(`The working directory (${cwd}) must be inside the workspace (${workspace})`);
  if (isSameOrInside(configDir, workspace) || isSameOrInside(workspace, configDir)) {
    // One inside the other would let a session rewrite its own CLI config from its workspace.
    throw new Error(`The workspace (${workspace}) and the CLI config directory (${configDir}) must be apart`);
  }
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL"];
  if (input.privateNetwork !== undefined) args.push("--unshare-net");
  for (const entry of input.system) {
    const at = checkedPath("system path", entry.path);
    if (entry.kind === "symlink") args.push("--symlink", entry.target, at);
    else args.push("--ro-bind", at, at);
  }
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", home);
  for (const dir of input.readOnly) {
    const at = checkedPath("read-only path", dir);
    args.push("--ro-bind", at, at);
  }
  // Last, so that nothing above can cover them (they may lie under /tmp, as in tests).
  if (input.privateNetwork !== undefined) {
    const sockets = checkedPath("socket directory", input.privateNetwork.socketDir);
    if (isSameOrInside(workspace, sockets) || isSameOrInside(configDir, sockets)) {
      throw new Error(`The socket directory (${sockets}) must lie outside the workspace and the CLI config directory`);
    }
    args.push("--bind", sockets, sockets);
  }
  args.push("--bind", configDir, configDir, "--bind", workspace, workspace);
  args.push("--chdir", cwd, "--", input.file, ...input.args);
  return args;
}

/** The environment inside: private HOME and TMPDIR, and IS_SANDBOX=1 (the CLI's own word for "isolated"). */
export function sandboxEnv(env: Readonly<Record<string, string>>, home: string): Record<string, string> {
  // As root the CLI refuses bypassPermissions unless IS_SANDBOX=1; inside bwrap it is one.
  return { ...env, HOME: home, TMPDIR: "/tmp", IS_SANDBOX: "1" };
}

function isSameOrInside(parent: string, candidate: string): boolean {
  const rel = path.relative(parent, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

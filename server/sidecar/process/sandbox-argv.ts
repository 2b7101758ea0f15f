/**
 * The bubblewrap command line around one `claude` child. Pure: what exists on the host is
 * looked up by the caller (`sandbox.ts`) and handed in, so every rule here is unit-tested.
 *
 * Deny by default: the child starts in an empty root and sees only what is bound below —
 * system directories and the CLI's install read-only, its workspace and its CLI config
 * directory read-write at their real absolute paths (transcripts and diffs name real paths),
 * a private `/tmp` and `HOME` of a fixed size, its own `/dev` and `/proc`. Conduit's data
 * directory, the checkout, other workspaces and the sidecar's home are simply not there.
 *
 * Why these flags:
 * - `--unshare-pid` + `--die-with-parent`: bwrap's init is PID 1 of a namespace of its own, so
 *   when the CLI ends (or the sidecar dies) every process the session started ends with it,
 *   `setsid` daemons and `nohup` jobs included — they cannot leave the namespace.
 * - no `--new-session`: the sidecar already spawns bwrap in a new session without a terminal
 *   (no TIOCSTI to fear), and the CLI must stay in bwrap's process group so that the stop
 *   escalation's SIGTERM to the group reaches it directly.
 * - `--unshare-user --uid 1000 --gid 1000 --disable-userns`: an unprivileged user inside (not
 *   root, whatever the sidecar runs as), mapped to the sidecar's own user outside — files it
 *   writes in the workspace belong to the sidecar's user on the host; no further user namespace
 *   can be made inside (no second root to gain capabilities in).
 * - `--cap-drop ALL`: no capability, so it cannot remount or reach past its binds.
 * - `--seccomp FD` (when given): the filter of `sandbox-seccomp.py` — ptrace, process_vm_*,
 *   pidfd_getfd, the keyring, bpf, perf_event_open, io_uring and userfaultfd fail with EPERM.
 * - `--unshare-net` (when a network is attached, which the sidecar does in every policy): a
 *   loopback of its own and no route out; what it may reach comes in as Unix sockets in
 *   `privateNetwork.socketDir` (see `server/sidecar/network`).
 * - `/etc/passwd` and `/etc/group` are Conduit's own two-line files (`identityFiles`): the host's
 *   list of users is not shown, and uid 1000 is `session` with HOME {@link SandboxArgvInput.home}.
 */
import { checkedPath, isSameOrInside } from "@/server/workspace-agent/door-sandbox";
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
  /** A network namespace of its own, with this directory of sockets bound in at its path. */
  privateNetwork?: { socketDir: string } | undefined;
  /** The file descriptor bwrap reads the compiled seccomp filter from (opened by the launcher). */
  seccompFd?: number | undefined;
  /** Read-only files shown at `/etc/passwd` and `/etc/group` (the sandbox's own user list). */
  identityFiles?: { passwd: string; group: string } | undefined;
  /** Sizes of the private `/tmp` and HOME; default {@link sandboxTmpfsBytes}. */
  tmpfsBytes?: { tmp: number; home: number } | undefined;
}

/** The user and group inside the sandbox (mapped to the sidecar's own user outside). */
export const sandboxUid = 1000;
export const sandboxGid = 1000;

/** Default sizes of the private tmpfs mounts: what a session writes there is memory. */
export const sandboxTmpfsBytes = { tmp: 1024 * 1024 * 1024, home: 512 * 1024 * 1024 } as const;

/**
 * `/etc` entries a session may see: name service, TLS roots, time, loader, shells. No shadow, no
 * keys (`/etc/ssl/private`, `/etc/pki/tls/private` stay out: only the certificate stores are
 * shown), no host user list (`passwd` and `group` come from `identityFiles`).
 */
export const etcAllowList: readonly string[] = [
  "nsswitch.conf",
  "hosts",
  "host.conf",
  "hostname",
  "resolv.conf",
  "gai.conf",
  "services",
  "protocols",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "ca-certificates.conf",
  "pki/tls/certs",
  "pki/tls/cert.pem",
  "pki/ca-trust/extracted",
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
  const tmpfs = input.tmpfsBytes ?? sandboxTmpfsBytes;
  for (const size of [tmpfs.tmp, tmpfs.home]) if (!Number.isSafeInteger(size) || size <= 0) throw new Error(`A tmpfs size must be a positive number of bytes: ${size}`);
  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"];
  args.push("--unshare-user", "--uid", String(sandboxUid), "--gid", String(sandboxGid), "--disable-userns", "--cap-drop", "ALL");
  if (input.seccompFd !== undefined) {
    if (!Number.isInteger(input.seccompFd) || input.seccompFd < 3) throw new Error(`The seccomp file descriptor must be 3 or above: ${input.seccompFd}`);
    args.push("--seccomp", String(input.seccompFd));
  }
  if (input.privateNetwork !== undefined) args.push("--unshare-net");
  for (const entry of input.system) {
    const at = checkedPath("system path", entry.path);
    if (entry.kind === "symlink") args.push("--symlink", entry.target, at);
    else args.push("--ro-bind", at, at);
  }
  if (input.identityFiles !== undefined) {
    args.push("--ro-bind", checkedPath("passwd file", input.identityFiles.passwd), "/etc/passwd");
    args.push("--ro-bind", checkedPath("group file", input.identityFiles.group), "/etc/group");
  }
  // bwrap ≥ 0.8: --perms and --size apply to the --tmpfs that follows them.
  args.push("--dev", "/dev", "--proc", "/proc");
  args.push("--perms", "1777", "--size", String(tmpfs.tmp), "--tmpfs", "/tmp");
  args.push("--perms", "0700", "--size", String(tmpfs.home), "--tmpfs", home);
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

/** The user name of {@link sandboxUid} in the sandbox's `/etc/passwd`. */
export const sandboxUserName = "session";

/** The sandbox's `/etc/passwd` and `/etc/group`: root (unmapped inside), the session's user, nobody. */
export function identityFileContents(home: string): { passwd: string; group: string } {
  return {
    passwd:
      `root:x:0:0:root:/root:/usr/sbin/nologin\n` +
      `${sandboxUserName}:x:${sandboxUid}:${sandboxGid}:Conduit session:${home}:/bin/bash\n` +
      `nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\n${sandboxUserName}:x:${sandboxGid}:\nnogroup:x:65534:\n`,
  };
}

/** The environment inside: private HOME and TMPDIR, the session's user name, and IS_SANDBOX=1 (the CLI's own word for "isolated"). */
export function sandboxEnv(env: Readonly<Record<string, string>>, home: string): Record<string, string> {
  // Not root inside any more; IS_SANDBOX=1 still tells the CLI it is isolated (it only matters to it as root).
  return { ...env, HOME: home, TMPDIR: "/tmp", USER: sandboxUserName, LOGNAME: sandboxUserName, IS_SANDBOX: "1" };
}

/** Conduit's own directories, which no path bound into a session's sandbox may contain. */
export interface ProtectedPaths {
  checkout?: string | undefined;
  dataDir?: string | undefined;
  workspacesRoot?: string | undefined;
}

/**
 * Why the sandbox would show Conduit's own files, or undefined: one of `protect` lies at or under a
 * path bound into every session's sandbox (`/usr/src/app` under `/usr`, a data directory inside
 * the CLI's install…). Paths are compared as given: pass real paths.
 */
export function sandboxLayoutProblem(protect: ProtectedPaths, bound: readonly string[]): string | undefined {
  const clashes: string[] = [];
  for (const [name, dir] of Object.entries(protect)) {
    if (dir === undefined) continue;
    for (const at of bound) if (isSameOrInside(at, dir)) clashes.push(`the ${name === "dataDir" ? "data directory" : name === "workspacesRoot" ? "workspaces root" : "checkout"} ${dir} lies under ${at}`);
  }
  if (clashes.length === 0) return undefined;
  return (
    `Conduit refuses to start: ${clashes.join("; ")}, which every session's sandbox shows (read-only), so sessions would read Conduit's own files. ` +
    `Move it out of ${[...new Set(bound.filter((at) => clashes.some((c) => c.endsWith(` ${at}`))))].join(", ")} (for example to /srv/conduit or /opt/conduit).`
  );
}

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  buildSandboxArgv,
  etcAllowList,
  identityFileContents,
  sandboxEnv,
  sandboxLayoutProblem,
  sandboxTmpfsBytes,
  systemDirAllowList,
  type SandboxArgvInput,
} from "./sandbox-argv";

const input: SandboxArgvInput = {
  bwrapPath: "/usr/bin/bwrap",
  system: [
    { path: "/usr", kind: "dir" },
    { path: "/bin", kind: "symlink", target: "usr/bin" },
    { path: "/etc/resolv.conf", kind: "file" },
  ],
  readOnly: ["/opt/conduit/node_modules/@anthropic-ai/claude-code-linux-x64"],
  workspaceRoot: "/srv/conduit/data/workspaces/team-a",
  configDir: "/srv/conduit/data/claude-config/ws-1",
  home: "/home/session",
  file: "/opt/conduit/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
  args: ["--output-format", "stream-json"],
};

/** Pairs `flag a b` of the argv, e.g. every `--bind src dest`. */
function mounts(args: string[], flag: string): string[][] {
  const found: string[][] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === flag) found.push([args[i + 1]!, args[i + 2]!]);
  return found;
}

describe("buildSandboxArgv", () => {
  const args = buildSandboxArgv(input);
  const command = args.slice(args.indexOf("--") + 1);
  const options = args.slice(0, args.indexOf("--"));

  it("runs the command after -- in a new PID namespace that dies with its parent, as an unprivileged user without capabilities", () => {
    expect(command).toEqual([input.file, ...input.args]);
    expect(options).toEqual(expect.arrayContaining(["--unshare-pid", "--die-with-parent"]));
    expect(options.join(" ")).toContain("--unshare-user --uid 1000 --gid 1000 --disable-userns --cap-drop ALL");
    // The CLI must stay in bwrap's process group: the stop escalation signals the group.
    expect(options).not.toContain("--new-session");
    // The network is the attachment's to unshare (the sidecar attaches one in every policy).
    expect(options).not.toContain("--unshare-net");
    expect(options).not.toContain("--unshare-all");
    expect(options).not.toContain("--seccomp");
  });

  it("loads the seccomp filter from the descriptor it is given", () => {
    const withFilter = buildSandboxArgv({ ...input, seccompFd: 9 });
    expect(withFilter.slice(0, withFilter.indexOf("--")).join(" ")).toContain("--seccomp 9");
    expect(() => buildSandboxArgv({ ...input, seccompFd: 1 })).toThrow(/3 or above/);
  });

  it("binds only the workspace and the config dir writable, at their own paths, last", () => {
    expect(mounts(options, "--bind")).toEqual([
      [input.configDir, input.configDir],
      [input.workspaceRoot, input.workspaceRoot],
    ]);
    expect(options.slice(-3)).toEqual([input.workspaceRoot, "--chdir", input.workspaceRoot]);
    expect(options).not.toContain("--dev-bind");
  });

  it("shows the system and the CLI install read-only, recreates /usr symlinks, and gives private /tmp, HOME, /dev, /proc", () => {
    expect(mounts(options, "--ro-bind")).toEqual([
      ["/usr", "/usr"],
      ["/etc/resolv.conf", "/etc/resolv.conf"],
      [input.readOnly[0], input.readOnly[0]],
    ]);
    expect(mounts(options, "--symlink")).toEqual([["usr/bin", "/bin"]]);
    expect(options.join(" ")).toContain(
      `--dev /dev --proc /proc --perms 1777 --size ${sandboxTmpfsBytes.tmp} --tmpfs /tmp --perms 0700 --size ${sandboxTmpfsBytes.home} --tmpfs /home/session`,
    );
    // Never the whole root, the data dir or a home directory.
    expect(options.join(" ")).not.toMatch(/--(ro-)?bind \/ /);
    expect(options).not.toContain("/srv/conduit/data");
  });

  it("refuses paths bwrap would misread, and a config dir inside the workspace", () => {
    expect(() => buildSandboxArgv({ ...input, workspaceRoot: "relative/ws" })).toThrow(/absolute/);
    expect(() => buildSandboxArgv({ ...input, workspaceRoot: "/" })).toThrow(/absolute/);
    expect(() => buildSandboxArgv({ ...input, workspaceRoot: "/srv/../etc" })).toThrow(/normalized/);
    expect(() => buildSandboxArgv({ ...input, configDir: `${input.workspaceRoot}/.cfg` })).toThrow(/apart/);
    expect(() => buildSandboxArgv({ ...input, workspaceRoot: "/srv/conduit/data/claude-config" })).toThrow(/apart/);
  });

  it("starts a worktree session in its folder inside the workspace, binding the whole workspace; never a folder outside it", () => {
    const worktree = `${input.workspaceRoot}/.conduit/worktrees/abc123`;
    const inTree = buildSandboxArgv({ ...input, cwd: worktree });
    const opts = inTree.slice(0, inTree.indexOf("--"));
    expect(mounts(opts, "--bind")).toEqual([
      [input.configDir, input.configDir],
      [input.workspaceRoot, input.workspaceRoot],
    ]);
    expect(opts.slice(-2)).toEqual(["--chdir", worktree]);
    expect(() => buildSandboxArgv({ ...input, cwd: "/srv/conduit/data/workspaces/team-b" })).toThrow(/inside the workspace/);
    expect(() => buildSandboxArgv({ ...input, cwd: `${input.workspaceRoot}/../team-b` })).toThrow(/normalized/);
  });

  it("sizes the private /tmp and HOME as asked, and refuses a size that is not a positive byte count", () => {
    const sized = buildSandboxArgv({ ...input, tmpfsBytes: { tmp: 4096, home: 8192 } }).join(" ");
    expect(sized).toContain("--size 4096 --tmpfs /tmp");
    expect(sized).toContain("--size 8192 --tmpfs /home/session");
    expect(() => buildSandboxArgv({ ...input, tmpfsBytes: { tmp: 0, home: 1 } })).toThrow(/positive/);
    expect(() => buildSandboxArgv({ ...input, tmpfsBytes: { tmp: 1.5, home: 1 } })).toThrow(/positive/);
  });

  it("never shows /etc's secrets, the TLS private keys or the host's user list", () => {
    for (const secret of ["shadow", "gshadow", "sudoers", "ssh", "environment", "ssl", "pki", "passwd", "group"]) expect(etcAllowList).not.toContain(secret);
    expect(etcAllowList.filter((name) => name.startsWith("ssl") || name.startsWith("pki"))).toEqual([
      "ssl/certs",
      "ssl/openssl.cnf",
      "pki/tls/certs",
      "pki/tls/cert.pem",
      "pki/ca-trust/extracted",
    ]);
  });

  it("shows its own passwd and group files read-only, after the system binds", () => {
    const files = { passwd: "/opt/conduit/server/sidecar/process/sandbox-etc/passwd", group: "/opt/conduit/server/sidecar/process/sandbox-etc/group" };
    const opts = buildSandboxArgv({ ...input, identityFiles: files });
    expect(mounts(opts, "--ro-bind")).toEqual(expect.arrayContaining([[files.passwd, "/etc/passwd"], [files.group, "/etc/group"]]));
    expect(opts.indexOf(files.passwd)).toBeGreaterThan(opts.indexOf("/etc/resolv.conf"));
  });
});

describe("the sandbox's passwd and group files", () => {
  it("are what identityFileContents says: uid 1000 is `session` with the sandbox's HOME", () => {
    const dir = path.join(import.meta.dirname, "sandbox-etc");
    expect({ passwd: readFileSync(path.join(dir, "passwd"), "utf8"), group: readFileSync(path.join(dir, "group"), "utf8") }).toEqual(identityFileContents("/home/session"));
  });
});

describe("sandboxLayoutProblem", () => {
  const bound = [...systemDirAllowList, "/etc/resolv.conf", "/opt/claude/bin"];

  it("accepts Conduit's directories outside everything bound", () => {
    expect(sandboxLayoutProblem({ checkout: "/srv/conduit", dataDir: "/srv/conduit/data", workspacesRoot: "/var/lib/conduit/ws" }, bound)).toBeUndefined();
    // The CLI's install inside the checkout is the other way round: only that folder is shown.
    expect(sandboxLayoutProblem({ checkout: "/srv/conduit" }, ["/srv/conduit/node_modules/@anthropic-ai/claude-code"])).toBeUndefined();
    expect(sandboxLayoutProblem({ checkout: "/usrx/app" }, bound)).toBeUndefined();
  });

  it("names every directory that lies under a bound path, and the path", () => {
    const problem = sandboxLayoutProblem({ checkout: "/usr/src/app", dataDir: "/usr/src/app/data", workspacesRoot: "/opt/claude/bin/ws" }, bound);
    expect(problem).toMatch(/refuses to start/);
    expect(problem).toContain("the checkout /usr/src/app lies under /usr");
    expect(problem).toContain("the data directory /usr/src/app/data lies under /usr");
    expect(problem).toContain("the workspaces root /opt/claude/bin/ws lies under /opt/claude/bin");
    expect(sandboxLayoutProblem({ dataDir: "/usr" }, bound)).toContain("the data directory /usr lies under /usr");
  });
});

describe("buildSandboxArgv with a private network", () => {
  const socketDir = "/tmp/conduit-net-abc";
  const args = buildSandboxArgv({ ...input, privateNetwork: { socketDir } });
  const options = args.slice(0, args.indexOf("--"));

  it("unshares the network and binds the socket directory at its path, before the workspace", () => {
    expect(options).toContain("--unshare-net");
    expect(mounts(options, "--bind")).toEqual([
      [socketDir, socketDir],
      [input.configDir, input.configDir],
      [input.workspaceRoot, input.workspaceRoot],
    ]);
    // After the private /tmp, or the tmpfs would cover it.
    expect(options.indexOf(socketDir)).toBeGreaterThan(options.indexOf("/tmp"));
  });

  it("keeps the socket directory out of the workspace and the config dir", () => {
    expect(() => buildSandboxArgv({ ...input, privateNetwork: { socketDir: `${input.workspaceRoot}/s` } })).toThrow(/outside/);
    expect(() => buildSandboxArgv({ ...input, privateNetwork: { socketDir: input.configDir } })).toThrow(/outside/);
    expect(() => buildSandboxArgv({ ...input, privateNetwork: { socketDir: "relative" } })).toThrow(/absolute/);
  });
});

describe("sandboxEnv", () => {
  it("points HOME and TMPDIR inside, names the session's user and marks the sandbox for the CLI", () => {
    expect(sandboxEnv({ PATH: "/usr/bin", HOME: "/root", TMPDIR: "/var/tmp/x", USER: "root" }, "/home/session")).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/session",
      TMPDIR: "/tmp",
      USER: "session",
      LOGNAME: "session",
      IS_SANDBOX: "1",
    });
  });
});

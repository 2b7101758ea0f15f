import { describe, expect, it } from "vitest";
import { buildSandboxArgv, etcAllowList, sandboxEnv, type SandboxArgvInput } from "./sandbox-argv";

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

  it("runs the command after -- in a new PID namespace that dies with its parent, without capabilities", () => {
    expect(command).toEqual([input.file, ...input.args]);
    expect(options).toEqual(expect.arrayContaining(["--unshare-pid", "--die-with-parent"]));
    expect(options.join(" ")).toContain("--cap-drop ALL");
    // The CLI must stay in bwrap's process group: the stop escalation signals the group.
    expect(options).not.toContain("--new-session");
    // Tools keep the network (and the CLI reaches the credential proxy on loopback).
    expect(options).not.toContain("--unshare-net");
    expect(options).not.toContain("--unshare-all");
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
    expect(options.join(" ")).toContain("--dev /dev --proc /proc --tmpfs /tmp --tmpfs /home/session");
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

  it("never shows /etc's secrets", () => {
    for (const secret of ["shadow", "gshadow", "sudoers", "ssh", "environment"]) expect(etcAllowList).not.toContain(secret);
  });
});

describe("sandboxEnv", () => {
  it("points HOME and TMPDIR inside and marks the sandbox for the CLI", () => {
    expect(sandboxEnv({ PATH: "/usr/bin", HOME: "/root", TMPDIR: "/var/tmp/x" }, "/home/session")).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/session",
      TMPDIR: "/tmp",
      IS_SANDBOX: "1",
    });
  });
});

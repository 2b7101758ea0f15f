import { describe, expect, it } from "vitest";
import os from "node:os";
import path from "node:path";
import {
  chooseSandbox,
  conduitCheckout,
  createBwrapSandbox,
  findOnPath,
  identityFiles,
  noSandbox,
  sandboxEnterScript,
  SandboxLayoutError,
  SandboxUnavailableError,
  seccompFilterPath,
  type CliSandbox,
} from "./sandbox";

const fakeBwrap: CliSandbox = { mode: "bwrap", wrap: (launch) => launch };
const deps = (found: string | undefined, probe: string | undefined) => ({
  findBwrap: () => found,
  probe: async () => probe,
  create: () => fakeBwrap,
});

describe("chooseSandbox", () => {
  it("off: never isolates, without looking for bubblewrap", async () => {
    const choice = await chooseSandbox("off", "/x/claude", { findBwrap: () => { throw new Error("looked"); } });
    expect(choice).toEqual({ sandbox: noSandbox });
  });

  it("auto and bwrap: bubblewrap when it is found and its trial run works", async () => {
    expect((await chooseSandbox("auto", "/x/claude", deps("/usr/bin/bwrap", undefined))).sandbox.mode).toBe("bwrap");
    expect((await chooseSandbox("bwrap", "/x/claude", deps("/usr/bin/bwrap", undefined))).sandbox.mode).toBe("bwrap");
  });

  it("auto: falls back to no isolation with a warning that says why", async () => {
    const missing = await chooseSandbox("auto", "/x/claude", deps(undefined, undefined));
    expect(missing.sandbox.mode).toBe("off");
    expect(missing.warning).toMatch(/not installed.*NOT isolated/);
    const broken = await chooseSandbox("auto", "/x/claude", deps("/usr/bin/bwrap", "setting up uid map: Permission denied"));
    expect(broken.sandbox.mode).toBe("off");
    expect(broken.warning).toContain("Permission denied");
  });

  it("bwrap: refuses to start without a working bubblewrap", async () => {
    await expect(chooseSandbox("bwrap", "/x/claude", deps(undefined, undefined))).rejects.toThrow(SandboxUnavailableError);
    await expect(chooseSandbox("bwrap", "/x/claude", deps("/usr/bin/bwrap", "no user namespaces"))).rejects.toThrow(
      /CONDUIT_SANDBOX=bwrap, but bubblewrap at \/usr\/bin\/bwrap does not work here: no user namespaces/,
    );
  });
});

describe("findOnPath", () => {
  it("finds an executable on PATH and skips relative entries", () => {
    expect(findOnPath("sh", "relative:/usr/bin:/bin")).toMatch(/\/sh$/);
    expect(findOnPath("no-such-program-conduit", "/usr/bin")).toBeUndefined();
    expect(findOnPath("sh", "bin")).toBeUndefined();
  });
});

describe("createBwrapSandbox", () => {
  const system = [
    { path: "/usr", kind: "dir" as const },
    { path: "/bin", kind: "symlink" as const, target: "usr/bin" },
  ];

  it("launches bwrap through the launcher that opens the seccomp filter, with the sandbox's own passwd", () => {
    const sandbox = createBwrapSandbox({ bwrapPath: "/usr/bin/bwrap", cliPath: "/bin/sh", system });
    const launch = sandbox.wrap({ file: "/bin/sh", args: ["-c", "true"], cwd: "/", env: { PATH: "/usr/bin" } }, { workspaceRoot: os.tmpdir(), configDir: "/usr" });
    expect(launch.file).toBe("/bin/sh");
    expect(launch.args.slice(0, 3)).toEqual([sandboxEnterScript, seccompFilterPath(), "/usr/bin/bwrap"]);
    const joined = launch.args.join(" ");
    expect(joined).toContain("--seccomp 9");
    expect(joined).toContain(`--ro-bind ${identityFiles.passwd} /etc/passwd`);
    expect(launch.env).toMatchObject({ USER: "session", HOME: "/home/session" });
  });

  it("refuses to be made when the checkout, the data directory or the workspaces root lies under a bound path", () => {
    expect(() => createBwrapSandbox({ bwrapPath: "/usr/bin/bwrap", cliPath: "/bin/sh", system, protect: { dataDir: "/usr/local/conduit-data" } })).toThrow(SandboxLayoutError);
    expect(() => createBwrapSandbox({ bwrapPath: "/usr/bin/bwrap", cliPath: "/bin/sh", system, protect: { workspacesRoot: "/usr/src/ws" } })).toThrow(
      /the workspaces root \/usr\/src\/ws lies under \/usr/,
    );
    // The CLI's directory is bound too: a checkout that holds the CLI at its top is refused.
    expect(() => createBwrapSandbox({ bwrapPath: "/usr/bin/bwrap", cliPath: path.join(conduitCheckout, "package.json"), system })).toThrow(/the checkout .* lies under/);
  });
});

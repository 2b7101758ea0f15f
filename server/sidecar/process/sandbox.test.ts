import { describe, expect, it } from "vitest";
import { chooseSandbox, findOnPath, noSandbox, SandboxUnavailableError, type CliSandbox } from "./sandbox";

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

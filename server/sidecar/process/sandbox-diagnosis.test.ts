import { describe, expect, it } from "vitest";
import { detectContainer, diagnoseSandbox, type SandboxHostFacts } from "./sandbox-diagnosis";

const linux: SandboxHostFacts = {
  platform: "linux",
  bwrapPath: "/usr/bin/bwrap",
  probeError: "bwrap: setting up uid map: Permission denied",
  maxUserNamespaces: "63000",
  unprivilegedUsernsClone: undefined,
  apparmorRestrictUnprivilegedUserns: undefined,
  container: undefined,
  seccompFiltered: false,
};

describe("diagnoseSandbox", () => {
  it("macOS: bubblewrap is Linux only", () => {
    expect(diagnoseSandbox({ ...linux, platform: "darwin", bwrapPath: undefined, probeError: undefined })).toMatchObject({ cause: "not_linux", problem: expect.stringContaining("macOS") });
  });

  it("bwrap missing: the package to install", () => {
    const d = diagnoseSandbox({ ...linux, bwrapPath: undefined, probeError: undefined });
    expect(d).toMatchObject({ cause: "bwrap_missing", fix: expect.stringContaining("apt-get install bubblewrap") });
    expect(d).not.toHaveProperty("detail");
  });

  it("user namespaces off: the sysctl", () => {
    expect(diagnoseSandbox({ ...linux, maxUserNamespaces: "0" })).toMatchObject({ cause: "userns_disabled", fix: expect.stringContaining("user.max_user_namespaces=15000") });
    expect(diagnoseSandbox({ ...linux, unprivilegedUsernsClone: "0" })).toMatchObject({ cause: "userns_disabled", fix: expect.stringContaining("kernel.unprivileged_userns_clone=1") });
  });

  it("Ubuntu 24.04's AppArmor rule: a profile for bwrap or the sysctl, and the probe's stderr kept", () => {
    const d = diagnoseSandbox({ ...linux, apparmorRestrictUnprivilegedUserns: "1" });
    expect(d.cause).toBe("apparmor_userns");
    expect(d.fix).toContain("/etc/apparmor.d/bwrap");
    expect(d.fix).toContain("kernel.apparmor_restrict_unprivileged_userns=0");
    expect(d.detail).toBe("bwrap: setting up uid map: Permission denied");
  });

  it("a container's seccomp profile: run with one that allows user namespaces", () => {
    const d = diagnoseSandbox({ ...linux, container: "docker", seccompFiltered: true, probeError: "bwrap: Creating new namespace failed: Operation not permitted\n" });
    expect(d).toMatchObject({ cause: "container_seccomp", problem: expect.stringContaining("seccomp filter"), fix: expect.stringContaining("--security-opt seccomp=") });
    expect(d.detail).toBe("bwrap: Creating new namespace failed: Operation not permitted");
  });

  it("anything else: the probe's own words", () => {
    expect(diagnoseSandbox(linux)).toMatchObject({ cause: "unknown", problem: expect.stringContaining("Permission denied") });
  });
});

describe("detectContainer", () => {
  it("reads the usual marks", () => {
    expect(detectContainer(() => undefined, (f) => f === "/.dockerenv")).toBe("docker");
    expect(detectContainer(() => undefined, (f) => f === "/run/.containerenv")).toBe("podman");
    expect(detectContainer((f) => (f === "/proc/1/cgroup" ? "0::/kubepods/besteffort/pod1" : undefined), () => false)).toBe("kubernetes");
    expect(detectContainer(() => "", () => false)).toBe(process.env.KUBERNETES_SERVICE_HOST ? "kubernetes" : undefined);
  });
});

/**
 * Why bubblewrap does not work on this host, and exactly what to install or which kernel setting
 * blocks it: for the sidecar's log, the refusal of sessions (`isolation-policy.ts`) and the admin
 * page. `diagnoseSandbox` is pure (facts in, the diagnosis out); `readSandboxHostFacts` reads them.
 *
 * The usual causes, in the order they are checked:
 * - not Linux (macOS): bubblewrap is Linux only;
 * - bwrap missing: `apt-get install bubblewrap`;
 * - `user.max_user_namespaces=0`, or Debian's old `kernel.unprivileged_userns_clone=0`;
 * - Ubuntu 23.10+/24.04: `kernel.apparmor_restrict_unprivileged_userns=1` without an AppArmor
 *   profile that gives bwrap `userns`;
 * - a container whose seccomp profile refuses user namespaces (Docker's default one);
 * - else: the probe's own words.
 * The probe's stderr is kept in `detail` whatever the cause.
 */
import { existsSync, readFileSync } from "node:fs";

/** What the diagnosis reads of the host. */
export interface SandboxHostFacts {
  platform: NodeJS.Platform;
  /** Where bwrap is; undefined: not on PATH. */
  bwrapPath: string | undefined;
  /** What the trial run printed (stderr), when it failed. */
  probeError: string | undefined;
  /** /proc/sys values, as read (undefined: absent on this kernel). */
  maxUserNamespaces: string | undefined;
  unprivilegedUsernsClone: string | undefined;
  apparmorRestrictUnprivilegedUserns: string | undefined;
  /** Which container runtime the sidecar runs in, if any. */
  container: "docker" | "podman" | "kubernetes" | "container" | undefined;
  /** This process runs under a seccomp filter (`Seccomp: 2` in /proc/self/status). */
  seccompFiltered: boolean;
}

/** What is wrong and what to do about it. */
export interface SandboxDiagnosis {
  /** A short name of the cause. */
  cause: "not_linux" | "bwrap_missing" | "userns_disabled" | "apparmor_userns" | "container_seccomp" | "unknown";
  /** What is wrong, in a sentence. */
  problem: string;
  /** What the operator should do, in a sentence (commands named exactly). */
  fix: string;
  /** The probe's stderr, as it was. */
  detail?: string;
}

/** The AppArmor profile that lets bwrap make user namespaces under Ubuntu's restriction (docs/SECURITY.md shows it too). */
export const bwrapApparmorProfile = [
  "abi <abi/4.0>,",
  "include <tunables/global>",
  "profile bwrap /usr/bin/bwrap flags=(unconfined) {",
  "  userns,",
  "  include if exists <local/bwrap>",
  "}",
].join("\n");

/** The cause and its fix, from the facts. */
export function diagnoseSandbox(facts: SandboxHostFacts): SandboxDiagnosis {
  const detail = facts.probeError?.trim() ? { detail: facts.probeError.trim() } : {};
  if (facts.platform !== "linux") {
    return {
      cause: "not_linux",
      problem: `bubblewrap needs Linux; this sidecar runs on ${facts.platform === "darwin" ? "macOS" : facts.platform}.`,
      fix: "Run Conduit on a Linux host or in a Linux VM/container with bubblewrap (the Docker image does), or set CONDUIT_SANDBOX=off for a single-user machine.",
      ...detail,
    };
  }
  if (facts.bwrapPath === undefined) {
    return {
      cause: "bwrap_missing",
      problem: "bubblewrap (`bwrap`) is not installed.",
      fix: "Install it: `apt-get install bubblewrap` (Debian/Ubuntu), `dnf install bubblewrap` (Fedora), `apk add bubblewrap` (Alpine); then restart Conduit.",
      ...detail,
    };
  }
  if (facts.maxUserNamespaces?.trim() === "0") {
    return {
      cause: "userns_disabled",
      problem: "The kernel allows no user namespaces (user.max_user_namespaces=0), which bubblewrap needs.",
      fix: "`sysctl -w user.max_user_namespaces=15000`, and the same line in /etc/sysctl.d/99-conduit.conf so it survives a reboot; then restart Conduit.",
      ...detail,
    };
  }
  if (facts.unprivilegedUsernsClone?.trim() === "0") {
    return {
      cause: "userns_disabled",
      problem: "The kernel refuses user namespaces to unprivileged users (kernel.unprivileged_userns_clone=0).",
      fix: "`sysctl -w kernel.unprivileged_userns_clone=1`, and the same line in /etc/sysctl.d/99-conduit.conf; then restart Conduit.",
      ...detail,
    };
  }
  if (facts.apparmorRestrictUnprivilegedUserns?.trim() === "1") {
    return {
      cause: "apparmor_userns",
      problem: "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later), and bwrap has no profile allowing them.",
      fix:
        "Give bwrap an AppArmor profile that allows `userns,` (the file /etc/apparmor.d/bwrap shown in docs/SECURITY.md, loaded with " +
        "`apparmor_parser -r /etc/apparmor.d/bwrap`), or lift the restriction host-wide: `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; then restart Conduit.",
      ...detail,
    };
  }
  if (facts.container !== undefined) {
    return {
      cause: "container_seccomp",
      problem:
        `The sidecar runs in a container (${facts.container})${facts.seccompFiltered ? " under a seccomp filter" : ""} that refuses user namespaces (Docker's default seccomp profile does).`,
      fix:
        "Run the container with a seccomp profile that allows user namespaces (`docker run --security-opt seccomp=<profile allowing clone/unshare with CLONE_NEWUSER>`, " +
        "or `--security-opt seccomp=unconfined`), and on an Ubuntu host also `--security-opt apparmor=unconfined`; then restart the container.",
      ...detail,
    };
  }
  return {
    cause: "unknown",
    problem: `bubblewrap at ${facts.bwrapPath} does not work here${facts.probeError ? `: ${facts.probeError.trim()}` : "."}`,
    fix: "Run `bwrap --unshare-user --unshare-pid --ro-bind / / true` as the sidecar's user to see the error; user namespaces must be allowed for it.",
    ...detail,
  };
}

function readProc(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Which container runtime this process runs in, from the usual marks. */
export function detectContainer(read: (file: string) => string | undefined = readProc, exists: (file: string) => boolean = existsSync): SandboxHostFacts["container"] {
  if (exists("/.dockerenv")) return "docker";
  if (exists("/run/.containerenv")) return "podman";
  if (process.env.KUBERNETES_SERVICE_HOST) return "kubernetes";
  const cgroup = read("/proc/1/cgroup") ?? "";
  if (/docker|containerd/.test(cgroup)) return "docker";
  if (/kubepods/.test(cgroup)) return "kubernetes";
  const env = read("/proc/1/environ") ?? "";
  if (/(^|\0)container=/.test(env)) return "container";
  return undefined;
}

/** The facts of this host; `probeError`: what the trial run of bwrap printed. */
export function readSandboxHostFacts(bwrapPath: string | undefined, probeError: string | undefined): SandboxHostFacts {
  const status = readProc("/proc/self/status") ?? "";
  return {
    platform: process.platform,
    bwrapPath,
    probeError,
    maxUserNamespaces: readProc("/proc/sys/user/max_user_namespaces"),
    unprivilegedUsernsClone: readProc("/proc/sys/kernel/unprivileged_userns_clone"),
    apparmorRestrictUnprivilegedUserns: readProc("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    container: process.platform === "linux" ? detectContainer() : undefined,
    seccompFiltered: /^Seccomp:\s*2$/m.test(status),
  };
}

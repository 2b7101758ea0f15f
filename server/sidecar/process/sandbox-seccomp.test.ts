// The committed seccomp filters (sandbox-seccomp-*.bpf, made by sandbox-seccomp.py with libseccomp)
// verified two ways: each program is run here, by a small classic-BPF interpreter, on the denied
// syscalls, on syscalls a session needs, on a wrong architecture and on x32 numbers; and, where
// python3-seccomp is installed, the generator is run again and its output compared byte for byte.
// The behaviour (ptrace refused while node, git and bash work) is in
// test/security/session-sandbox.integration.test.ts.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { seccompFilterPath } from "./sandbox";

const here = import.meta.dirname;

/** Runs a classic BPF seccomp program on one `struct seccomp_data` (nr, arch; no arguments). */
function runFilter(program: Buffer, data: { nr: number; arch: number }): number {
  const word = (offset: number) => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    throw new Error(`the filter reads seccomp_data at ${offset}: not expected of this filter`);
  };
  let a = 0;
  for (let pc = 0; pc < program.length / 8; ) {
    const at = pc * 8;
    const code = program.readUInt16LE(at);
    const jt = program.readUInt8(at + 2);
    const jf = program.readUInt8(at + 3);
    const k = program.readUInt32LE(at + 4);
    pc++;
    switch (code) {
      case 0x20: // ld [k]
        a = word(k);
        break;
      case 0x54: // and #k
        a = (a & k) >>> 0;
        break;
      case 0x05: // ja
        pc += k;
        break;
      case 0x15: // jeq #k
        pc += a === k ? jt : jf;
        break;
      case 0x25: // jgt #k
        pc += a > k ? jt : jf;
        break;
      case 0x35: // jge #k
        pc += a >= k ? jt : jf;
        break;
      case 0x45: // jset #k
        pc += (a & k) !== 0 ? jt : jf;
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`instruction 0x${code.toString(16)} at ${pc - 1} is not one this interpreter knows`);
    }
  }
  throw new Error("the filter ran off its end");
}

const ALLOW = 0x7fff0000;
const EPERM = 0x00050000 | 1;
const isKill = (action: number) => action === 0 || action === 0x80000000;

const arches = {
  x86_64: {
    audit: 0xc000003e,
    denied: { ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438, keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, userfaultfd: 323 },
    allowed: { read: 0, write: 1, mmap: 9, socket: 41, connect: 42, clone: 56, execve: 59, wait4: 61, unshare: 272, openat: 257, clone3: 435 },
  },
  aarch64: {
    audit: 0xc00000b7,
    denied: { ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438, keyctl: 219, add_key: 217, request_key: 218, bpf: 280, perf_event_open: 241, io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, userfaultfd: 282 },
    allowed: { read: 63, write: 64, openat: 56, socket: 198, connect: 203, clone: 220, execve: 221, mmap: 222, wait4: 260, unshare: 97, clone3: 435 },
  },
} as const;

describe.each(Object.entries(arches))("the %s seccomp filter", (name, arch) => {
  const program = readFileSync(path.join(here, `sandbox-seccomp-${name}.bpf`));

  it("denies each listed syscall with EPERM", () => {
    for (const [syscall, nr] of Object.entries(arch.denied)) expect([syscall, runFilter(program, { nr, arch: arch.audit })]).toEqual([syscall, EPERM]);
  });

  it("allows what a session needs (the rest of the table)", () => {
    for (const [syscall, nr] of Object.entries(arch.allowed)) expect([syscall, runFilter(program, { nr, arch: arch.audit })]).toEqual([syscall, ALLOW]);
    const denied = new Set<number>(Object.values(arch.denied));
    for (let nr = 0; nr < 460; nr++) if (!denied.has(nr)) expect(runFilter(program, { nr, arch: arch.audit })).toBe(ALLOW);
  });

  it("kills a process that calls with another architecture's numbers", () => {
    expect(isKill(runFilter(program, { nr: 26, arch: 0x40000003 }))).toBe(true); // i386 ptrace
    const other = name === "x86_64" ? arches.aarch64.audit : arches.x86_64.audit;
    expect(isKill(runFilter(program, { nr: 0, arch: other }))).toBe(true);
    if (name === "x86_64") expect(isKill(runFilter(program, { nr: 0x40000000 | 101, arch: arch.audit }))).toBe(true); // x32 ptrace
  });
});

describe("seccompFilterPath", () => {
  it("names the filter of x64 and arm64, and none for an architecture without one", () => {
    expect(seccompFilterPath("x64")).toBe(path.join(here, "sandbox-seccomp-x86_64.bpf"));
    expect(seccompFilterPath("arm64")).toBe(path.join(here, "sandbox-seccomp-aarch64.bpf"));
    expect(seccompFilterPath("riscv64")).toBeUndefined();
  });
});

const hasLibseccomp = (() => {
  try {
    execFileSync("/usr/bin/python3", ["-c", "import seccomp"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

// The committed filters are checked above everywhere; regenerating them needs Debian's python3-seccomp,
// which CI does not install: this byte-for-byte comparison runs where it is present.
describe.skipIf(!hasLibseccomp)("the generator (python3-seccomp installed)", () => {
  it("makes the committed files again, byte for byte", () => {
    const out = mkdtempSync(path.join(os.tmpdir(), "conduit-seccomp-"));
    try {
      execFileSync("/usr/bin/python3", [path.join(here, "sandbox-seccomp.py"), out]);
      for (const name of Object.keys(arches)) {
        const file = `sandbox-seccomp-${name}.bpf`;
        expect(existsSync(path.join(out, file))).toBe(true);
        expect(readFileSync(path.join(out, file)).equals(readFileSync(path.join(here, file))), `${file} differs from what sandbox-seccomp.py makes: run it and commit`).toBe(true);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

#!/usr/bin/python3
"""Generates the seccomp filters of a session's sandbox (sandbox.ts loads them; bwrap --seccomp).

    /usr/bin/python3 server/sidecar/process/sandbox-seccomp.py   # apt-get install python3-seccomp

Writes sandbox-seccomp-x86_64.bpf and sandbox-seccomp-aarch64.bpf beside this file: classic BPF
programs made by libseccomp (Debian's python3-seccomp), committed so that no host needs libseccomp
or Python to run Conduit. sandbox-seccomp.test.ts runs each program on the syscalls below, and
regenerates and compares the files when python3-seccomp is installed. Change DENIED here, run
this, commit the three files together.

Every syscall not listed is allowed: the filter takes away what a session has no use for and an
attacker would (reading another process's memory, kernel attack surface), not a list of what a
compiler or a test runner might need.
"""
import errno
import os
import sys

import seccomp

# Each fails with EPERM inside the sandbox.
DENIED = [
    # another process's memory and file descriptors (the CLI's token, other tools' secrets)
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    # the kernel keyring
    "keyctl",
    "add_key",
    "request_key",
    # kernel attack surface with no use in a session
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
]

ARCHES = {"x86_64": seccomp.Arch.X86_64, "aarch64": seccomp.Arch.AARCH64}


def build(arch):
    # A wrong architecture (i386 or x32 system calls on x86_64) kills the process: the numbers
    # below would mean other syscalls there.
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    if not f.exist_arch(arch):
        f.add_arch(arch)
        f.remove_arch(seccomp.Arch.NATIVE)
    for name in DENIED:
        f.add_rule(seccomp.ERRNO(errno.EPERM), name)
    return f


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, arch in ARCHES.items():
        with open(os.path.join(out_dir, f"sandbox-seccomp-{name}.bpf"), "wb") as out:
            build(arch).export_bpf(out)


if __name__ == "__main__":
    main()

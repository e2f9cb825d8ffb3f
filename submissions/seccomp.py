"""A seccomp deny-list for the sandboxed explainer, assembled as a classic-BPF program in pure Python.

bubblewrap loads it (``bwrap --seccomp FD``) just before it executes the run's command, so it holds for every
process of the run and survives ``execve``; ``no_new_privs`` is set by bwrap first. No library is needed: the
program is a short list of ``struct sock_filter`` entries (see ``seccomp(2)`` and ``linux/filter.h``):

1. load ``seccomp_data.arch``; any ABI but x86-64 (the i386 ``int 0x80`` entry) → kill the process;
2. load ``seccomp_data.nr``; the x32 ABI (``nr`` with bit 30 set) → ``EPERM``;
3. ``clone3`` → ``ENOSYS`` (its flags live in a struct a filter cannot read; glibc then falls back to ``clone``);
4. ``clone`` with any namespace flag in its first argument → ``EPERM`` (threads and ``fork`` are untouched);
5. each denied call → ``EPERM``; everything else → allow.

Why a deny-list rather than an allow-list: an explainer runs arbitrary numerical libraries (torch, numpy, BLAS,
tokenizers), whose system calls differ between versions; what an explainer never needs is what reaches into the
kernel's shared state (keyrings, namespaces, mounts, modules, BPF, tracing, other processes' memory, clocks,
swap), and that is what is denied.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# linux/audit.h, linux/seccomp.h, linux/filter.h
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0_LOW = 0, 4, 16  # struct seccomp_data (little-endian: the low half first)

# The namespace flags of clone(2). CLONE_NEWTIME (0x80) is not among them: in clone()'s first argument the low
# byte is the exit signal, and a time namespace can only be made with clone3 or unshare, both denied.
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_NAMESPACE_MASK = sum(CLONE_NAMESPACE_FLAGS.values())

# x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl), grouped by why an explainer has no use
# for them. Each answers EPERM.
DENIED_SYSCALLS_X86_64: dict[str, dict[str, int]] = {
    "kernel keyring (a channel between runs)": {"add_key": 248, "request_key": 249, "keyctl": 250},
    "new or joined namespaces": {"unshare": 272, "setns": 308},
    "tracing and other processes' memory": {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
        "perf_event_open": 298},
    "BPF programs": {"bpf": 321},
    "mounts and file system roots": {
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442},
    "kernel modules and kexec": {
        "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320},
    "swap, reboot, accounting, quotas": {
        "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "quotactl": 179, "quotactl_fd": 443},
    "file handles (open by inode, past the mount namespace)": {"open_by_handle_at": 304, "name_to_handle_at": 303},
    "I/O ports": {"iopl": 172, "ioperm": 173},
    "page-fault handling and memory policy of others": {
        "userfaultfd": 323, "move_pages": 279, "migrate_pages": 256},
    "clocks and host identity": {
        "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "sethostname": 170,
        "setdomainname": 171},
    "kernel log, io_uring, fanotify, old or obsolete calls": {
        "syslog": 103, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "fanotify_init": 300, "lookup_dcookie": 212, "uselib": 134, "ustat": 136, "sysfs": 139, "_sysctl": 156,
        "vhangup": 153, "personality": 135, "create_module": 174, "get_kernel_syms": 177, "query_module": 178,
        "nfsservctl": 180, "getpmsg": 181, "putpmsg": 182, "afs_syscall": 183, "tuxcall": 184, "security": 185,
        "epoll_ctl_old": 214, "epoll_wait_old": 215, "vserver": 236, "memfd_secret": 447},
}
CLONE_X86_64, CLONE3_X86_64 = 56, 435


class SeccompUnsupported(RuntimeError):
    """This machine's architecture has no filter here (only x86-64 is assembled)."""


def denied_syscalls() -> dict[str, int]:
    """Every denied call's name → its x86-64 number (flattened)."""
    return {name: number for group in DENIED_SYSCALLS_X86_64.values() for name, number in group.items()}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine: str | None = None) -> bytes:
    """The BPF program (``struct sock_fprog``'s filter array, as bwrap reads it) for this machine's ABI."""
    machine = machine or platform.machine()
    if machine not in ("x86_64", "amd64", "AMD64"):
        raise SeccompUnsupported(f"no seccomp filter for the {machine} architecture (only x86-64 is assembled)")
    deny_numbers = sorted(set(denied_syscalls().values()))
    eperm = SECCOMP_RET_ERRNO | errno.EPERM
    # Layout: header; one JEQ per denied call jumping to DENY; the clone check; ALLOW; DENY.
    program = [
        _op(BPF_LD_W_ABS, OFFSET_ARCH),
        _op(BPF_JEQ_K, AUDIT_ARCH_X86_64, jt=1, jf=0),
        _op(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
        _op(BPF_LD_W_ABS, OFFSET_NR),
        _op(BPF_JGE_K, X32_SYSCALL_BIT, jt=0, jf=1),
        _op(BPF_RET_K, eperm),
        _op(BPF_JEQ_K, CLONE3_X86_64, jt=0, jf=1),
        _op(BPF_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]
    # After the JEQ list: [clone JEQ, load arg0, JSET, ALLOW, DENY] — the distance to DENY from each JEQ.
    tail = 5
    for index, number in enumerate(deny_numbers):
        remaining = len(deny_numbers) - index - 1
        jump = remaining + tail - 1
        if jump > 255:
            raise ValueError("too many denied calls for one BPF jump; split the list")
        program.append(_op(BPF_JEQ_K, number, jt=jump, jf=0))
    program += [
        _op(BPF_JEQ_K, CLONE_X86_64, jt=0, jf=2),  # not clone → ALLOW
        _op(BPF_LD_W_ABS, OFFSET_ARG0_LOW),
        _op(BPF_JSET_K, CLONE_NAMESPACE_MASK, jt=1, jf=0),  # a namespace flag → DENY
        _op(BPF_RET_K, SECCOMP_RET_ALLOW),
        _op(BPF_RET_K, eperm),
    ]
    return b"".join(program)


def filter_fd(machine: str | None = None) -> int:
    """A read-only-positioned descriptor (a memfd, else an unlinked file) holding the program, for ``--seccomp``."""
    data = build_filter(machine)
    try:
        fd = os.memfd_create("gecobench-seccomp", 0)
    except (AttributeError, OSError):  # no memfd: an unlinked temporary file does as well
        import tempfile

        with tempfile.TemporaryFile() as handle:
            fd = os.dup(handle.fileno())
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd

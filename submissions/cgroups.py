"""A control group per sandbox run: memory (tmpfs, memfd and page cache included; no swap), processes, CPU time.

The kernel charges every page a run's processes touch — anonymous memory, ``memfd_create`` files and the
work-folder tmpfs alike (shmem is charged to the cgroup of the process that first writes it) — to the run's
memory cgroup, and the OOM killer acts inside it when the limit is reached; ``RLIMIT_AS`` counted only address
space, which a memfd written with ``write()`` never occupies.

Where each controller comes from: cgroup v2 where the worker's own v2 cgroup can hand ``memory`` and ``pids`` to
a child (its ``cgroup.subtree_control`` has them, or can be given them), otherwise the v1 hierarchies
``memory``, ``pids`` and ``cpuacct`` (a machine can have both: v2 mounted at ``/sys/fs/cgroup/unified`` with
no controllers, v1 with them). Each run's cgroup is made under the worker's own cgroup of that hierarchy, the
run's first process joins it before it executes bubblewrap, and the worker removes it once it is empty.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

V1_CONTROLLERS = ("memory", "pids", "cpuacct")
RUN_PREFIX = "gecobench-run-"
# bwrap's outer process and its PID-namespace init come on top of the run's own processes.
BWRAP_PROCESSES = 2


class CgroupUnavailable(RuntimeError):
    """No writable cgroup hierarchy with the memory and pids controllers for this worker."""


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, options) of every cgroup mount."""
    found = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[1].replace("\\040", " "), parts[2], set(parts[3].split(","))))
    return found


def _own_cgroups() -> dict[str, str]:
    """Controller (``""`` for v2) → this process's cgroup path, from ``/proc/self/cgroup``."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _join(mount: str, path: str) -> Path:
    return Path(mount) / path.lstrip("/")


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _v2_parent() -> Path | None:
    """The worker's v2 cgroup, if memory and pids can be delegated to children from it."""
    own = _own_cgroups().get("")
    mounts = [m for m, fs, _ in _mounts() if fs == "cgroup2"]
    if own is None or not mounts:
        return None
    parent = _join(mounts[0], own)
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    if not {"memory", "pids"} <= available or not _writable_dir(parent):
        return None
    # One controller per write: the kernel fails a whole write when one of its controllers cannot be enabled
    # (cpu cannot while a realtime process is outside the root cgroup), and cpu is optional — cpu.stat's
    # usage_usec is there whether or not the cpu controller is enabled. Enabling is allowed only if the worker's
    # cgroup holds no processes (v2's no-internal-process rule); memory and pids are checked below.
    for controller in sorted({"memory", "pids", "cpu"} & available - enabled):
        try:
            (parent / "cgroup.subtree_control").write_text(f"+{controller}")
        except OSError:
            pass
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    return parent if {"memory", "pids"} <= enabled else None


def _v1_parents() -> dict[str, Path] | None:
    own = _own_cgroups()
    parents: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        mount = next((m for m, fs, opts in _mounts() if fs == "cgroup" and controller in opts), None)
        if mount is None or controller not in own:
            return None
        parent = _join(mount, own[controller])
        if not _writable_dir(parent):
            return None
        parents[controller] = parent
    return parents


@dataclass
class RunCgroup:
    """One run's cgroup(s): ``version`` "v2" (one folder) or "v1" (a folder per controller)."""

    version: str
    folders: dict[str, Path]
    memory_bytes: int
    max_processes: int
    removed: bool = field(default=False, init=False)
    # False where the kernel keeps no swap account (v2 without memory.swap.max): swap is then not limited.
    swap_limited: bool = field(default=True, init=False)

    # ---- set-up -------------------------------------------------------------------------------------------
    @classmethod
    def create(cls, memory_bytes: int, max_processes: int) -> RunCgroup:
        """Make the run's cgroup with its limits; raise :class:`CgroupUnavailable` saying why not."""
        name = f"{RUN_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        v2 = _v2_parent()
        if v2 is not None:
            run = cls("v2", {"": v2 / name}, memory_bytes, max_processes)
        else:
            parents = _v1_parents()
            if parents is None:
                raise CgroupUnavailable(
                    "no writable cgroup with the memory and pids controllers under the worker's own cgroup "
                    "(cgroup v2 with memory and pids delegated, or the v1 memory, pids and cpuacct hierarchies)")
            run = cls("v1", {c: p / name for c, p in parents.items()}, memory_bytes, max_processes)
        try:
            for folder in run.folders.values():
                folder.mkdir()
            run._apply_limits()
        except OSError as err:
            run.remove()
            raise CgroupUnavailable(f"could not set up the run's cgroup: {err}") from None
        return run

    def _apply_limits(self) -> None:
        pids = str(self.max_processes + BWRAP_PROCESSES)
        if self.version == "v2":
            folder = self.folders[""]
            (folder / "memory.max").write_text(str(self.memory_bytes))
            if (folder / "memory.swap.max").exists():
                (folder / "memory.swap.max").write_text("0")
            else:  # no swap accounting (and v2 has no memory.swappiness): pages can go to swap beyond memory.max
                self.swap_limited = False
            (folder / "pids.max").write_text(pids)
            return
        memory = self.folders["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(self.memory_bytes))
        memsw = memory / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # memory + swap at the same limit: no swap at all
            memsw.write_text(str(self.memory_bytes))
        else:
            (memory / "memory.swappiness").write_text("0")
        (self.folders["pids"] / "pids.max").write_text(pids)

    def describe(self) -> str:
        where = ", ".join(sorted(str(f) for f in self.folders.values()))
        swap = "no swap" if self.swap_limited else "swap not limited (the kernel does not account swap)"
        return (f"cgroup {self.version} per run ({where}): memory {self.memory_bytes >> 20} MiB including tmpfs "
                f"and memfd pages, {swap}; at most {self.max_processes} processes; CPU time accounted")

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a new process writes itself into (one per hierarchy)."""
        return [folder / "cgroup.procs" for folder in self.folders.values()]

    def join(self, pid: int | None = None) -> None:
        """Put ``pid`` (default: the calling process) into the run's cgroup(s); safe to call after fork."""
        text = str(pid if pid is not None else os.getpid()).encode()
        for path in self.procs_files():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, text)
            finally:
                os.close(fd)

    # ---- measurements -------------------------------------------------------------------------------------
    def _read(self, controller: str, name: str) -> str | None:
        folder = self.folders["" if self.version == "v2" else controller]
        try:
            return (folder / name).read_text()
        except OSError:
            return None

    def processes(self) -> list[int]:
        text = self._read("pids", "cgroup.procs") or ""
        return [int(p) for p in text.split()]

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) every process of the run used so far, as the kernel accounts it."""
        if self.version == "v2":
            for line in (self._read("cpu", "cpu.stat") or "").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
            return None
        text = self._read("cpuacct", "cpuacct.usage")
        return int(text) / 1e9 if text and text.strip().isdigit() else None

    def memory_peak_bytes(self) -> int | None:
        name = "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes"
        text = self._read("memory", name)
        return int(text) if text and text.strip().isdigit() else None

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer ended in this cgroup (0 where the kernel does not say)."""
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        for line in (self._read("memory", name) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def hit_memory_limit(self) -> bool:
        """Whether the memory limit was reached (an allocation was refused or reclaimed against the limit)."""
        if self.version == "v2":
            for line in (self._read("memory", "memory.events") or "").splitlines():
                key, _, value = line.partition(" ")
                if key in ("max", "oom", "oom_kill") and value.strip().isdigit() and int(value) > 0:
                    return True
            return False
        text = self._read("memory", "memory.failcnt")
        return bool(text and text.strip().isdigit() and int(text) > 0) or self.oom_kills() > 0

    # ---- tear-down ----------------------------------------------------------------------------------------
    def kill(self, spare: int | None = None) -> None:
        """SIGKILL every process in the cgroup (except ``spare``: bwrap's outer process, which reaps its child)."""
        kill_file = self.folders.get("", Path("/nonexistent")) / "cgroup.kill"
        if spare is None and self.version == "v2" and kill_file.exists():
            kill_file.write_text("1")
            return
        for pid in self.processes():
            if pid != spare:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def wait_empty(self, timeout: float = 10.0, spare: int | None = None) -> bool:
        """Kill and wait until no process (but ``spare``) is left; True when empty."""
        deadline = time.monotonic() + timeout
        while True:
            left = [p for p in self.processes() if p != spare]
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            self.kill(spare)
            time.sleep(0.02)

    def remove(self, timeout: float = 10.0) -> bool:
        """Remove the run's cgroup folders once empty; True when every folder is gone."""
        deadline = time.monotonic() + timeout
        for folder in self.folders.values():
            while folder.exists():
                try:
                    folder.rmdir()
                except OSError as err:
                    if err.errno not in (errno.EBUSY, errno.EAGAIN) or time.monotonic() > deadline:
                        break
                    self.kill()
                    time.sleep(0.05)
        self.removed = not any(f.exists() for f in self.folders.values())
        return self.removed


def cgroup_support() -> tuple[str | None, str]:
    """Which cgroup version a run would get here ("v2", "v1" or None) and a sentence saying why."""
    try:
        probe = RunCgroup.create(64 << 20, 4)
    except (CgroupUnavailable, OSError) as err:
        return None, str(err)
    version = probe.version
    probe.remove()
    return version, f"cgroup {version}"


def leftover_run_cgroups(pid: int | None = None) -> list[Path]:
    """Run cgroups of worker ``pid`` (default: this process) still on the machine (tests: none may remain)."""
    prefix = f"{RUN_PREFIX}{pid if pid is not None else os.getpid()}-"
    found: list[Path] = []
    own = _own_cgroups()
    for mount, fs, opts in _mounts():
        controllers = [""] if fs == "cgroup2" else [c for c in V1_CONTROLLERS if c in opts]
        for controller in controllers:
            if controller in own:
                parent = _join(mount, own[controller])
                if parent.is_dir():
                    found += [p for p in parent.iterdir() if p.name.startswith(prefix)]
    return sorted(found)

"""The cgroup v2 path of :mod:`submissions.cgroups`, against a fake v2 hierarchy in a temporary folder.

The machines the tests run on have only v1 controllers (``tests/test_sandbox_limits.py`` covers the v1 path on
them), so the v2 path is checked here against :class:`FakeCgroup2`: a folder made to look like a mounted,
delegated cgroup2 tree (``_mounts`` and ``_own_cgroups`` patched), with the kernel's side played by patched
``Path.mkdir`` / ``Path.rmdir`` / ``Path.write_text`` and ``os.kill`` for paths and pids of the fake only: a new
cgroup gets its interface files, ``cgroup.subtree_control`` takes ``+controller`` tokens (refused while the
cgroup holds processes: the no-internal-process rule), an interface file that does not exist cannot be created
by writing it, ``cgroup.kill`` empties the cgroup, ``rmdir`` is refused while processes are left. No real
process is started and no real process is signalled.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

import submissions.cgroups as cgroups
from submissions.cgroups import RUN_PREFIX, CgroupUnavailable, RunCgroup, cgroup_support, leftover_run_cgroups

OWN = "/system.slice/gecobench-worker.service"
# pids that no process on the machine has (above any pid_max): the fake kernel alone knows them.
FAKE_PID, OTHER_PID, STUBBORN_PID = 9_000_001, 9_000_002, 9_000_003

_mkdir, _rmdir, _write_text = Path.mkdir, Path.rmdir, Path.write_text


class FakeCgroup2:
    """A cgroup2 hierarchy mounted at ``root``, the worker's own cgroup ``OWN`` delegated to it."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, *, available: str = "cpu io memory pids",
                 enabled: str = "", swap_accounting: bool = True, has_kill_file: bool = True,
                 refuse_enable: frozenset[str] = frozenset(), refuse_write: frozenset[str] = frozenset(),
                 worker_procs: str = "", v1_root: Path | None = None) -> None:
        self.root = root
        self.v1_root = v1_root
        self.swap_accounting = swap_accounting
        self.has_kill_file = has_kill_file
        self.refuse_enable = refuse_enable  # controllers the kernel will not enable (cpu with RT processes)
        self.refuse_write = refuse_write  # interface files whose writes the kernel refuses (EINVAL)
        self.stubborn: set[int] = set()  # pids SIGKILL does not remove (a process stuck in the kernel)
        self.killed: list[int] = []
        self.kill_writes: list[Path] = []
        self.parent = root / OWN.lstrip("/")
        _mkdir(self.parent, parents=True)
        for name, text in (("cgroup.controllers", available), ("cgroup.subtree_control", enabled),
                           ("cgroup.procs", worker_procs), ("cgroup.type", "domain")):
            _write_text(self.parent / name, text + "\n")

        mounts = [(str(root), "cgroup2", {"rw", "nosuid", "nodev", "noexec", "relatime", "nsdelegate"})]
        own = {"": OWN}
        if v1_root is not None:  # v1 hierarchies beside it, plain folders (the v1 path writes plain files)
            for controller in cgroups.V1_CONTROLLERS:
                mount = v1_root / controller
                _mkdir(mount / OWN.lstrip("/"), parents=True)
                mounts.append((str(mount), "cgroup", {"rw", "relatime", controller}))
                own[controller] = OWN
        monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
        monkeypatch.setattr(cgroups, "_own_cgroups", lambda: dict(own))
        # plain functions, so that each is bound to the Path it is called on
        monkeypatch.setattr(Path, "mkdir", lambda path, *args, **kwargs: self._mkdir(path, *args, **kwargs))
        monkeypatch.setattr(Path, "rmdir", lambda path: self._rmdir(path))
        monkeypatch.setattr(Path, "write_text", lambda path, data, *args, **kwargs: self._write_text(
            path, data, *args, **kwargs))
        monkeypatch.setattr(os, "kill", self._kill)

    # ---- the fake kernel ----------------------------------------------------------------------------------
    def _is_cgroup(self, path: Path) -> bool:
        return path.is_relative_to(self.root) and (path / "cgroup.procs").exists()

    @staticmethod
    def _words(path: Path) -> set[str]:
        return set(path.read_text().split())

    def _mkdir(self, path: Path, *args: object, **kwargs: object) -> None:
        _mkdir(path, *args, **kwargs)
        if not self._is_cgroup(path.parent):
            return
        enabled = self._words(path.parent / "cgroup.subtree_control")
        files = {"cgroup.procs": "", "cgroup.controllers": " ".join(sorted(enabled)), "cgroup.subtree_control": "",
                 "cgroup.events": "populated 0\nfrozen 0\n", "cgroup.type": "domain",
                 # cpu.stat exists whether or not the cpu controller is enabled (cgroup-v2.rst)
                 "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n"}
        if self.has_kill_file:
            files["cgroup.kill"] = ""
        if "memory" in enabled:
            files |= {"memory.max": "max\n", "memory.high": "max\n", "memory.current": "0\n", "memory.peak": "0\n",
                      "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"}
            if self.swap_accounting:
                files |= {"memory.swap.max": "max\n", "memory.swap.current": "0\n"}
        if "pids" in enabled:
            files |= {"pids.max": "max\n", "pids.current": "0\n"}
        if "cpu" in enabled:
            files |= {"cpu.max": "max 100000\n", "cpu.weight": "100\n"}
        for name, text in files.items():
            _write_text(path / name, text)

    def _rmdir(self, path: Path) -> None:
        if self.v1_root is not None and path.is_relative_to(self.v1_root) and path.name.startswith(RUN_PREFIX):
            for file in path.iterdir():  # v1 run folders are plain here: their files go with them, as in cgroupfs
                file.unlink()
            return _rmdir(path)
        if not self._is_cgroup(path):
            return _rmdir(path)
        if (path / "cgroup.procs").read_text().split() or any(p.is_dir() for p in path.iterdir()):
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(path))
        for file in path.iterdir():  # a cgroup's interface files go with it
            file.unlink()
        _rmdir(path)

    def _write_text(self, path: Path, data: str, *args: object, **kwargs: object) -> int:
        if not path.is_relative_to(self.root):
            return _write_text(path, data, *args, **kwargs)
        if not path.exists():  # cgroupfs: no file can be created, only the kernel's interface files written
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        if path.name in self.refuse_write:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(path))
        folder = path.parent
        if path.name == "cgroup.subtree_control":
            return self._subtree_control(folder, data)
        if path.name == "cgroup.kill":
            if data.strip() != "1":
                raise OSError(errno.ERANGE, os.strerror(errno.ERANGE), str(path))
            self.kill_writes.append(folder)
            self._set_procs(folder, [p for p in self._procs(folder) if p in self.stubborn])
            return len(data)
        if path.name in ("memory.max", "memory.swap.max", "memory.high", "pids.max"):
            if not re.fullmatch(r"\d+|max", data.strip()):
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(path))
        return _write_text(path, data, *args, **kwargs)

    def _subtree_control(self, folder: Path, data: str) -> int:
        tokens = data.split()
        available = self._words(folder / "cgroup.controllers")
        enabled = self._words(folder / "cgroup.subtree_control")
        if any(t[:1] not in "+-" or t[1:] not in available for t in tokens):
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), str(folder))
        if self._procs(folder) and any(t[0] == "+" for t in tokens):  # the no-internal-process rule
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(folder))
        if any(t[0] == "+" and t[1:] in self.refuse_enable for t in tokens):  # the whole write fails
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(folder))
        for token in tokens:
            (enabled.add if token[0] == "+" else enabled.discard)(token[1:])
        _write_text(folder / "cgroup.subtree_control", " ".join(sorted(enabled)) + "\n")
        return len(data)

    def _procs(self, folder: Path) -> list[int]:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]

    def _set_procs(self, folder: Path, pids: list[int]) -> None:
        _write_text(folder / "cgroup.procs", "".join(f"{p}\n" for p in pids))

    def _kill(self, pid: int, sig: int) -> None:
        assert pid in (FAKE_PID, OTHER_PID, STUBBORN_PID), f"the test would have signalled real pid {pid}"
        self.killed.append(pid)
        if pid in self.stubborn:
            return
        for procs in self.root.rglob("cgroup.procs"):
            if pid in self._procs(procs.parent):
                self._set_procs(procs.parent, [p for p in self._procs(procs.parent) if p != pid])

    # ---- what a test sets up where the kernel would -------------------------------------------------------
    def put(self, group: RunCgroup, *pids: int) -> None:
        self._set_procs(group.folders[""], [*self._procs(group.folders[""]), *pids])

    def set(self, group: RunCgroup, name: str, text: str) -> None:
        _write_text(group.folders[""] / name, text)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCgroup2:
    return FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="cpu memory pids")


def read(folder: Path, name: str) -> str:
    return (folder / name).read_text().strip()


# ---- choosing the hierarchy ---------------------------------------------------------------------------------
def test_v2_is_used_where_memory_and_pids_are_delegated(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(256 << 20, 8)
    folder = group.folders[""]
    assert group.version == "v2" and list(group.folders) == [""]
    assert folder.parent == fake.parent and folder.is_dir()
    assert re.fullmatch(rf"{RUN_PREFIX}{os.getpid()}-[0-9a-f]{{12}}", folder.name)
    assert group.procs_files() == [folder / "cgroup.procs"]


def test_v2_limits_are_the_arguments(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(256 << 20, 8)
    folder = group.folders[""]
    assert read(folder, "memory.max") == str(256 << 20)  # bytes, as given
    assert read(folder, "memory.swap.max") == "0"  # no swap
    assert read(folder, "pids.max") == str(8 + cgroups.BWRAP_PROCESSES)  # bwrap's two processes on top
    assert read(folder, "memory.high") == "max" and read(folder, "cpu.max") == "max 100000"  # left alone
    text = group.describe()
    assert text.startswith("cgroup v2 per run (") and str(folder) in text
    assert "memory 256 MiB" in text and "no swap" in text and "at most 8 processes" in text


def test_v2_enables_the_controllers_the_worker_cgroup_does_not_yet_delegate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCgroup2(tmp_path / "cgroup2", monkeypatch, available="cpu io memory pids", enabled="")
    group = RunCgroup.create(64 << 20, 4)
    assert group.version == "v2"
    assert fake._words(fake.parent / "cgroup.subtree_control") == {"cpu", "memory", "pids"}  # not io
    assert read(group.folders[""], "memory.max") == str(64 << 20)


def test_v2_is_used_when_the_cpu_controller_cannot_be_enabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # cgroup-v2.rst: "the cpu controller can only be enabled when all RT processes are in the root cgroup"; the
    # kernel fails the whole subtree_control write then. CPU time still comes from cpu.stat (always there).
    fake = FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="", refuse_enable=frozenset({"cpu"}))
    group = RunCgroup.create(64 << 20, 4)
    assert group.version == "v2"
    assert fake._words(fake.parent / "cgroup.subtree_control") == {"memory", "pids"}
    fake.set(group, "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert group.cpu_seconds() == pytest.approx(2.5)


def test_v1_is_used_when_v2_has_no_memory_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # This machine's layout: cgroup2 at /sys/fs/cgroup/unified without controllers, v1 hierarchies with them.
    FakeCgroup2(tmp_path / "unified", monkeypatch, available="", v1_root=tmp_path / "v1")
    group = RunCgroup.create(128 << 20, 4)
    assert group.version == "v1" and set(group.folders) == set(cgroups.V1_CONTROLLERS)
    for controller, folder in group.folders.items():
        assert folder.parent == tmp_path / "v1" / controller / OWN.lstrip("/") and folder.is_dir()
    assert read(group.folders["memory"], "memory.limit_in_bytes") == str(128 << 20)
    assert read(group.folders["memory"], "memory.swappiness") == "0"  # no memsw file: no swap accounting
    assert read(group.folders["pids"], "pids.max") == str(4 + cgroups.BWRAP_PROCESSES)


def test_v1_is_used_when_the_v2_cgroup_holds_processes_and_delegates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The no-internal-process rule: the worker's own cgroup cannot enable controllers while it holds the worker.
    FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="", worker_procs=str(FAKE_PID), v1_root=tmp_path / "v1")
    assert RunCgroup.create(64 << 20, 4).version == "v1"


def test_v1_is_used_when_the_v2_cgroup_is_not_writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="memory pids", v1_root=tmp_path / "v1")
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: (
        False if Path(path) == fake.parent else access(path, mode, **kw)))  # the tests run as root: chmod won't do
    assert RunCgroup.create(64 << 20, 4).version == "v1"
    assert not [p for p in fake.parent.iterdir() if p.is_dir()]


@pytest.mark.parametrize("layout", ["no cgroup mount", "v2 without controllers", "v2 not delegated, no v1"])
def test_no_usable_hierarchy_says_why(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if layout == "no cgroup mount":
        monkeypatch.setattr(cgroups, "_mounts", lambda: [])
        monkeypatch.setattr(cgroups, "_own_cgroups", lambda: {"": "/"})
    elif layout == "v2 without controllers":
        FakeCgroup2(tmp_path / "cgroup2", monkeypatch, available="")
    else:
        FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="", worker_procs=str(FAKE_PID))
    with pytest.raises(CgroupUnavailable) as caught:
        RunCgroup.create(64 << 20, 4)
    message = str(caught.value)
    assert "memory and pids" in message and "cgroup v2" in message and "v1" in message
    assert cgroup_support() == (None, message)


def test_a_refused_limit_is_reported_and_leaves_no_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="memory pids",
                       refuse_write=frozenset({"pids.max"}))
    with pytest.raises(CgroupUnavailable, match=r"could not set up the run's cgroup: .*pids\.max"):
        RunCgroup.create(64 << 20, 4)
    assert not [p for p in fake.parent.iterdir() if p.is_dir()] and leftover_run_cgroups() == []


def test_without_swap_accounting_the_report_does_not_claim_no_swap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No memory.swap.max (a kernel without swap accounting): memory.max is set, swap is not limited, and the
    # isolation report must not say "no swap".
    FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="memory pids", swap_accounting=False)
    group = RunCgroup.create(64 << 20, 4)
    assert read(group.folders[""], "memory.max") == str(64 << 20)
    assert not (group.folders[""] / "memory.swap.max").exists()
    assert "no swap" not in group.describe() and "swap not limited (the kernel does not account swap)" in group.describe()


def test_cgroup_support_probes_and_removes(fake: FakeCgroup2) -> None:
    assert cgroup_support() == ("v2", "cgroup v2")
    assert leftover_run_cgroups() == [] and not [p for p in fake.parent.iterdir() if p.is_dir()]


# ---- measurements ---------------------------------------------------------------------------------------------
def test_cpu_seconds_is_cpu_stat_usage_usec(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    assert group.cpu_seconds() == 0.0  # a new cgroup's account
    fake.set(group, "cpu.stat", "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n"
                                "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
    assert group.cpu_seconds() == pytest.approx(1.234567)  # µs → s, user + system
    fake.set(group, "cpuacct.usage", "99000000000\n")  # v1's file is not read on v2
    assert group.cpu_seconds() == pytest.approx(1.234567)
    (group.folders[""] / "cpu.stat").unlink()
    assert group.cpu_seconds() is None


def test_memory_peak_is_memory_peak(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    fake.set(group, "memory.peak", "47185920\n")
    fake.set(group, "memory.max_usage_in_bytes", "1\n")  # v1's name, not read on v2
    assert group.memory_peak_bytes() == 47185920
    (group.folders[""] / "memory.peak").unlink()  # kernels before 5.19
    assert group.memory_peak_bytes() is None


def test_oom_kills_and_the_memory_limit_come_from_memory_events(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    assert group.oom_kills() == 0 and not group.hit_memory_limit()
    fake.set(group, "memory.events", "low 0\nhigh 7\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n")
    assert not group.hit_memory_limit()  # memory.high is no limit of ours
    fake.set(group, "memory.events", "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\noom_group_kill 0\n")
    assert group.hit_memory_limit() and group.oom_kills() == 0  # reclaimed against memory.max
    fake.set(group, "memory.events", "low 0\nhigh 0\nmax 30\noom 2\noom_kill 3\noom_group_kill 0\n")
    assert group.hit_memory_limit() and group.oom_kills() == 3
    (group.folders[""] / "memory.events").unlink()
    assert group.oom_kills() == 0 and not group.hit_memory_limit()


def test_join_writes_the_pid_into_cgroup_procs(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    group.join(FAKE_PID)
    assert group.processes() == [FAKE_PID]
    fake._set_procs(group.folders[""], [])
    group.join()  # default: the calling process (written to the fake file only; nothing moves)
    assert group.processes() == [os.getpid()]
    fake._set_procs(group.folders[""], [])  # before anything could signal it


# ---- tear-down ------------------------------------------------------------------------------------------------
def test_kill_uses_cgroup_kill(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    fake.put(group, FAKE_PID, OTHER_PID)
    group.kill()
    assert fake.kill_writes == [group.folders[""]] and fake.killed == [] and group.processes() == []


def test_kill_sparing_a_pid_signals_the_others_one_by_one(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    fake.put(group, FAKE_PID, OTHER_PID)
    group.kill(spare=FAKE_PID)  # cgroup.kill would take bwrap's outer process too
    assert fake.kill_writes == [] and fake.killed == [OTHER_PID] and group.processes() == [FAKE_PID]


def test_kill_without_cgroup_kill_signals_each_pid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCgroup2(tmp_path / "cgroup2", monkeypatch, enabled="memory pids", has_kill_file=False)  # < 5.14
    group = RunCgroup.create(64 << 20, 4)
    fake.put(group, FAKE_PID, OTHER_PID)
    group.kill()
    assert sorted(fake.killed) == [FAKE_PID, OTHER_PID] and group.processes() == []


def test_wait_empty(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    assert group.wait_empty(timeout=1)
    fake.put(group, FAKE_PID, OTHER_PID)
    assert group.wait_empty(timeout=1, spare=FAKE_PID) and group.processes() == [FAKE_PID]
    assert group.wait_empty(timeout=1) and group.processes() == []
    fake.stubborn.add(STUBBORN_PID)
    fake.put(group, STUBBORN_PID)
    assert not group.wait_empty(timeout=0.1) and group.processes() == [STUBBORN_PID]
    fake.stubborn.clear()
    fake._set_procs(group.folders[""], [])


def test_remove_removes_the_folder(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    folder = group.folders[""]
    assert group.remove() and group.removed and not folder.exists()
    assert group.remove()  # again: nothing to do


def test_remove_kills_what_is_left_first(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    fake.put(group, FAKE_PID)
    assert group.remove(timeout=2) and not group.folders[""].exists()
    assert fake.kill_writes == [group.folders[""]]


def test_remove_gives_up_on_a_process_that_does_not_die(fake: FakeCgroup2) -> None:
    group = RunCgroup.create(64 << 20, 4)
    fake.stubborn.add(STUBBORN_PID)
    fake.put(group, STUBBORN_PID)
    assert not group.remove(timeout=0.1) and not group.removed and group.folders[""].is_dir()
    fake.stubborn.clear()
    assert group.remove() and not group.folders[""].exists()


def test_leftover_run_cgroups_finds_run_folders_by_prefix(fake: FakeCgroup2) -> None:
    assert leftover_run_cgroups() == []
    first, second = RunCgroup.create(64 << 20, 4), RunCgroup.create(64 << 20, 4)
    other = fake.parent / f"{RUN_PREFIX}{OTHER_PID}-0123456789ab"  # another worker's run
    unrelated = fake.parent / "gecobench-other"
    for folder in (other, unrelated):
        folder.mkdir()
    assert leftover_run_cgroups() == sorted([first.folders[""], second.folders[""]])
    assert leftover_run_cgroups(OTHER_PID) == [other]
    first.remove()
    assert leftover_run_cgroups() == [second.folders[""]]
    second.remove()
    assert leftover_run_cgroups() == []


def test_leftover_run_cgroups_looks_in_v2_and_v1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeCgroup2(tmp_path / "unified", monkeypatch, available="", v1_root=tmp_path / "v1")
    stray = fake.parent / f"{RUN_PREFIX}{os.getpid()}-000000000000"
    stray.mkdir()
    group = RunCgroup.create(64 << 20, 4)  # v1
    assert leftover_run_cgroups() == sorted([stray, *group.folders.values()])
    assert group.remove() and leftover_run_cgroups() == [stray]

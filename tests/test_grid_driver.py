"""The reference grid's driver (scripts/maintainer/run_grid_units.sh): its shell functions, run on processes the
test starts itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DRIVER = REPO_ROOT / "scripts" / "maintainer" / "run_grid_units.sh"


def driver_function(name: str) -> str:
    """The text of one shell function of the driver (from ``name() {`` to its closing brace)."""
    lines = DRIVER.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"{name}() {{")
    end = lines.index("}", start)
    return "\n".join(lines[start : end + 1])


def autogroup_nice(pid: int) -> int:
    """The nice of the autogroup ``pid`` runs in (``/proc/PID/autogroup`` reads ``/autogroup-N nice K``)."""
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])


def test_the_driver_parses():
    assert subprocess.run(["bash", "-n", str(DRIVER)], capture_output=True).returncode == 0


def autogroups_in_effect() -> bool:
    """Whether this process is scheduled in an autogroup. The file reads empty where the kernel has autogroups but the
    process sits in a cgroup with a CPU controller of its own (containers, CI runners): there sessions have no weight
    to lower."""
    path = Path("/proc/self/autogroup")
    return os.access(path, os.W_OK) and path.read_text().startswith("/autogroup-")


@pytest.mark.skipif(not autogroups_in_effect() or shutil.which("setsid") is None or shutil.which("pgrep") is None,
                    reason="needs Linux autogroups in effect for this process, setsid and pgrep")
def test_lower_autogroups_reaches_every_session_under_the_launcher_and_nothing_else():
    # A launcher in a session of its own whose two workers start sessions of their own, as torch's launcher does:
    # three autogroups at the default weight. The test's own autogroup must stay as it is.
    launcher = subprocess.Popen(["setsid", "bash", "-c", "setsid sleep 60 & setsid sleep 60 & wait"])
    sleepers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(sleepers) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            sleepers = [pid for pid in descendants(launcher.pid)
                        if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep")]
        assert len(sleepers) == 2, sleepers
        assert [autogroup_nice(pid) for pid in sleepers] == [0, 0]  # new sessions start at the default weight
        own = autogroup_nice(os.getpid())
        script = driver_function("lower_autogroups") + f"\nlower_autogroups {launcher.pid}\n"
        subprocess.run(["bash", "-c", script], check=True)
        assert [autogroup_nice(pid) for pid in sleepers] == [19, 19]
        assert autogroup_nice(launcher.pid) == 19
        assert autogroup_nice(os.getpid()) == own  # the caller's group is not under the launcher
    finally:
        for pid in sleepers:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        launcher.kill()
        launcher.wait()


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (children, their children, …)."""
    children = [int(c) for c in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                text=True).stdout.split()]
    return children + [d for child in children for d in descendants(child)]


def test_commit_stage_commits_what_a_stage_wrote_and_says_so_when_nothing_changed(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    repo = tmp_path / "repo"
    (repo / "reference" / "staging").mkdir(parents=True)
    (repo / "reference" / "staging" / "unit.json").write_text("1")
    (repo / "reference" / "timings.json").write_text("{}")
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start")
    (repo / "reference" / "staging" / "unit.json").write_text("2")
    script = (f"set -euo pipefail\nexport GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
              f"GIT_COMMITTER_EMAIL=t@t\nconfig=binary_all seed=3\n{driver_function('commit_stage')}\n"
              "commit_stage zoo reference/staging reference/timings.json\n"
              "commit_stage derive reference/staging reference/timings.json\n")
    run = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert git("log", "--format=%s").splitlines() == ["reference: zoo/binary_all/seed3", "start"]
    assert git("status", "--porcelain") == ""  # the next stage starts on a clean tree
    assert "derive/binary_all/seed3: nothing new to commit" in run.stdout

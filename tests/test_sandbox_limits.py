"""Kernel-enforced limits per sandbox run (a cgroup), the start-up probe, and an interpreter under /tmp."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from submissions.cgroups import RunCgroup, cgroup_support, leftover_run_cgroups
from submissions.sandbox import SandboxLimits, run_submission, sandbox_status
from tests.conftest import REPO_ROOT
from tests.test_submissions_hostile import children_of

HOSTILE = Path(__file__).resolve().parent / "hostile"
needs_sandbox = pytest.mark.skipif(not sandbox_status()[0], reason=f"no sandbox here: {sandbox_status()[1]}")
needs_cgroup = pytest.mark.skipif(cgroup_support()[0] is None, reason=f"no per-run cgroup here: {cgroup_support()[1]}")


@needs_cgroup
def test_a_run_cgroup_gets_its_limits_and_is_removed():
    group = RunCgroup.create(256 << 20, 8)
    try:
        assert group.processes() == [] and all(folder.is_dir() for folder in group.folders.values())
        if group.version == "v1":
            assert int((group.folders["memory"] / "memory.limit_in_bytes").read_text()) <= 256 << 20
            memsw = group.folders["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                assert int(memsw.read_text()) <= 256 << 20  # memory + swap at the memory limit: no swap
            assert int((group.folders["pids"] / "pids.max").read_text()) == 8 + 2
        else:
            assert int((group.folders[""] / "memory.max").read_text()) <= 256 << 20
        # A process put into it is accounted; killing empties it; then it goes.
        child = subprocess.Popen([sys.executable, "-c", "import time\nx = bytearray(32 << 20)\ntime.sleep(60)"],
                                 preexec_fn=group.join)  # noqa: PLW1509 - no other thread runs here
        try:
            for _ in range(200):
                if (group.memory_peak_bytes() or 0) > 32 << 20:
                    break
                subprocess.run(["sleep", "0.05"], check=False)
            assert child.pid in group.processes()
            assert (group.memory_peak_bytes() or 0) > 32 << 20
            assert (group.cpu_seconds() or 0) > 0
            assert group.wait_empty(timeout=10)
        finally:
            child.kill()
            child.wait()
    finally:
        assert group.remove()
    assert not any(folder.exists() for folder in group.folders.values())


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory, bert_tokenizer) -> Path:
    from tests.test_submissions_sandbox import save_tiny_checkpoint

    return save_tiny_checkpoint(tmp_path_factory.mktemp("limits") / "TINY-binary_all-s0", bert_tokenizer)


@needs_sandbox
@needs_cgroup
def test_memfd_memory_counts_against_the_run_and_nothing_of_it_remains(tiny_checkpoint, tmp_path, monkeypatch):
    import tempfile

    from submissions.sandbox import staged_library

    staged_library()
    children_before = children_of(os.getpid())
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    source = (HOSTILE / "res_memfd_memory.py").read_text().replace("__HOST__", "{}")
    hostile = tmp_path / "memfd.py"
    hostile.write_text(source)
    result = run_submission(hostile, tiny_checkpoint, [["He", "sings", "."]], [1], kinds=("main",),
                            limits=SandboxLimits(memory_bytes=2 << 30, cpu_seconds=120, wall_seconds=180))
    # The kernel stopped it at the limit: an OOM kill in the run's cgroup, or a write refused inside.
    assert not result.ok
    assert "memory limit of 2.0 GiB exceeded" in result.reason or "Cannot allocate memory" in result.reason, (
        result.reason, result.log_excerpt)
    assert "memfd memory not limited" not in result.reason
    peak = result.isolation["memory_peak_bytes"]
    assert peak is not None and peak <= 2 << 30, result.isolation
    # The run's cgroup is gone, which the kernel allows only once no process is left in it (the namespace's init
    # included); bwrap was reaped (no child of this process, zombie or not); no control or staging folder is left.
    assert leftover_run_cgroups() == []
    assert children_of(os.getpid(), besides=children_before) == []
    assert sorted(p.name for p in staging.iterdir()) == []


def _venv_under_tmp(folder: Path) -> Path:
    """A virtual environment under /tmp holding numpy (what the start-up probe's explainer imports)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(folder)], check=True)
    target = folder / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    source = Path(sysconfig.get_paths()["purelib"])
    for name in os.listdir(source):
        if name == "numpy" or name.startswith(("numpy-", "numpy.libs")):
            (shutil.copytree if (source / name).is_dir() else shutil.copy2)(source / name, target / name)
    return folder / "bin" / "python"


@needs_sandbox
def test_the_sandbox_works_with_an_interpreter_under_tmp():
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gecobench-venv-", dir="/tmp"))
    try:
        python = _venv_under_tmp(folder / "venv")
        # The worker's start-up check, run by that interpreter: a trivial explainer through the real sandbox.
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), sysconfig.get_paths()["purelib"]])}
        done = subprocess.run(
            [str(python), "-c", ("import sys; from submissions.sandbox import sandbox_status; ok, how = sandbox_status();"
                                 " print(sys.prefix, ok, how); sys.exit(0 if ok else 1)")],
            capture_output=True, text=True, env=environment, cwd=str(folder), timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith(str(folder / "venv"))  # it really ran from under /tmp
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_worker_refuses_to_start_when_the_sandbox_cannot_run_an_explainer(tmp_path, monkeypatch, capsys):
    from submissions import sandbox

    # A bubblewrap that starts but cannot run anything (as when the interpreter is hidden by a mount).
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'setpriv: failed to execute python: No such file or directory' >&2\nexit 127\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GECOBENCH_BWRAP", str(fake))
    available, message = sandbox.sandbox_status.__wrapped__()
    assert not available
    assert "cannot run a trivial explainer" in message and "exit code 127" in message and sys.executable in message

    # `gecobench queue` (scripts/process_queue.py is its shim)
    from submissions.cli import queue as process_queue

    monkeypatch.setattr(process_queue, "sandbox_status", lambda: (available, message))
    code = process_queue.main(["--models", str(tmp_path), "--requests", str(tmp_path / "requests")])
    assert code == 2
    assert "refusing to start" in capsys.readouterr().err


def test_the_worker_refuses_a_model_folder_that_is_no_checkpoint_with_a_clear_message(tmp_path, monkeypatch, capsys):
    from submissions.cli import queue as process_queue

    monkeypatch.setattr(process_queue, "sandbox_status", lambda: (True, "a sandbox that works"))
    code = process_queue.main(["--models", str(tmp_path), "--requests", str(tmp_path / "requests")])
    err = capsys.readouterr().err
    assert code == 2
    assert "refusing to start" in err and str(tmp_path) in err and "not a GECOBench zoo checkpoint" in err

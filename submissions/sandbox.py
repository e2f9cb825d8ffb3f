"""Run submitted explainer code in an isolated process.

Isolation layers (each reported in the request's FINISHED/FAILED event):

* **network** — a fresh Linux network namespace (``unshare(CLONE_NEWNET)``, no interfaces but a down
  loopback) where the kernel allows it; always also an audit hook that refuses sockets;
* **resources** — ``RLIMIT_AS`` (memory), ``RLIMIT_CPU`` (CPU seconds), ``RLIMIT_FSIZE`` (file size),
  ``RLIMIT_NPROC``, no core dumps, and a wall-clock timeout after which the whole process group is killed;
* **environment** — a minimal environment (no tokens, no secrets, offline flags), and ``os.environ``
  refuses secret-looking names;
* **files** — a temporary working directory; writes outside it, reads of ground truth / results /
  requests, and ``/proc/*/environ`` are refused by the audit hook;
* **processes** — process creation is refused by the audit hook (``RLIMIT_NPROC`` does not bind root).

The worker passes only words, the model and the target classes: the ground truth never enters the
sandbox. Audit hooks are a tripwire, not a jail: Python code that reaches native code (it cannot load new
native libraries, ``ctypes.dlopen`` is refused) could still escape, which the namespace and rlimits bound.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLONE_NEWNET = 0x40000000


@dataclass
class SandboxLimits:
    """Resource limits for one sandboxed run."""

    memory_bytes: int = 6 << 30
    cpu_seconds: int = 900
    wall_seconds: float = 900.0
    max_file_bytes: int = 512 << 20
    max_processes: int = 256


@dataclass
class SandboxResult:
    """What came back from the sandbox: outputs on success, else a human-readable reason."""

    ok: bool
    outputs: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    log_excerpt: str = ""
    isolation: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0


@functools.lru_cache(maxsize=1)
def network_namespace_available() -> bool:
    """Whether this machine lets a child process enter a new network namespace (probed once per process)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import ctypes,sys; sys.exit(0 if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) == 0 else 1)"],
        capture_output=True, timeout=30,
    )
    return probe.returncode == 0


def _preexec(limits: SandboxLimits, use_netns: bool):
    def apply() -> None:
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes, limits.max_processes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if use_netns:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNET) != 0:
                os._exit(97)  # the parent probed that this works; failing now is an isolation failure

    return apply


def scrubbed_environment(workdir: Path) -> dict[str, str]:
    """The only environment a submission sees: no tokens, offline, single-threaded, home in the workdir."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(workdir / "hf"),
        "MPLCONFIGDIR": str(workdir / "mpl"),
    }


def _tail(text: str, limit: int = 2000) -> str:
    return text[-limit:] if len(text) > limit else text


def run_submission(
    submission_file: str | Path,
    model_path: str | Path,
    words: list[list[str]],
    targets: list[int],
    forbidden_read_prefixes: list[str],
    limits: SandboxLimits | None = None,
    seed: int = 0,
    kinds: tuple[str, ...] = ("main", "randomised"),
    randomisation_seed: int = 1234,
    noise_std: float = 0.01,
    reference_model_path: str | Path | None = None,
    train_words: list[list[str]] | None = None,
    train_labels: list[int] | None = None,
) -> SandboxResult:
    """Explain ``words`` for ``targets`` with the submitted explainer on the model at ``model_path``.

    ``kinds`` says which scores to compute, with the evaluation runner's meaning: ``main`` (the model),
    ``randomised`` (a re-initialised copy, for the model-randomisation check), ``noisy`` (small noise on the
    embeddings), ``other_target`` (other classes), ``reference`` (the zero-shot model at
    ``reference_model_path``). Returns a :class:`SandboxResult`; never raises for anything the submission does.
    """
    limits = limits or SandboxLimits()
    # The sandbox runs in its own temporary directory: every path it is given must be absolute.
    model_path = Path(model_path).resolve()
    reference_model_path = Path(reference_model_path).resolve() if reference_model_path else None
    use_netns = network_namespace_available()
    workdir = Path(tempfile.mkdtemp(prefix="gecobench-sandbox-"))
    controldir = Path(tempfile.mkdtemp(prefix="gecobench-control-"))
    started = time.perf_counter()
    isolation = {
        "network": "network namespace + audit hook" if use_netns else "audit hook (no network namespace on this machine)",
        "memory_bytes": limits.memory_bytes, "cpu_seconds": limits.cpu_seconds, "wall_seconds": limits.wall_seconds,
        "environment": "scrubbed", "files": "temporary working directory; protected data unreadable",
    }
    try:
        submission_copy = workdir / "submission.py"
        shutil.copyfile(submission_file, submission_copy)
        inputs_file = workdir / "inputs.json"
        inputs_file.write_text(json.dumps({
            "words": words, "targets": [int(t) for t in targets],
            "train_words": train_words, "train_labels": train_labels,
        }))
        violation_file = controldir / "violations.txt"
        result_file = controldir / "result.json"
        try:
            parent_ns = os.readlink("/proc/self/ns/net")
        except OSError:
            parent_ns = None
        job = {
            "workdir": str(workdir), "submission_file": str(submission_copy), "model_path": str(model_path),
            "inputs_file": str(inputs_file), "violation_file": str(violation_file), "result_file": str(result_file),
            "seed": seed, "forbidden_read_prefixes": [str(p) for p in forbidden_read_prefixes] + [str(controldir)],
            "kinds": list(kinds), "randomisation_seed": randomisation_seed, "noise_std": noise_std,
            "reference_model_path": str(reference_model_path) if reference_model_path else None,
            "parent_net_ns": parent_ns,
        }
        job_file = controldir / "job.json"
        job_file.write_text(json.dumps(job))
        repo_root = Path(__file__).resolve().parent.parent
        env = scrubbed_environment(workdir)
        env["PYTHONPATH"] = str(repo_root)
        process = subprocess.Popen(
            [sys.executable, "-m", "submissions.sandbox_runner", str(job_file)],
            cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=_preexec(limits, use_netns),
        )
        timed_out = False
        try:
            output, _ = process.communicate(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            output, _ = process.communicate()
        log = _tail(output.decode("utf-8", "replace"))
        elapsed = time.perf_counter() - started
        violations = violation_file.read_text().strip().splitlines() if violation_file.exists() else []
        try:
            result = json.loads(result_file.read_text()) if result_file.exists() else {}
        except json.JSONDecodeError:
            result = {}

        def failed(reason: str) -> SandboxResult:
            return SandboxResult(False, reason=reason, log_excerpt=log or result.get("traceback", ""),
                                 isolation=isolation, wall_seconds=elapsed)

        if violations:
            return failed(f"sandbox violation: the explainer {violations[0]}")
        if timed_out:
            return failed(f"timed out: no result within the wall-clock limit of {limits.wall_seconds:g} s")
        if process.returncode == -signal.SIGXCPU or process.returncode == -signal.SIGKILL and not result:
            return failed(f"CPU time limit of {limits.cpu_seconds} s exceeded")
        if process.returncode == 97:
            return failed("isolation failure: could not enter a network namespace")
        if result.get("error") == "MemoryError" or "MemoryError" in log or "std::bad_alloc" in log:
            return failed(f"memory limit of {limits.memory_bytes / 2**30:.1f} GiB exceeded")
        if result.get("error"):
            return failed(f"the explainer raised {result['error']}: {result.get('message', '')}")
        if process.returncode != 0 or "scores" not in result:
            return failed(f"the sandbox process ended with exit code {process.returncode} and no result")
        isolation["network_observed"] = result.get("network_isolation")
        return SandboxResult(True, outputs=result, log_excerpt=log, isolation=isolation, wall_seconds=elapsed)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(controldir, ignore_errors=True)

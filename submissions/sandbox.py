"""Run submitted explainer code in an operating-system sandbox (bubblewrap).

What the submission runs in (see ``docs/submissions.md``, *Security model*):

* **file system** — its own mount namespace holding only the read-only system (``/usr``), the Python
  installation and virtual environment, a staged copy of the hub's Python packages (``.py`` files only), the
  model checkpoint(s), the input folder (``/sandbox/input``: job, inputs, the submitted file) and a fresh,
  size-capped writable work folder (``/sandbox/work``, a tmpfs). No data folders, stores, checkout or HOME exist inside;
* **network** — its own network namespace: no interfaces but loopback;
* **processes** — its own PID namespace (every process dies with it; the worker is not visible);
* **user** — an unprivileged user without capabilities and with ``no_new_privs``: when the worker is root, a
  fresh uid per run (so ``RLIMIT_NPROC`` counts only this run's processes); otherwise a user namespace;
* **environment** — cleared, then a fixed minimal set (no tokens);
* **limits** — ``RLIMIT_AS`` (memory), ``RLIMIT_CPU``, ``RLIMIT_FSIZE``, ``RLIMIT_NPROC``, no core dumps, the
  work folder's size, and a wall clock enforced *from outside*: the worker kills bwrap, whose PID-namespace
  init takes every process of the run with it, and then anything still running under the run's uid.

One narrow channel back: the result file (descriptor 3), size-capped and parsed strictly by the worker
(:func:`parse_result`). Standard output and error share one pipe that the worker drains into a size-capped
file (only a bounded tail is kept in memory). No other descriptor is inherited.

The audit hook of :mod:`submissions.sandbox_runner` stays as a diagnostic second layer: it names what a
submission tried (descriptor 4), but nothing relies on it.
"""

from __future__ import annotations

import collections
import functools
import json
import math
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULT_FD = 3
VIOLATION_FD = 4
STAGED_PACKAGES = ("gecobench", "geco_dataset")
# Everything of the run lives under this folder inside the sandbox: input/ (read-only), work/ (the writable,
# size-capped tmpfs and HOME), lib/ (the staged packages), model/main and model/reference (checkpoints).
SANDBOX_ROOT = "/sandbox"
# A fresh uid per run from this range when the worker is root: nothing on the host owns files as these.
SANDBOX_UID_RANGE = (3_000_000, 3_900_000)
RESULT_KINDS = ("main", "randomised", "noisy", "other_target", "reference")
UNSAFE_MODE = "none (--unsafe-no-sandbox: local testing only)"


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create the namespaces it needs on this machine."""


@dataclass
class SandboxLimits:
    """Resource limits for one sandboxed run."""

    memory_bytes: int = 6 << 30
    cpu_seconds: int = 900
    wall_seconds: float = 900.0
    max_file_bytes: int = 256 << 20
    max_processes: int = 64
    max_disk_bytes: int = 512 << 20
    max_output_bytes: int = 1 << 20
    max_result_bytes: int = 128 << 20


@dataclass
class SandboxResult:
    """What came back from the sandbox: outputs on success, else a human-readable reason."""

    ok: bool
    outputs: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    log_excerpt: str = ""
    isolation: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0
    startup_seconds: float | None = None


# --------------------------------------------------------------------------------------------------- secrets

SECRET_NAME_MARKERS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY", "CREDENTIAL", "PRIVATE_KEY")
NOT_SECRET_PREFIXES = ("TOKENIZERS_",)
# Token-shaped strings: Hugging Face, GitHub, OpenAI-style, AWS access key ids, bearer headers.
TOKEN_PATTERN = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,}|sk-[A-Za-z0-9_-]{16,}"
    r"|AKIA[0-9A-Z]{16})\b|(?i:bearer\s+[A-Za-z0-9._~+/-]{12,}=*)"
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (``TOKENIZERS_*`` is no token)."""
    upper = name.upper()
    return not upper.startswith(NOT_SECRET_PREFIXES) and any(marker in upper for marker in SECRET_NAME_MARKERS)


def redact(text: str, environ: dict[str, str] | None = None) -> str:
    """``text`` with token-shaped strings and the values of secret-named environment variables replaced.

    The last line of defence for anything made public (FAILED reasons, log excerpts, params): a sandbox never
    sees the worker's environment, but a reason must not carry a secret even if one got in some other way.
    """
    environ = os.environ if environ is None else environ
    for name, value in environ.items():
        if is_secret_name(name) and value and len(value) >= 6:
            text = text.replace(value, "[redacted]")
    return TOKEN_PATTERN.sub("[redacted]", text)


def drop_secrets_from_environment(environ: dict[str, str] | None = None) -> list[str]:
    """Remove every secret-named variable from ``environ`` (default: this process's); return their names.

    The worker that starts sandboxes calls this at start: it must hold no token (publishing to the Hub is a
    separate step, ``scripts/publish_hub.py``).
    """
    environ = os.environ if environ is None else environ
    dropped = sorted(name for name in list(environ) if is_secret_name(name))
    for name in dropped:
        del environ[name]
    return dropped


# ------------------------------------------------------------------------------------------------ bubblewrap


def bwrap_path() -> str | None:
    """The bubblewrap binary on PATH (or ``$GECOBENCH_BWRAP``), or None."""
    return os.environ.get("GECOBENCH_BWRAP") or shutil.which("bwrap")


def _running_as_root() -> bool:
    return os.geteuid() == 0


def _readable_roots() -> list[Path]:
    """The Python installation and environment the sandbox needs, read-only (nothing else of the host)."""
    roots = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    if Path(sys.prefix) != Path(sys.prefix).resolve():
        roots.add(Path(sys.prefix))
    # /usr holds the system libraries; a Python under /usr is covered by it.
    return sorted(p for p in roots if not str(p).startswith("/usr/") and str(p) != "/usr")


@functools.lru_cache(maxsize=1)
def staged_library() -> Path:
    """A private read-only copy of the hub's Python packages (``.py`` files only) for ``/sandbox/lib``.

    Copying, rather than binding the checkout, keeps everything else of the checkout (data, stores, runs,
    ``.git``) out of the sandbox, and makes the copy immune to edits of the checkout while runs go on.
    """
    repo_root = Path(__file__).resolve().parent.parent
    stage = Path(tempfile.mkdtemp(prefix="gecobench-sandbox-lib-"))
    for package in STAGED_PACKAGES:
        for source in (repo_root / package).rglob("*.py"):
            target = stage / source.relative_to(repo_root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    shutil.copyfile(Path(__file__).with_name("sandbox_runner.py"), stage / "gecobench_sandbox_runner.py")
    for path in [stage, *stage.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return stage


_STAGED_CHECKPOINTS: dict[tuple[str, float], Path] = {}


def readable_checkpoint(folder: Path) -> Path:
    """``folder`` if the sandbox's unprivileged user can read all of it, else a world-readable private copy.

    Checkpoints are often written ``0600`` (safetensors does); the copy is made once per worker process and
    checkpoint state (its folder's modification time), and left alone by the runs (they bind it read-only).
    """
    files = [p for p in folder.rglob("*")]
    if all(p.stat().st_mode & (0o005 if p.is_dir() else 0o004) for p in [folder, *files]):
        return folder
    key = (str(folder), max([folder.stat().st_mtime] + [p.stat().st_mtime for p in files]))
    if key not in _STAGED_CHECKPOINTS:
        stage = Path(tempfile.mkdtemp(prefix="gecobench-sandbox-model-")) / folder.name
        shutil.copytree(folder, stage)
        for path in [stage.parent, stage, *stage.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _STAGED_CHECKPOINTS[key] = stage
    return _STAGED_CHECKPOINTS[key]


def _parents(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if str(p) != "/"]


def bwrap_command(
    uid: int | None, input_dir: Path, model_dirs: dict[str, Path], limits: SandboxLimits, command: Sequence[str],
) -> list[str]:
    """The bwrap command line for one run (``uid``: the host uid to drop to when the worker is root)."""
    args = [bwrap_path() or "bwrap", "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid",
            "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if uid is None:
        # Not root: a user namespace makes the unprivileged sandbox possible; no nested namespaces inside it.
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    if Path("/etc/ld.so.cache").is_file():
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    # Parent folders bwrap creates for the binds below must be traversable by the unprivileged user.
    made: set[Path] = set()
    readable = [*_readable_roots()]
    for root in readable:
        for parent in _parents(root):
            if parent not in made and str(parent) not in ("/usr",):
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(root), str(root)]
    args += ["--perms", "0755", "--dir", SANDBOX_ROOT, "--perms", "0755", "--dir", f"{SANDBOX_ROOT}/model"]
    args += ["--ro-bind", str(staged_library()), f"{SANDBOX_ROOT}/lib", "--ro-bind", str(input_dir), f"{SANDBOX_ROOT}/input"]
    for name, folder in model_dirs.items():
        args += ["--ro-bind", str(folder), f"{SANDBOX_ROOT}/model/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "01777", "--size", str(limits.max_disk_bytes), "--tmpfs", f"{SANDBOX_ROOT}/work",
             "--perms", "01777", "--size", str(16 << 20), "--tmpfs", "/tmp",
             "--chdir", f"{SANDBOX_ROOT}/work", "--clearenv"]
    for key, value in sandbox_environment().items():
        args += ["--setenv", key, value]
    args.append("--")
    if uid is not None:
        # bwrap ran as root to build the mounts; drop to the run's own uid, no capabilities, no new privileges.
        args += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return args + list(command)


def sandbox_environment() -> dict[str, str]:
    """The only environment a submission sees: no tokens, offline, single-threaded, HOME in the work folder."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{SANDBOX_ROOT}/work",
        "TMPDIR": f"{SANDBOX_ROOT}/work",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": f"{SANDBOX_ROOT}/work/hf",
        "MPLCONFIGDIR": f"{SANDBOX_ROOT}/work/mpl",
    }


def _choose_uid() -> int | None:
    return secrets.randbelow(SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]) + SANDBOX_UID_RANGE[0] if _running_as_root() else None


@functools.lru_cache(maxsize=1)
def sandbox_status() -> tuple[bool, str]:
    """Whether bubblewrap can build the sandbox here, and a sentence saying how (or why not). Probed once."""
    if not bwrap_path():
        return False, ("bubblewrap (bwrap) is not installed: install the Debian package `bubblewrap` "
                       "(`apt-get install bubblewrap`), or start the worker with --unsafe-no-sandbox for local testing only")
    if _running_as_root() and not (shutil.which("setpriv") or Path("/usr/bin/setpriv").exists()):
        return False, "setpriv (util-linux) is missing: the root worker needs it to drop to an unprivileged uid"
    with tempfile.TemporaryDirectory(prefix="gecobench-sandbox-probe-") as folder:
        Path(folder).chmod(0o755)
        probe = bwrap_command(_choose_uid(), Path(folder), {}, SandboxLimits(), ["/bin/true"])
        try:
            done = subprocess.run(probe, capture_output=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            return False, f"bubblewrap could not start: {err}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return False, (f"bubblewrap cannot create the sandbox's namespaces here ({detail or 'exit ' + str(done.returncode)}); "
                       "user namespaces may be disabled (sysctl user.max_user_namespaces / kernel.unprivileged_userns_clone)")
    mode = "root worker, a fresh unprivileged uid per run" if _running_as_root() else "unprivileged user namespace"
    return True, f"bubblewrap {mode}: mount, PID, network, IPC and UTS namespaces; no capabilities; cleared environment"


# ------------------------------------------------------------------------------------------------ one run


def _preexec(limits: SandboxLimits, nproc_base: int = 0):
    def apply() -> None:
        # Inherited through bwrap and setpriv by every process of the run.
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes))
        nproc = nproc_base + limits.max_processes
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


class _OutputDrain(threading.Thread):
    """Reads the sandbox's stdout+stderr pipe to EOF: the first ``cap`` bytes to a file, a short tail in memory."""

    def __init__(self, pipe, path: Path, cap: int, tail_bytes: int = 8192) -> None:
        super().__init__(daemon=True)
        self.pipe, self.path, self.cap = pipe, path, cap
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.tail_bytes = tail_bytes
        self.total = 0

    def run(self) -> None:
        with open(self.path, "wb") as sink:
            while True:
                chunk = self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
                if not chunk:
                    break
                if self.total < self.cap:
                    sink.write(chunk[: self.cap - self.total])
                self.total += len(chunk)
                self.tail.append(chunk)
                self.tail_size += len(chunk)
                while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_bytes:
                    self.tail_size -= len(self.tail.popleft())
        self.pipe.close()

    def excerpt(self, limit: int = 2000) -> str:
        text = b"".join(self.tail).decode("utf-8", "replace")
        text = text[-limit:]
        if self.total > self.cap:
            text = f"[output was {self.total} bytes; the first {self.cap} were kept]\n" + text
        return text


def _kill_uid(uid: int) -> int:
    """SIGKILL every process still running under ``uid`` (a run's own uid); return how many there were."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "status").read_text().split("\nUid:")[1].split()[0] == str(uid):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
        except (OSError, IndexError, ValueError):
            continue
    return killed


def processes_of_uid(uid: int) -> list[int]:
    """Process ids running under ``uid`` (tests use it to show that no process outlives a run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "status").read_text().split("\nUid:")[1].split()[0] == str(uid):
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


def _read_capped(path: Path, cap: int) -> bytes | str:
    """The file's bytes, or a reason string when it is no regular file or is over ``cap`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        return f"the result file could not be opened ({err.strerror})"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if (info.st_mode & 0o170000) != 0o100000:  # S_IFREG
            return "the result file is not a regular file"
        if info.st_size > cap:
            return f"the result file is {info.st_size} bytes; the limit is {cap} bytes"
        return handle.read(cap + 1)


def _finite_row(value: Any, length: int) -> list[float] | None:
    if not isinstance(value, list) or len(value) != length:
        return None
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return None
        out.append(float(v))
    return out


def parse_result(raw: bytes, words: Sequence[Sequence[str]], kinds: Sequence[str]) -> dict[str, Any]:
    """Strictly parse the result channel; raise ``ValueError`` with the problem (named field / index).

    Accepted: ``{"scores": {kind: [[float per word] per input]}, "explainer": {...}, "main_seconds": float}``
    with exactly the requested kinds, one finite number per word, and nothing else.
    """
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"the result is not valid JSON ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise ValueError("the result must be a JSON object")
    if "error" in data:
        return {"error": str(data.get("error"))[:200], "message": str(data.get("message", ""))[:2000],
                "traceback": str(data.get("traceback", ""))[-4000:]}
    unknown = set(data) - {"scores", "explainer", "main_seconds"}
    if unknown:
        raise ValueError(f"the result has unknown field(s) {sorted(unknown)}")
    scores = data.get("scores")
    if not isinstance(scores, dict) or set(scores) != set(kinds):
        got = sorted(scores) if isinstance(scores, dict) else type(scores).__name__
        raise ValueError(f"the result's scores must hold exactly the kinds {sorted(kinds)}, got {got}")
    parsed: dict[str, list[list[float]]] = {}
    for kind in kinds:
        values = scores[kind]
        if not isinstance(values, list) or len(values) != len(words):
            raise ValueError(f"the result's {kind} scores must be a list of {len(words)} rows")
        rows = []
        for index, (value, row_words) in enumerate(zip(values, words)):
            row = _finite_row(value, len(row_words))
            if row is None:
                raise ValueError(f"the result's {kind} scores for input {index} must be {len(row_words)} finite numbers "
                                 "(NaN, infinity or a wrong shape)")
            rows.append(row)
        parsed[kind] = rows
    explainer = data.get("explainer")
    if not isinstance(explainer, dict) or set(explainer) - {"name", "version", "params", "model_independent"}:
        raise ValueError("the result's explainer block must hold only name, version, params and model_independent")
    params = explainer.get("params", {})
    if not isinstance(params, dict) or len(json.dumps(params)) > 4096:
        raise ValueError("the explainer's params must be a JSON object of at most 4096 characters")
    seconds = data.get("main_seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise ValueError("the result's main_seconds must be a finite number >= 0")
    return {"scores": parsed, "explainer": {"name": str(explainer.get("name", ""))[:64],
                                            "version": str(explainer.get("version", ""))[:32], "params": params,
                                            "model_independent": explainer.get("model_independent") is True},
            "main_seconds": float(seconds)}


def run_submission(
    submission_file: str | Path,
    model_path: str | Path,
    words: list[list[str]],
    targets: list[int],
    limits: SandboxLimits | None = None,
    seed: int = 0,
    kinds: tuple[str, ...] = ("main", "randomised"),
    randomisation_seed: int = 1234,
    noise_std: float = 0.01,
    reference_model_path: str | Path | None = None,
    train_words: list[list[str]] | None = None,
    train_labels: list[int] | None = None,
    unsafe_no_sandbox: bool = False,
    item_ids: list[str] | None = None,
) -> SandboxResult:
    """Explain ``words`` for ``targets`` with the submitted explainer on the model at ``model_path``.

    ``kinds`` says which scores to compute, with the evaluation runner's meaning: ``main`` (the model),
    ``randomised`` (a re-initialised copy, for the model-randomisation check), ``noisy`` (small noise on the
    embeddings), ``other_target`` (other classes), ``reference`` (the zero-shot model at
    ``reference_model_path``). ``item_ids`` are the opaque ids the inputs file shows (random if not given).
    Returns a :class:`SandboxResult`; never raises for anything the submission does. Raises
    :class:`SandboxUnavailable` when bubblewrap cannot run here and ``unsafe_no_sandbox`` is not set.
    """
    limits = limits or SandboxLimits()
    available, how = sandbox_status() if not unsafe_no_sandbox else (False, UNSAFE_MODE)
    if not available and not unsafe_no_sandbox:
        raise SandboxUnavailable(how)
    model_path = Path(model_path).resolve()
    reference_model_path = Path(reference_model_path).resolve() if reference_model_path else None
    control = Path(tempfile.mkdtemp(prefix="gecobench-sandbox-"))  # 0700: the worker's alone
    input_dir = control / "input"
    input_dir.mkdir()
    uid = _choose_uid() if available else None
    isolation: dict[str, Any] = {
        "sandbox": how if available else UNSAFE_MODE,
        "memory_bytes": limits.memory_bytes, "cpu_seconds": limits.cpu_seconds, "wall_seconds": limits.wall_seconds,
        "max_processes": limits.max_processes, "max_file_bytes": limits.max_file_bytes,
        "max_disk_bytes": limits.max_disk_bytes, "environment": "cleared",
    }
    started = time.perf_counter()
    try:
        if available:
            root = {"input": f"{SANDBOX_ROOT}/input", "work": f"{SANDBOX_ROOT}/work", "lib": f"{SANDBOX_ROOT}/lib",
                    "model": f"{SANDBOX_ROOT}/model/main", "reference": f"{SANDBOX_ROOT}/model/reference"}
        else:
            work = control / "work"
            work.mkdir()
            root = {"input": str(input_dir), "work": str(work), "lib": str(staged_library()), "model": str(model_path),
                    "reference": str(reference_model_path) if reference_model_path else ""}
        shutil.copyfile(submission_file, input_dir / "submission.py")
        ids = item_ids or [secrets.token_hex(8) for _ in words]
        (input_dir / "inputs.json").write_text(json.dumps({
            "items": [{"id": i, "words": list(w), "target": int(t)} for i, w, t in zip(ids, words, targets)],
            "train_words": train_words, "train_labels": train_labels,
        }))
        job = {
            "work_dir": root["work"], "submission_file": f"{root['input']}/submission.py",
            "inputs_file": f"{root['input']}/inputs.json", "model_path": root["model"],
            "reference_model_path": root["reference"] if reference_model_path else None,
            "seed": seed, "kinds": list(kinds), "randomisation_seed": randomisation_seed, "noise_std": noise_std,
            "result_fd": RESULT_FD, "violation_fd": VIOLATION_FD,
        }
        (input_dir / "job.json").write_text(json.dumps(job))
        for path in (input_dir, *input_dir.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)
        result_path, violation_path, output_path = control / "result.json", control / "violations.txt", control / "output.log"
        runner = [sys.executable, "-I", "-B", f"{root['lib']}/gecobench_sandbox_runner.py", f"{root['input']}/job.json"]
        models = {"main": readable_checkpoint(model_path)} if available else {}
        if reference_model_path and available:
            models["reference"] = readable_checkpoint(reference_model_path)
        command = bwrap_command(uid, input_dir, models, limits, runner) if available else runner
        result_fd = os.open(result_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        violation_fd = os.open(violation_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        read_end, write_end = os.pipe()
        # RLIMIT_NPROC counts a uid's processes: a root worker's run has its own uid; otherwise the run shares
        # the worker's uid, so its allowance comes on top of what that uid already runs.
        nproc_base = 0 if uid is not None else len(processes_of_uid(os.getuid()))
        try:
            # The child's descriptors 3 and 4 are the result and violation files; nothing else is inherited.
            def child_setup() -> None:
                os.dup2(result_fd, RESULT_FD)
                os.dup2(violation_fd, VIOLATION_FD)
                for fd in (RESULT_FD, VIOLATION_FD):  # dup2 onto itself keeps close-on-exec
                    os.set_inheritable(fd, True)
                os.closerange(VIOLATION_FD + 1, 1 << 16)
                if not available:
                    os.setsid()
                _preexec(limits, nproc_base)()

            env = sandbox_environment() if available else {**sandbox_environment(), "HOME": root["work"],
                                                           "TMPDIR": root["work"]}
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end, env=env,
                cwd=root["work"] if not available else str(control), preexec_fn=child_setup, close_fds=False,
                start_new_session=available,
            )
        finally:
            os.close(write_end)
            os.close(result_fd)
            os.close(violation_fd)
        drain = _OutputDrain(os.fdopen(read_end, "rb"), output_path, limits.max_output_bytes)
        drain.start()
        timed_out = False
        try:
            process.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        # Whatever the outcome: kill bwrap (its PID-namespace init and every process of the run die with it)
        # and then anything still running under the run's uid.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        leftovers = _kill_uid(uid) if uid is not None else 0
        drain.join(timeout=10)
        elapsed = time.perf_counter() - started
        log = redact(drain.excerpt())
        violations = violation_path.read_text(errors="replace").strip().splitlines() if violation_path.exists() else []
        raw = _read_capped(result_path, limits.max_result_bytes)
        if leftovers:
            isolation["processes_killed_after_run"] = leftovers

        def failed(reason: str) -> SandboxResult:
            return SandboxResult(False, reason=redact(reason), log_excerpt=log, isolation=isolation, wall_seconds=elapsed)

        if timed_out:
            return failed(f"timed out: no result within the wall-clock limit of {limits.wall_seconds:g} s")
        code = process.returncode
        if violations:
            return failed(f"sandbox violation: the explainer {violations[0][:500]}")
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (code in (-signal.SIGKILL, 128 + signal.SIGKILL) and "CPU" in log):
            return failed(f"CPU time limit of {limits.cpu_seconds} s exceeded")
        if isinstance(raw, str):
            return failed(f"malformed result: {raw}")
        if "MemoryError" in log or "std::bad_alloc" in log or b'"MemoryError"' in raw[:200]:
            return failed(f"memory limit of {limits.memory_bytes / 2**30:.1f} GiB exceeded")
        if "File too large" in log or b"File too large" in raw[:4000]:
            return failed(f"file size limit exceeded: a file (or the work folder of {limits.max_disk_bytes >> 20} MiB) "
                          f"was written past {limits.max_file_bytes >> 20} MiB")
        if "No space left on device" in log or b"No space left on device" in raw[:4000]:
            return failed(f"disk limit exceeded: the work folder holds at most {limits.max_disk_bytes >> 20} MiB")
        if not raw:
            reason = f"the sandbox process ended with exit code {code} and no result"
            if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
                reason = f"file size limit of {limits.max_file_bytes >> 20} MiB exceeded"
            return failed(reason)
        try:
            parsed = parse_result(raw, words, kinds)
        except ValueError as err:
            return failed(f"malformed result: {err}")
        if "error" in parsed:
            if parsed["error"] == "MemoryError":
                return failed(f"memory limit of {limits.memory_bytes / 2**30:.1f} GiB exceeded")
            return SandboxResult(False, reason=redact(f"the explainer raised {parsed['error']}: {parsed['message']}"),
                                 log_excerpt=log or redact(parsed["traceback"]), isolation=isolation, wall_seconds=elapsed)
        if code != 0:
            return failed(f"the sandbox process ended with exit code {code} after writing a result")
        isolation["processes"] = "PID namespace" if available else "process group"
        return SandboxResult(True, outputs=parsed, log_excerpt=log, isolation=isolation, wall_seconds=elapsed)
    finally:
        shutil.rmtree(control, ignore_errors=True)

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
* **system calls** — a seccomp deny-list (:mod:`submissions.seccomp`): no keyring, no new or joined namespaces
  (nested user namespaces are refused on every path), no ptrace, BPF, mounts, modules, swap, reboot, …;
* **environment** — cleared, then a fixed minimal set (no tokens);
* **limits** — a cgroup per run (:mod:`submissions.cgroups`: memory with tmpfs and memfd pages and no swap, pids,
  CPU time of the whole run), plus ``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``, ``RLIMIT_NPROC``, no core
  dumps, the work folder's size, and a wall clock enforced *from outside*: the worker kills every process in the
  run's cgroup (bwrap's outer process then reaps its PID-namespace init), waits until the cgroup is empty and
  removes it, and then kills anything still running under the run's uid;
* **timing** — measured outside: the worker's clock from start to exit and the cgroup's CPU time
  (:attr:`SandboxResult.wall_seconds`, :attr:`SandboxResult.cpu_seconds`); the submission's own is a diagnostic.

One narrow channel back: the result file (descriptor 3), bounded by what the inputs need and parsed strictly,
line by line, by the worker (:func:`parse_result`). Standard output and error share one pipe that the worker drains into a size-capped
file (only a bounded tail is kept in memory). No other descriptor is inherited.

The audit hook of :mod:`submissions.sandbox_runner` stays as a diagnostic second layer: it names what a
submission tried (descriptor 4), but nothing relies on it.
"""

from __future__ import annotations

import atexit
import collections
import fcntl
import functools
import json
import logging
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

from submissions import seccomp
from submissions.cgroups import CgroupUnavailable, RunCgroup, cgroup_support

log = logging.getLogger("gecobench.submissions")

RESULT_FD = 3
VIOLATION_FD = 4
SECCOMP_FD = 5  # bwrap reads the seccomp program from it, and closes it
ARGS_FD = 6  # bwrap reads its options from it (--args), and closes it
STAGED_PACKAGES = ("geco_common", "geco_dataset", "gecobench")  # the layers a submission's run imports
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
    # Measured from outside: the worker's clock from the sandbox's start to its exit, and the CPU time the
    # kernel accounted to the run's cgroup (None without one).
    wall_seconds: float = 0.0
    cpu_seconds: float | None = None
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
    atexit.register(shutil.rmtree, stage, True)  # one per worker process, gone with it
    return stage


def readable_checkpoint(folder: Path, stage_root: Path) -> Path:
    """``folder`` if the sandbox's unprivileged user can read all of it, else a world-readable copy under
    ``stage_root`` (inside the run's own control folder, removed with it when the run ends).

    Checkpoints are often written ``0600`` (safetensors does). The copy is per run, not per worker: a staging
    folder that outlived its run was one more thing every submission left on the host.
    """
    files = [p for p in folder.rglob("*")]
    if all(p.stat().st_mode & (0o005 if p.is_dir() else 0o004) for p in [folder, *files]):
        return folder
    stage_root.mkdir(mode=0o755, exist_ok=True)
    stage = stage_root / folder.name
    shutil.copytree(folder, stage)
    for path in [stage_root, stage, *stage.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return stage


def _parents(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if str(p) != "/"]


def bwrap_command(
    uid: int | None, input_dir: Path, model_dirs: dict[str, Path], limits: SandboxLimits, command: Sequence[str],
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line for one run (``uid``: the host uid to drop to when the worker is root).

    ``seccomp_fd``: the descriptor number (in bwrap's process) holding :func:`submissions.seccomp.build_filter`'s
    program; bwrap loads it right before it executes ``command``. Nested user namespaces are refused on every
    path: ``--disable-userns`` where the sandbox has its own user namespace, and the filter (``unshare``,
    ``setns``, ``clone`` with namespace flags, ``clone3``) on every path, the root worker's included.
    """
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
    # The small /tmp comes *before* the Python installation's binds: bwrap mounts in order, and an interpreter or
    # virtual environment under /tmp bound first would be hidden by a tmpfs mounted over it afterwards.
    args += ["--perms", "01777", "--size", str(16 << 20), "--tmpfs", "/tmp"]
    # Parent folders bwrap creates for the binds below must be traversable by the unprivileged user.
    made: set[Path] = set()
    for root in _readable_roots():
        for parent in _parents(root):
            if parent not in made and str(parent) not in ("/usr", "/tmp"):
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(root), str(root)]
    args += ["--perms", "0755", "--dir", SANDBOX_ROOT, "--perms", "0755", "--dir", f"{SANDBOX_ROOT}/model"]
    args += ["--ro-bind", str(staged_library()), f"{SANDBOX_ROOT}/lib", "--ro-bind", str(input_dir), f"{SANDBOX_ROOT}/input"]
    for name, folder in model_dirs.items():
        args += ["--ro-bind", str(folder), f"{SANDBOX_ROOT}/model/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "01777", "--size", str(limits.max_disk_bytes), "--tmpfs", f"{SANDBOX_ROOT}/work",
             "--chdir", f"{SANDBOX_ROOT}/work", "--clearenv"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
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
    try:
        seccomp.build_filter()
    except seccomp.SeccompUnsupported as err:
        return False, f"{err}: the sandbox needs its seccomp filter"
    groups, groups_how = cgroup_support()
    # The real path, end to end: a trivial explainer in the real sandbox (interpreter, staged packages, mounts,
    # seccomp, cgroup, result channel). A sandbox that starts but cannot run Python (an interpreter hidden by a
    # mount) must not pass for working.
    with tempfile.TemporaryDirectory(prefix="gecobench-sandbox-probe-") as folder:
        probe = Path(folder) / "probe_explainer.py"
        probe.write_text(PROBE_EXPLAINER)
        try:
            done = run_submission(probe, None, [["probe", "words"]], [0], kinds=("main",), _probing=True,
                                  limits=SandboxLimits(wall_seconds=120, cpu_seconds=120))
        except (OSError, SandboxUnavailable, subprocess.SubprocessError) as err:
            return False, f"bubblewrap could not start: {err}"
    if not done.ok or done.outputs["scores"]["main"] != [[1.0, 2.0]]:
        detail = (done.reason + "; " + done.log_excerpt.strip()[-400:]).strip("; ")
        return False, (f"the sandbox cannot run a trivial explainer here ({detail}); if bubblewrap itself fails, "
                       "user namespaces may be disabled (sysctl user.max_user_namespaces); if Python is not found, "
                       f"the interpreter {sys.executable} is not visible inside the sandbox")
    mode = "root worker, a fresh unprivileged uid per run" if _running_as_root() else "unprivileged user namespace"
    limits_how = (f"a {groups_how} per run (memory incl. tmpfs and memfd, no swap where the kernel accounts it; pids; CPU time)" if groups
                  else f"no per-run cgroup ({groups_how}): memory bounded by RLIMIT_AS only")
    return True, (f"bubblewrap {mode}: mount, PID, network, IPC and UTS namespaces; no capabilities; seccomp "
                  f"deny-list; no nested user namespaces; cleared environment; {limits_how}")


PROBE_EXPLAINER = """
class StartupProbe:
    name = "startup_probe"

    def explain(self, model, tokenizer, words, targets):
        return [[float(i + 1) for i in range(len(w))] for w in words]
"""


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


# ------------------------------------------------------------------------------------------------ result channel
#
# The result file (descriptor 3) holds JSON lines: first a header — ``{"explainer": {...}, "main_seconds": s}``
# or an error report ``{"error": type, "message": ..., "traceback": ...}`` — then one line per (kind, input), the
# kinds in the job's order, each a JSON list of one number per word. Its largest well-formed size follows from
# the inputs, so anything larger is refused before a byte of it is parsed, and each line is size-checked against
# its own input's word count before it is parsed: the worker never holds more than a small multiple of what the
# inputs need (a 32 MiB result of ``[[]],…`` parsed at once had cost it 1 GiB).

# The JSON text of one float (repr: at most 24 characters, as in -2.2250738585072014e-308) and its separator.
MAX_NUMBER_BYTES = 26
ROW_OVERHEAD_BYTES = 16
# The header: the explainer block (params of at most 4096 characters, up to 6 bytes each once JSON-escaped) and
# the self-reported seconds, or an error report (a 200-character type, 2000-character message, 4000-character
# traceback, up to 6 bytes each).
MAX_HEADER_BYTES = 64 << 10


def result_row_bytes(n_words: int) -> int:
    """The most bytes one well-formed score line for an input of ``n_words`` words takes."""
    return ROW_OVERHEAD_BYTES + n_words * MAX_NUMBER_BYTES


def result_size_bound(words: Sequence[Sequence[str]], kinds: Sequence[str]) -> int:
    """The most bytes a well-formed result for these inputs and score kinds can take."""
    return MAX_HEADER_BYTES + 1 + len(kinds) * sum(result_row_bytes(len(w)) + 1 for w in words)


def _json_loads(text: bytes) -> Any:
    try:
        return json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"the result is not valid JSON ({type(err).__name__})") from None


def parse_result(raw: bytes, words: Sequence[Sequence[str]], kinds: Sequence[str]) -> dict[str, Any]:
    """Strictly parse the result channel; raise ``ValueError`` with the problem (named field / index).

    Accepted: a header line ``{"explainer": {...}, "main_seconds": float}`` and then exactly one line per
    requested kind and input (in the order of ``kinds``), each one finite number per word; nothing else. The
    whole is refused unread when it is over :func:`result_size_bound`, and each line when it is over its row's
    bound. ``main_seconds`` is the submission's own timing: a diagnostic only.
    """
    bound = result_size_bound(words, kinds)
    if len(raw) > bound:
        raise ValueError(f"the result is {len(raw)} bytes; at most {bound} bytes for {len(words)} inputs of "
                         f"{sum(map(len, words))} words and {len(kinds)} score kinds")
    header, _, body = raw.partition(b"\n")
    if len(header) > MAX_HEADER_BYTES:
        raise ValueError(f"the result's first line is {len(header)} bytes; at most {MAX_HEADER_BYTES}")
    data = _json_loads(header)
    if not isinstance(data, dict):
        raise ValueError("the result must be a JSON object")
    if "error" in data:
        return {"error": str(data.get("error"))[:200], "message": str(data.get("message", ""))[:2000],
                "traceback": str(data.get("traceback", ""))[-4000:]}
    unknown = set(data) - {"explainer", "main_seconds"}
    if unknown:
        raise ValueError(f"the result has unknown field(s) {sorted(unknown)}")
    lines = body.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    expected = len(kinds) * len(words)
    if len(lines) != expected:
        raise ValueError(f"the result's scores must hold exactly the kinds {list(kinds)} for {len(words)} inputs: "
                         f"{expected} score lines, got {len(lines)}")
    parsed: dict[str, list[list[float]]] = {}
    for k, kind in enumerate(kinds):
        rows = []
        for index, row_words in enumerate(words):
            line = lines[k * len(words) + index]
            limit = result_row_bytes(len(row_words))
            if len(line) > limit:
                raise ValueError(f"the result's {kind} scores for input {index} are {len(line)} bytes; at most "
                                 f"{limit} for {len(row_words)} words")
            row = None
            if line.count(b"[") == 1:  # one flat list: nothing nested is ever parsed
                try:
                    row = _finite_row(json.loads(line.decode("utf-8")), len(row_words))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    row = None
            if row is None:
                raise ValueError(f"the result's {kind} scores for input {index} must be {len(row_words)} finite "
                                 "numbers (NaN, infinity or a wrong shape)")
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


def encode_result(scores: dict[str, list[list[float]]], kinds: Sequence[str], header: dict[str, Any]) -> bytes:
    """The result channel's bytes for ``scores`` (what :mod:`submissions.sandbox_runner` writes; for tests)."""
    lines = [json.dumps(header)] + [json.dumps(row) for kind in kinds for row in scores[kind]]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------------------------------------ one run


def _bwrap_argv_via_fd(full: list[str]) -> tuple[list[str], bytes]:
    """Move bwrap's options into an ``--args`` descriptor: the PID-namespace init's ``/proc/1/cmdline`` then shows
    ``bwrap --args 6 -- <command>`` instead of every host path the sandbox binds."""
    split = full.index("--")
    options = full[1:split]
    data = b"".join(arg.encode() + b"\0" for arg in options)
    return [full[0], "--args", str(ARGS_FD), *full[split:]], data


def _memfd_with(data: bytes, name: str) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def run_submission(
    submission_file: str | Path,
    model_path: str | Path | None,
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
    _probing: bool = False,
) -> SandboxResult:
    """Explain ``words`` for ``targets`` with the submitted explainer on the model at ``model_path``.

    ``kinds`` says which scores to compute, with the evaluation runner's meaning: ``main`` (the model),
    ``randomised`` (a re-initialised copy, for the model-randomisation check), ``noisy`` (small noise on the
    embeddings), ``other_target`` (other classes), ``reference`` (the zero-shot model at
    ``reference_model_path``). ``item_ids`` are the opaque ids the inputs file shows (random if not given).
    Returns a :class:`SandboxResult` whose ``wall_seconds`` and ``cpu_seconds`` are measured from outside (the
    worker's clock from start to exit; the run's cgroup's CPU time); never raises for anything the submission
    does. Raises :class:`SandboxUnavailable` when bubblewrap cannot run here and ``unsafe_no_sandbox`` is not set.
    ``_probing`` (the start-up check, :func:`sandbox_status`): no model, the explainer is called directly.
    """
    limits = limits or SandboxLimits()
    if _probing:
        available, how = True, "start-up probe"
    else:
        available, how = sandbox_status() if not unsafe_no_sandbox else (False, UNSAFE_MODE)
    if not available and not unsafe_no_sandbox:
        raise SandboxUnavailable(how)
    model_path = Path(model_path).resolve() if model_path is not None else None
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
    cgroup: RunCgroup | None = None
    if available:
        try:
            cgroup = RunCgroup.create(limits.memory_bytes, limits.max_processes)
            isolation["cgroup"] = cgroup.describe()
        except CgroupUnavailable as err:
            isolation["cgroup"] = f"none ({err}): memory bounded by RLIMIT_AS only"
        isolation["seccomp"] = (f"deny-list of {len(seccomp.denied_syscalls())} system calls (EPERM), clone with "
                                "namespace flags (EPERM), clone3 (ENOSYS), foreign ABIs")
    try:
        if available:
            root = {"input": f"{SANDBOX_ROOT}/input", "work": f"{SANDBOX_ROOT}/work", "lib": f"{SANDBOX_ROOT}/lib",
                    "model": f"{SANDBOX_ROOT}/model/main", "reference": f"{SANDBOX_ROOT}/model/reference"}
        else:
            work = control / "work"
            work.mkdir()
            root = {"input": str(input_dir), "work": str(work), "lib": str(staged_library()),
                    "model": str(model_path) if model_path else "",
                    "reference": str(reference_model_path) if reference_model_path else ""}
        shutil.copyfile(submission_file, input_dir / "submission.py")
        ids = item_ids or [secrets.token_hex(8) for _ in words]
        (input_dir / "inputs.json").write_text(json.dumps({
            "items": [{"id": i, "words": list(w), "target": int(t)} for i, w, t in zip(ids, words, targets)],
            "train_words": train_words, "train_labels": train_labels,
        }))
        job = {
            "work_dir": root["work"], "submission_file": f"{root['input']}/submission.py",
            "inputs_file": f"{root['input']}/inputs.json", "model_path": root["model"] if model_path else None,
            "reference_model_path": root["reference"] if reference_model_path else None,
            "seed": seed, "kinds": list(kinds), "randomisation_seed": randomisation_seed, "noise_std": noise_std,
            "result_fd": RESULT_FD, "violation_fd": VIOLATION_FD, "probe": _probing,
        }
        (input_dir / "job.json").write_text(json.dumps(job))
        for path in (input_dir, *input_dir.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)
        result_path, violation_path, output_path = control / "result.json", control / "violations.txt", control / "output.log"
        runner = [sys.executable, "-I", "-B", f"{root['lib']}/gecobench_sandbox_runner.py", f"{root['input']}/job.json"]
        models: dict[str, Path] = {}
        if available and model_path is not None:
            models["main"] = readable_checkpoint(model_path, control / "stage-main")
        if reference_model_path and available:
            models["reference"] = readable_checkpoint(reference_model_path, control / "stage-reference")
        passed: list[tuple[int, int]] = []  # (descriptor in this process, number in the child)
        if available:
            argv, options = _bwrap_argv_via_fd(
                bwrap_command(uid, input_dir, models, limits, runner, seccomp_fd=SECCOMP_FD))
            passed += [(seccomp.filter_fd(), SECCOMP_FD), (_memfd_with(options, "gecobench-bwrap-args"), ARGS_FD)]
        else:
            argv = runner
        result_fd = os.open(result_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        violation_fd = os.open(violation_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        passed = [(result_fd, RESULT_FD), (violation_fd, VIOLATION_FD), *passed]
        read_end, write_end = os.pipe()
        # RLIMIT_NPROC counts a uid's processes: a root worker's run has its own uid; otherwise the run shares
        # the worker's uid, so its allowance comes on top of what that uid already runs.
        nproc_base = 0 if uid is not None else len(processes_of_uid(os.getuid()))
        try:
            # The child's descriptors: 3 and 4 the result and violation files, 5 and 6 (bwrap reads and closes
            # them) the seccomp program and bwrap's options; nothing else is inherited.
            def child_setup() -> None:
                if cgroup is not None:
                    cgroup.join()  # before bwrap starts: every process of the run is in the cgroup from the first
                high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd, _ in passed]  # no dup2 may clobber another
                for fd, (_, target) in zip(high, passed):
                    os.dup2(fd, target, inheritable=True)
                os.closerange(max(target for _, target in passed) + 1, 1 << 16)
                if not available:
                    os.setsid()
                _preexec(limits, nproc_base)()

            env = sandbox_environment() if available else {**sandbox_environment(), "HOME": root["work"],
                                                           "TMPDIR": root["work"]}
            run_started = time.monotonic()
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end, env=env,
                cwd=root["work"] if not available else str(control), preexec_fn=child_setup, close_fds=False,
                start_new_session=available,
            )
        finally:
            os.close(write_end)
            for fd, _ in passed:
                os.close(fd)
        drain = _OutputDrain(os.fdopen(read_end, "rb"), output_path, limits.max_output_bytes)
        drain.start()
        timed_out = cpu_exceeded = False
        poll = 0.01
        while True:
            try:
                process.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                poll = min(poll * 2, 0.25)
            if time.monotonic() - run_started > limits.wall_seconds:
                timed_out = True
                break
            used = cgroup.cpu_seconds() if cgroup is not None else None
            if used is not None and used > limits.cpu_seconds:
                cpu_exceeded = True  # the whole run's CPU time (every process), not one process's RLIMIT_CPU
                break
        run_wall = time.monotonic() - run_started
        # Whatever the outcome, nothing of the run may go on: kill every process in the run's cgroup but bwrap's
        # outer process, which then reaps its PID-namespace init and exits (no zombie, no init left behind).
        leftovers = 0
        if cgroup is not None:
            cgroup.wait_empty(timeout=10, spare=process.pid)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if not cgroup.wait_empty(timeout=10):
                isolation["cgroup_not_emptied"] = cgroup.processes()
        else:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        leftovers = _kill_uid(uid) if uid is not None else 0
        cpu_used = cgroup.cpu_seconds() if cgroup is not None else None
        memory_hit = cgroup.hit_memory_limit() if cgroup is not None else False
        oom_kills = cgroup.oom_kills() if cgroup is not None else 0
        if cgroup is not None:
            isolation["memory_peak_bytes"] = cgroup.memory_peak_bytes()
            if not cgroup.remove():
                isolation["cgroup_not_removed"] = [str(f) for f in cgroup.folders.values()]
                log.error("the run's cgroup %s could not be removed", cgroup.folders)
        drain.join(timeout=10)
        log_text = redact(drain.excerpt())
        violations = violation_path.read_text(errors="replace").strip().splitlines() if violation_path.exists() else []
        raw = _read_capped(result_path, min(limits.max_result_bytes, result_size_bound(words, kinds)))
        if leftovers:
            isolation["processes_killed_after_run"] = leftovers
        isolation["measured_outside"] = {"wall_seconds": round(run_wall, 4),
                                         "cpu_seconds": round(cpu_used, 4) if cpu_used is not None else None}

        def result(ok: bool, reason: str = "", outputs: dict[str, Any] | None = None, excerpt: str | None = None):
            return SandboxResult(ok, outputs=outputs or {}, reason=redact(reason), isolation=isolation,
                                 log_excerpt=log_text if excerpt is None else excerpt, wall_seconds=run_wall,
                                 cpu_seconds=cpu_used)

        def failed(reason: str) -> SandboxResult:
            return result(False, reason)

        memory_reason = (f"memory limit of {limits.memory_bytes / 2**30:.1f} GiB exceeded"
                         + (" (the kernel's limit on the run's cgroup, tmpfs and memfd pages included)"
                            if memory_hit or oom_kills else ""))
        if timed_out:
            return failed(f"timed out: no result within the wall-clock limit of {limits.wall_seconds:g} s")
        code = process.returncode
        if violations:
            return failed(f"sandbox violation: the explainer {violations[0][:500]}")
        if cpu_exceeded or code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (
                code in (-signal.SIGKILL, 128 + signal.SIGKILL) and "CPU" in log_text):
            return failed(f"CPU time limit of {limits.cpu_seconds} s exceeded")
        if isinstance(raw, str):
            return failed(f"malformed result: {raw}")
        if oom_kills or "MemoryError" in log_text or "std::bad_alloc" in log_text or b'"MemoryError"' in raw[:200]:
            return failed(memory_reason)
        if "File too large" in log_text or b"File too large" in raw[:4000]:
            return failed(f"file size limit exceeded: a file (or the work folder of {limits.max_disk_bytes >> 20} MiB) "
                          f"was written past {limits.max_file_bytes >> 20} MiB")
        if "No space left on device" in log_text or b"No space left on device" in raw[:4000]:
            return failed(f"disk limit exceeded: the work folder holds at most {limits.max_disk_bytes >> 20} MiB")
        if not raw:
            if memory_hit and code in (-signal.SIGKILL, 128 + signal.SIGKILL, 137):
                return failed(memory_reason)
            reason = f"the sandbox process ended with exit code {code} and no result"
            if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
                reason = f"file size limit of {limits.max_file_bytes >> 20} MiB exceeded"
            return failed(reason)
        try:
            parsed = parse_result(raw, words, kinds)
        except ValueError as err:
            return failed(f"malformed result: {err}")
        if "error" in parsed:
            if parsed["error"] == "MemoryError" or (memory_hit and parsed["error"] == "OSError"
                                                    and "Cannot allocate memory" in parsed["message"]):
                return failed(memory_reason)
            return result(False, f"the explainer raised {parsed['error']}: {parsed['message']}",
                          excerpt=log_text or redact(parsed["traceback"]))
        if code != 0:
            return failed(f"the sandbox process ended with exit code {code} after writing a result")
        isolation["processes"] = "PID namespace" if available else "process group"
        return result(True, outputs=parsed)
    finally:
        if cgroup is not None and not cgroup.removed:
            cgroup.wait_empty(timeout=5)
            cgroup.remove()
        shutil.rmtree(control, ignore_errors=True)

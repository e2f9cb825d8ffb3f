"""Hostile code submissions through the real queue path (submit → process_queue), each next to a benign one.

For every hostile submission: the request ends FAILED with a specific reason (a timing cheat: FINISHED, with the
worker's own measurement in its record); the stores (apart from the legitimate records and the worker's own
status events), the checkout, HOME and an outside folder are unchanged; the worker's token appears nowhere; no
process, cgroup or staging folder of a run is left; nothing reached a listener on the host's loopback; and the
benign submission in the same queue run FINISHES.

The default run takes a few representative attacks (one queue run), the kernel-limit, channel and timing cases
of issue #35 (another), and the oversized result with the worker's peak memory; the whole suite is ``slow``
(about 20 min on two busy cores; ``GECOBENCH_HOSTILE=name,name`` picks some)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gecobench.evaluation.runner import EvaluationSettings
from gecobench.store import LocalStore
from submissions import RequestStore, submit_file
from submissions.cgroups import leftover_run_cgroups
from submissions.sandbox import (
    SANDBOX_UID_RANGE,
    SandboxLimits,
    sandbox_status,
    staged_library,
)
from submissions.worker import WorkerConfig, process_queue
from tests.conftest import REPO_ROOT
from tests.test_submissions_sandbox import EXAMPLE, HOSTILE, save_tiny_checkpoint

pytestmark = pytest.mark.skipif(not sandbox_status()[0], reason=f"no sandbox here: {sandbox_status()[1]}")

META = {"authors": "Mallory", "description": "hostile", "license": "MIT", "contact": "m@example.org"}

# file → a piece of the FAILED reason that says what stopped it (or a tuple of acceptable pieces).
HOSTILE_REASONS = {
    # reading the ground truth
    "reads_ground_truth": "raised FileNotFoundError",
    "gt_walks_filesystem": "raised FileNotFoundError: no GECO ground truth anywhere",
    "gt_dirfd_open": "raised FileNotFoundError",
    "gt_symlink": "raised FileNotFoundError",
    "gt_diffs_variants": "no two inputs are variants",
    # reading secrets
    "reads_env_token": "sandbox violation: the explainer read the secret-looking environment variable",
    "secret_parent_environ": "raised PermissionError",
    "secret_parent_mem": "raised PermissionError",
    "secret_scans_proc": "raised LookupError: no token",
    "secret_token_file": "raised FileNotFoundError",
    # writing outside
    "writes_outside": "sandbox violation: the explainer wrote outside its working directory",
    "write_dirfd": "raised FileNotFoundError",
    "write_package": "raised PermissionError",
    "write_host_package": "raised FileNotFoundError",
    "write_results_store": "raised FileNotFoundError",
    "write_requests_store": "raised FileNotFoundError",
    "write_venv": "Read-only file system",
    # network
    "opens_socket": "sandbox violation: the explainer opened a network socket",
    "net_ctypes_connect": "raised ConnectionRefusedError",
    "net_child_process": "raised ConnectionError: the child process could not reach the host",
    "net_reenter_namespace": "raised PermissionError",
    "net_dns": "raised ConnectionError: no route to the internet",
    # processes
    "fork_bomb": "sandbox violation: the explainer spawned a process",
    "proc_spawns_orphans": "raised RuntimeError: orphans left behind",
    "proc_ctypes_system": "raised PermissionError: the shell ran as uid",
    "proc_kills_parent": "raised PermissionError",
    "proc_kills_everything": "raised ProcessLookupError",  # nothing it may signal exists
    "proc_orphan_holds_pipe": "raised RuntimeError: an orphan holds the output pipe",
    # resources
    "allocates_50gb": "memory limit",
    # memfd pages count against the run's cgroup: the kernel stops it (OOM kill) or a write fails inside
    "res_memfd_memory": ("memory limit", "Cannot allocate memory"),
    # channels and namespaces the seccomp filter closes
    "userns_nested_tmpfs": "unshare: Operation not permitted; clone: Operation not permitted",
    "keyring_between_runs": "add_key: Operation not permitted",
    # Its CPU limit (30 s) or, on a machine so busy that it cannot get 30 s of CPU in 100 s, the wall clock.
    "loops_forever": ("CPU time limit", "timed out"),
    "res_sleeps_forever": "timed out",
    "res_fills_disk": "disk limit exceeded",
    "res_big_file": "file size limit exceeded",
    "res_prints_flood": "raised RuntimeError: flooded the output",
    # forged results and malformed outputs
    "forge_result_fields": "malformed result: the result has unknown field(s)",
    "forge_huge_result": "malformed result: the result file is",
    # over what the inputs can need: refused before a byte is parsed
    "forge_deep_result": ("malformed result: the result file is", "malformed result: the result is not valid JSON"),
    "forge_empty_lists_result": "malformed result: the result file is",
    "forge_erases_violation": "raised ConnectionRefusedError",
    "raises": "raised RuntimeError: deliberate failure",
    "returns_nan": "NaN",
    "wrong_shape": "shape",
    "returns_strings": "scores are not numeric",
}
# Cheats on the timing that must FINISH with an honest outside measurement (file → CPU seconds of work it does
# per sentence explained, and per sandbox run in fit()).
HONEST_TIMING = {"time_patched_timer": {"per_sentence": 0.4, "per_run": 0.0},
                 "time_work_in_fit": {"per_sentence": 0.0, "per_run": 1.5}}
# Lookups of the public answers and a forged result that must FINISH with the right flag (gecobench.flags): the
# hidden control models catch the lookups; one model per sandbox run makes a forged constant model-independent.
FLAGGED = {"lexicon_explainer": "data_not_model", "learned_lexicon": "data_not_model",
           "answer_key": "data_not_model", "forge_constant_result": "model_independent"}
# What #35 found, in one queue run of its own (kernel limits, channels between runs, outside timing).
KERNEL_RUN = ("res_memfd_memory", "userns_nested_tmpfs", "keyring_between_runs", "forge_empty_lists_result",
              *HONEST_TIMING)
# One per kind of attack, cheap enough for the default run, with the stopped clock: outside timing has no unit test
# of its own (memfd memory, the nested namespace and the keyring do: tests/test_sandbox_limits.py and
# tests/test_sandbox_seccomp.py; the oversized result: its own test below).
DEFAULT_RUN = ("gt_dirfd_open", "secret_parent_environ", "write_package", "net_ctypes_connect",
               "proc_kills_everything", "forge_result_fields", "time_patched_timer")
LIMITS = SandboxLimits(memory_bytes=3 << 30, cpu_seconds=30, wall_seconds=100, max_file_bytes=64 << 20,
                       max_disk_bytes=256 << 20, max_result_bytes=8 << 20, max_output_bytes=256 << 10,
                       max_processes=32)
CHECKOUT_CODE = ("geco_common", "gecobench", "geco_dataset", "submissions", "scripts", "leaderboard_space", "metrics",
                 "setup.cfg", "pyproject.toml")
SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", "runs", "site", "requests", "results", ".hypothesis"}


def tree_fingerprint(root: Path, max_depth: int | None = None) -> str:
    """A hash of every file's path, size, mode and content hash (or mtime for big files) under ``root``."""
    digest = hashlib.sha256()
    root = Path(root)
    if root.is_file():
        return hashlib.sha256(root.read_bytes()).hexdigest()
    for folder, dirs, files in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and (max_depth is None or depth < max_depth))
        for name in sorted(files):
            path = Path(folder) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}\0{info.st_size}\0{info.st_mode}\0".encode())
            if path.is_file() and not path.is_symlink() and info.st_size < (1 << 20):
                digest.update(hashlib.sha256(path.read_bytes()).digest())
            else:
                digest.update(str(info.st_mtime_ns).encode())
    return digest.hexdigest()


class Listener:
    """A TCP listener on the host's loopback that records every connection (none may arrive)."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.server.close()


def _started_here(pid: str) -> bool:
    """Whether process ``pid`` belongs to this test process's runs: it is in one of this worker's run cgroups (a
    run's process cannot leave its cgroup), or this process is among its ancestors (a run without a cgroup). Other
    tests' sandbox runs on the same machine (another worker, another engineer) are not this test's business."""
    from submissions.cgroups import RUN_PREFIX

    mine = f"{RUN_PREFIX}{os.getpid()}-"
    try:
        if mine in Path(f"/proc/{pid}/cgroup").read_text():
            return True
        while pid not in ("0", "1"):
            status = Path(f"/proc/{pid}/status").read_text()
            pid = status.split("\nPPid:")[1].split()[0]
            if pid == str(os.getpid()):
                return True
    except (OSError, IndexError):
        return False
    return False


def sandbox_processes() -> list[str]:
    """Processes of this test's sandbox runs (uid in the sandbox range) or started by the hostile files
    (``sleep 99x``) that are still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            uid = int((entry / "status").read_text().split("\nUid:")[1].split()[0])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if ((SANDBOX_UID_RANGE[0] <= uid < SANDBOX_UID_RANGE[1] or command.startswith(("sleep 997", "sleep 998")))
                and _started_here(entry.name)):
            found.append(f"{entry.name} uid {uid}: {command}")
    return found


def children_of(pid: int, besides: Iterable[str] = ()) -> list[str]:
    """Processes (zombies included) whose parent is ``pid`` (``"PID STATE NAME"``), other than the processes of
    ``besides`` (what an earlier call returned: the children the test found when it started, e.g. the resource
    tracker another test's process pool left in this pytest process; matched by pid, as their state changes): a
    run's bwrap must be reaped when the run ends."""
    known = {child.split()[0] for child in besides}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == pid and entry.name not in known:
                found.append(f"{entry.name} {state} {stat.split(' (', 1)[1].rsplit(')', 1)[0]}")
    return found


def answer_key_text(geco_dir: Path) -> str:
    """The test split's ground-truth masks, keyed by the sentence's words (what ``answer_key.py`` embeds)."""
    from gecobench.evaluation.data import load_split

    rows = load_split("binary_all", "test", geco_dir).rows
    return json.dumps({"\u0001".join(r.words): list(r.ground_truth) for r in rows})


def run_hostile_queue(names, tmp_path: Path, model_set: list[str], geco_dir: Path, shared_data: Path,
                      control_dir: Path | None = None, max_groups: int = 1) -> dict:
    """Submit ``names`` and the benign example, run the queue (two workers), and check containment."""
    children_before = children_of(os.getpid())
    requests = RequestStore(tmp_path / "requests")
    results = tmp_path / "results"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("must stay as it is")
    listener = Listener()
    host = {"data_dir": str(shared_data), "outside": str(outside), "checkout": str(REPO_ROOT),
            "results": str(results), "requests": str(requests.root), "home": str(Path.home()), "port": listener.port}
    folder = tmp_path / "submitted"
    folder.mkdir()
    submitted = {}
    for name in names:
        text = (HOSTILE / f"{name}.py").read_text()
        if name == "reads_ground_truth":
            text = text.replace("KNOWN_DATA_ROOTS: list[str] = []", f"KNOWN_DATA_ROOTS = [{str(shared_data)!r}]")
        if name == "answer_key":
            text = text.replace("__ANSWERS__", answer_key_text(geco_dir))
        path = folder / f"{name}.py"
        path.write_text(text.replace("__HOST__", json.dumps(host)))
        submitted[name] = submit_file(requests, "code", {**META, "name": name, "version": "1.0.0"}, path,
                                      submitter="mallory").request_id
    benign = submit_file(requests, "code", {**META, "name": "gradient_norm", "version": "1.0.0"}, EXAMPLE,
                         submitter="ada").request_id
    settings = EvaluationSettings(max_groups=max_groups, bootstrap=20, filter="none", properties=False,
                                  data_dir=str(geco_dir))
    config = WorkerConfig(model_paths=model_set, configs=["binary_all"], results_location=str(results),
                          data_dir=str(geco_dir), settings=settings, checkpoint_dir=str(tmp_path / "ckpt"),
                          limits=LIMITS, control_dir=str(control_dir) if control_dir else None)
    immutable = {rid: tree_fingerprint(requests.root / rid / "payload") + (requests.root / rid / "request.json").read_text()
                 for rid in [*submitted.values(), benign]}
    # The checkout's code and configuration (what a planted file would run from; docs and tests may be edited
    # while this runs), HOME's own files and its Hugging Face token files (the caches under HOME change with
    # every evaluation, the worker's own included).
    hf_home = Path.home() / ".cache" / "huggingface"
    watched = {**{f"checkout {name}": (REPO_ROOT / name, None) for name in CHECKOUT_CODE if (REPO_ROOT / name).exists()},
               "home": (Path.home(), 0), "outside": (outside, None),
               **{f"hf {name}": (hf_home / name, None) for name in ("token", "stored_tokens")}}

    def fingerprint_of(path: Path, depth: int | None) -> str:
        return tree_fingerprint(path, depth) if path.exists() else "absent"

    before = {key: fingerprint_of(path, depth) for key, (path, depth) in watched.items()}
    token = "hf_" + secrets.token_hex(16)
    saved = os.environ.get("HF_TOKEN")
    os.environ["HF_TOKEN"] = token
    # Two workers share this process: import the scoring libraries first, or their first imports race in two
    # threads (a partly imported `requests` seen by `evaluate`), which a real, single-threaded worker never does.
    import datasets  # noqa: F401
    import evaluate  # noqa: F401

    # Every control and staging folder of a run is made under this process's temporary folder: point it at one of
    # this test's own, which must be empty again at the end (the staged library lives for the worker process).
    staged_library()
    staging = tmp_path / "staging"
    staging.mkdir()
    saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(staging)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            passes = list(pool.map(lambda _: process_queue(requests, config), range(2)))
    finally:
        tempfile.tempdir = saved_tempdir
        listener.close()
        if saved is None:
            os.environ.pop("HF_TOKEN", None)
        else:
            os.environ["HF_TOKEN"] = saved
    outcomes = {}
    for one_pass in passes:
        for rid, status in one_pass.items():
            if status != "SKIPPED":
                outcomes[rid] = status
    views = {view.request_id: view for view in requests.list()}

    summary = {view.request["metadata"]["name"]: (view.status, view.last_event.get("reason")) for view in views.values()}
    assert outcomes.get(benign) == "FINISHED", summary
    records = LocalStore(str(results)).read_all().documents
    finishing = {submitted[name] for name in names if name in HONEST_TIMING or name in FLAGGED}
    assert records and benign in {r["explainer"]["submission_id"] for r in records}
    from gecobench.flags import ranked_apart

    assert not [r["flags"] for r in records if r["explainer"]["submission_id"] == benign and ranked_apart(r)]
    assert {r["explainer"]["submission_id"] for r in records} <= {benign} | finishing
    assert sorted(p.name for p in results.rglob("*") if p.is_file() and "forged" in p.name) == []
    for rid, fingerprint in immutable.items():
        assert tree_fingerprint(requests.root / rid / "payload") + (requests.root / rid / "request.json").read_text() == fingerprint
        assert views[rid].integrity_error is None
    assert not (requests.root / ("0" * 32)).exists()
    after = {key: fingerprint_of(path, depth) for key, (path, depth) in watched.items()}
    assert after == before
    assert not Path("/var/tmp/gecobench-hostile-write.txt").exists()
    stored = b"".join(p.read_bytes() for store in (requests.root, results) for p in store.rglob("*") if p.is_file())
    assert token.encode() not in stored and token not in json.dumps(outcomes)
    assert listener.connections == 0
    assert sandbox_processes() == []
    # Nothing of any run is left: no child (zombie or not: bwrap reaped its init and was reaped), no cgroup of
    # this worker process (so no process of a run, the namespace's init included), no control or staging folder.
    assert children_of(os.getpid(), besides=children_before) == []
    assert leftover_run_cgroups() == []
    assert sorted(p.name for p in staging.iterdir()) == []
    by_name = {name: views[rid] for name, rid in submitted.items()}
    for name, view in by_name.items():
        view.records = [r for r in records if r["explainer"]["submission_id"] == submitted[name]]
    return by_name


@pytest.fixture(scope="module")
def model_set(tmp_path_factory, bert_tokenizer) -> list[str]:
    return [str(save_tiny_checkpoint(tmp_path_factory.mktemp("models") / "TINY-binary_all-s0", bert_tokenizer))]


def _check(views: dict) -> None:
    problems = []
    for name, view in views.items():
        if name in HONEST_TIMING:
            problems += _timing_problems(name, view)
            continue
        if name in FLAGGED:
            problems += _flag_problems(name, view)
            continue
        reason = view.last_event.get("reason") or ""
        expected = HOSTILE_REASONS[name]
        expected = expected if isinstance(expected, tuple) else (expected,)
        if view.status != "FAILED" or not any(piece.lower() in reason.lower() for piece in expected):
            problems.append(f"{name}: {view.status} — {reason!r}")
    assert not problems, "\n".join(problems)


def _flag_problems(name: str, view) -> list[str]:
    """A lookup or a forgery must FINISH with its flag on every record (and be ranked apart)."""
    from gecobench.flags import ranked_apart

    if view.status != "FINISHED":
        return [f"{name}: {view.status} — {view.last_event.get('reason')!r}"]
    if not view.records:
        return [f"{name}: no record"]
    flag = FLAGGED[name]
    problems = []
    for record in view.records:
        if not record["flags"].get(flag) or not ranked_apart(record):
            problems.append(f"{name}: not flagged {flag}: flags {record['flags']}, controls {record.get('controls')}, "
                            f"MA {record['metrics']['mass_accuracy'].get('value')}, isolation "
                            f"{ {k: view.last_event['isolation'].get(k) for k in ('mean_mrc', 'controls')} }")
        if flag == "data_not_model" and "controls" not in record:
            problems.append(f"{name}: no control scores in its record")
    return problems


def _timing_problems(name: str, view) -> list[str]:
    """A timing cheat must FINISH, and its record's seconds per sentence must be the worker's own measurement."""
    if view.status != "FINISHED":
        return [f"{name}: {view.status} — {view.last_event.get('reason')!r}"]
    timing = view.last_event["isolation"]["timing"]
    work = HONEST_TIMING[name]
    runs = view.last_event["isolation"]["runs_per_model"]
    # The CPU work it did (per sentence explained, and per run in fit) is in the cgroup's account, whatever its
    # own clock said; the record's seconds per sentence is the outside wall clock per explanation, never less
    # than the CPU time per explanation of a one-threaded run.
    least_cpu = work["per_sentence"] * timing["explanations"] + work["per_run"] * runs
    problems = []
    if timing["cpu_seconds"] is None or timing["cpu_seconds"] < least_cpu:
        problems.append(f"{name}: CPU seconds {timing['cpu_seconds']} below the {least_cpu} s of work it did")
    if timing["self_reported_main_seconds"] >= least_cpu:
        problems.append(f"{name}: its own clock was not fooled ({timing}); the case tests nothing")
    for record in view.records:
        recorded = record["runtime"]["seconds_per_sentence"]
        if recorded is None or abs(recorded - timing["wall_seconds_per_explanation"]) > 1e-3 * max(recorded, 1e-3):
            problems.append(f"{name}: the record's {recorded} s/sentence is not the outside measurement {timing}")
        if recorded is not None and recorded < least_cpu / timing["explanations"]:
            problems.append(f"{name}: {recorded} s/sentence is less than the work it did")
    if not view.records:
        problems.append(f"{name}: no record")
    return problems


@pytest.fixture(scope="module")
def control_dir(tmp_path_factory, geco_dir) -> Path:
    """One hidden control OLA (a test secret; two epochs on 60 source sentences: its ground truth is what matters)."""
    from gecobench.controls import train_control_models

    folder = tmp_path_factory.mktemp("controls")
    train_control_models(folder, "hostile-test-secret", n_controls=1, data_dir=geco_dir, max_train_sentences=60,
                         epochs=2)
    return folder


def test_hostile_files_cover_every_listed_attack():
    on_disk = {p.stem for p in HOSTILE.glob("*.py")}
    assert set(HOSTILE_REASONS) | set(HONEST_TIMING) | set(FLAGGED) <= on_disk
    assert len(HOSTILE_REASONS) >= 30 and set(DEFAULT_RUN) <= set(HOSTILE_REASONS) | set(HONEST_TIMING)


def test_representative_attacks_are_contained_in_one_queue_run(tmp_path, model_set, geco_dir, shared_data):
    _check(run_hostile_queue(DEFAULT_RUN, tmp_path, model_set, geco_dir, shared_data))


@pytest.mark.slow  # 1.5 min; each of its cases but work in fit() has a faster test in the default run
def test_kernel_limits_channels_and_outside_timing_hold_in_one_queue_run(tmp_path, model_set, geco_dir, shared_data):
    # memfd memory, a nested user namespace, the keyring between runs, a result of empty lists, a stopped clock
    # and work hidden in fit(): each FAILED with its reason, or FINISHED with the worker's own timing.
    _check(run_hostile_queue(KERNEL_RUN, tmp_path, model_set, geco_dir, shared_data))


def test_a_lexicon_and_a_forged_constant_are_flagged(tmp_path, model_set, geco_dir, shared_data, control_dir):
    # The hand-written gender lexicon scores high on the real model and near chance on the hidden control: it
    # explains the data, not the model. A constant result forged on descriptor 3 is the same on the real and the
    # re-initialised model (one model per run, opaque ids): model-independent. The benign example is neither.
    # Twelve source sentences a run: enough that some hold one of the control's secret words.
    views = run_hostile_queue(("lexicon_explainer", "forge_constant_result"), tmp_path, model_set, geco_dir,
                              shared_data, control_dir=control_dir, max_groups=12)
    _check(views)


@pytest.mark.slow
def test_learned_lexicon_and_answer_key_are_flagged(tmp_path, model_set, geco_dir, shared_data, control_dir):
    _check(run_hostile_queue(("learned_lexicon", "answer_key"), tmp_path, model_set, geco_dir, shared_data,
                             control_dir=control_dir, max_groups=12))


@pytest.mark.slow
def test_every_hostile_submission_is_contained(tmp_path, model_set, geco_dir, shared_data):
    # GECOBENCH_HOSTILE=name,name runs only those (to re-check a few after a change).
    chosen = [n for n in os.environ.get("GECOBENCH_HOSTILE", "").split(",") if n]
    rest = chosen or [name for name in HOSTILE_REASONS if name not in DEFAULT_RUN + KERNEL_RUN]
    _check(run_hostile_queue(rest, tmp_path, model_set, geco_dir, shared_data))


def test_an_oversized_result_is_refused_unread_and_the_worker_stays_small(tmp_path, model_set, geco_dir):
    # 32 MiB of `[[]],` under the worker's default result cap (128 MiB): parsed at once it had cost the worker
    # 1 GiB. Now it is over what the inputs can need and is refused from its size alone.
    import resource

    requests = RequestStore(tmp_path / "requests")
    benign = submit_file(requests, "code", {**META, "name": "gradient_norm", "version": "1.0.0"}, EXAMPLE,
                         submitter="ada").request_id
    folder = tmp_path / "submitted"
    folder.mkdir()
    hostile_path = folder / "forge_empty_lists_result.py"
    hostile_path.write_text((HOSTILE / "forge_empty_lists_result.py").read_text().replace("__HOST__", "{}"))
    settings = EvaluationSettings(max_groups=1, bootstrap=20, filter_correct=False, properties=False,
                                  data_dir=str(geco_dir))
    config = WorkerConfig(model_paths=model_set, configs=["binary_all"], results_location=str(tmp_path / "results"),
                          data_dir=str(geco_dir), settings=settings, checkpoint_dir=str(tmp_path / "ckpt"),
                          limits=SandboxLimits(memory_bytes=3 << 30, cpu_seconds=60, wall_seconds=120))
    assert config.limits.max_result_bytes >= 128 << 20
    assert process_queue(requests, config, max_requests=1) == {benign: "FINISHED"}
    after_benign = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux: the peak so far
    hostile = submit_file(requests, "code", {**META, "name": "forge_empty_lists_result", "version": "1.0.0"},
                          hostile_path, submitter="mallory").request_id
    assert process_queue(requests, config) == {hostile: "FAILED"}
    reason = requests.get(hostile).last_event["reason"]
    written = re.search(r"malformed result: the result file is (\d+) bytes; the limit is (\d+) bytes", reason)
    assert written and int(written.group(1)) > 32 << 20 > int(written.group(2)), reason
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - after_benign
    assert grown < 100 << 10, f"the worker's peak memory grew by {grown >> 10} MiB over a benign run"
    assert leftover_run_cgroups() == [] and sandbox_processes() == []

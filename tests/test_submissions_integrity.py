"""Store integrity and the sandbox's narrow channel, without starting a sandbox (fast).

Stale leases are recovered (re-queued once, then FAILED "worker died"); malformed or forged events never crash
the worker; one run never holds two variants of a sentence; the result channel is parsed strictly; public
text is redacted; a submission's origin is part of its record identity.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import socket
from collections import Counter
from pathlib import Path

import pytest

from gecobench.records import explainer_score_identity, record_id_for
from submissions import RequestStore, submit_request
from submissions.sandbox import encode_result, parse_result, redact, result_size_bound
from submissions.worker import (
    WorkerConfig,
    lease_is_stale,
    one_variant_per_run,
    process_queue,
    recover_stale_requests,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "submissions" / "examples" / "gradient_norm_explainer.py"
META = {"name": "gradient_norm", "version": "1.0.0", "authors": "Ada", "description": "d", "license": "MIT",
        "contact": "ada@example.org"}


def _submit(store: RequestStore, name: str, track: str = "code"):
    if track == "code":
        return submit_request(store, "code", {**META, "name": name}, "a.py", EXAMPLE.read_bytes() + name.encode() + b"\n")
    row = {"model": "m", "config": "binary_all", "sentence_id": 1, "label": 0, "attributions": [0.1]}
    return submit_request(store, "precomputed", {**META, "name": name}, "a.jsonl", (json.dumps(row) + "\n").encode())


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_request_whose_worker_died_is_requeued_once_then_failed(tmp_path):
    store = RequestStore(tmp_path)
    view = _submit(store, "crashy")
    dead = f"{socket.gethostname()}:{_dead_pid()}"
    far = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=5)).isoformat()
    store.transition(view.request_id, "RUNNING", worker=dead, lease_expires_at=far)

    assert recover_stale_requests(store) == {view.request_id: "PENDING"}
    requeued = store.get(view.request_id)
    assert requeued.status == "PENDING" and requeued.last_event["recovered"] is True
    assert "worker died" in requeued.last_event["reason"]

    store.transition(view.request_id, "RUNNING", worker=dead, lease_expires_at=far)
    assert recover_stale_requests(store) == {view.request_id: "FAILED"}
    failed = store.get(view.request_id)
    assert failed.status == "FAILED" and failed.last_event["reason"].startswith("worker died")
    assert [e["status"] for e in failed.events] == ["PENDING", "RUNNING", "PENDING", "RUNNING", "FAILED"]
    assert recover_stale_requests(store) == {}


def test_a_live_or_unexpired_lease_is_left_alone_and_an_expired_one_is_not():
    now = dt.datetime.now(dt.UTC)
    later = (now + dt.timedelta(minutes=5)).isoformat()
    alive_here = {"worker": f"{socket.gethostname()}:{1}", "lease_expires_at": later}  # PID 1 is always alive
    elsewhere = {"worker": "other-host:123", "lease_expires_at": later}
    assert not lease_is_stale(alive_here, now) and not lease_is_stale(elsewhere, now)
    assert lease_is_stale(elsewhere, now + dt.timedelta(minutes=6))
    assert lease_is_stale({"worker": "other-host:123", "lease_expires_at": "not a time"}, now)


@pytest.mark.parametrize("name, content, problem", [
    ("0001.json", b"{not json", "not readable JSON"),
    ("0001.json", json.dumps({"status": "FINISHED", "at": "t", "sequence": 1}).encode(), "illegal transition PENDING -> FINISHED"),
    ("0001.json", json.dumps({"status": "RUNNING", "at": "t", "sequence": 7}).encode(), "sequence 7 does not match"),
    ("0001.json", json.dumps({"status": "RUNNING", "at": "t", "sequence": 1, "reason": ["x"]}).encode(), "is not of type"),
    ("0005.json", json.dumps({"status": "RUNNING", "at": "t", "sequence": 5}).encode(), "expected 0001.json"),
    ("0001.json", b"[" * 30_000, "not readable JSON"),
    ("0001.json", b" " * (70 << 10), "not a regular file of at most"),
])
def test_forged_or_malformed_events_never_crash_the_worker(tmp_path, name, content, problem):
    store = RequestStore(tmp_path / "requests")
    forged = _submit(store, "forged_victim", track="precomputed")
    innocent = _submit(store, "innocent", track="precomputed")
    (store.root / forged.request_id / "events" / name).write_bytes(content)

    view = store.get(forged.request_id)
    assert view.status == "PENDING" and problem in view.integrity_error
    config = WorkerConfig(model_paths=[], configs=[], results_location=str(tmp_path / "results"))
    outcomes = process_queue(store, config)

    # The forged request is left alone; the innocent one after it runs normally (it covers no model set: FINISHED
    # with no records, since this worker has no models).
    assert outcomes[forged.request_id] == "SKIPPED"
    assert outcomes[innocent.request_id] == "FINISHED"
    assert store.get(innocent.request_id).integrity_error is None


def test_a_forged_request_file_is_no_request(tmp_path):
    store = RequestStore(tmp_path)
    good = _submit(store, "good_one")
    bad = store.root / ("f" * 32)
    (bad / "events").mkdir(parents=True)
    (bad / "request.json").write_text(json.dumps({"request_id": "e" * 32, "record_type": "request"}))
    assert [v.request_id for v in store.list()] == [good.request_id]


def test_one_run_never_holds_two_variants_of_a_sentence():
    groups = [[(sid, label) for label in range(size)] for sid, size in enumerate([2, 2, 3, 1, 2] * 20)]
    runs = one_variant_per_run(groups, random.Random(0))
    assert len(runs) == 3
    for run in runs:
        sentence_ids = [sid for sid, _ in run]
        assert len(sentence_ids) == len(set(sentence_ids))
    assert sorted(row for run in runs for row in run) == sorted(row for group in groups for row in group)
    # The variant a run gets is drawn at random: the first run is not all label 0.
    assert 0 < Counter(label for _, label in runs[0])[0] < len(runs[0])


WORDS = [["a", "b"], ["c"]]


def _result(**change):
    """The result channel's bytes (header line, then one line per kind and input) with ``change`` applied."""
    header = {"explainer": {"name": "x", "version": "1.0.0", "params": {}, "model_independent": False},
              "main_seconds": 0.5}
    scores = {"main": [[0.1, 0.2], [0.3]], "randomised": [[0.2, 0.1], [0.1]]}
    scores.update(change.pop("scores", {}))
    header.update(change)
    return encode_result(scores, [k for k in ("main", "randomised") if k in scores], header)


def test_a_wellformed_result_is_parsed():
    parsed = parse_result(_result(), WORDS, ("main", "randomised"))
    assert parsed["scores"]["main"] == [[0.1, 0.2], [0.3]] and parsed["main_seconds"] == 0.5


@pytest.mark.parametrize("raw, message", [
    (_result(metrics={"mass_accuracy": 1}), "unknown field"),
    (encode_result({"main": [[0.1, 0.2], [0.3]]}, ["main"], {"explainer": {}}), "exactly the kinds"),
    (_result(scores={"main": [[0.1, 0.2], [0.3, 0.4]], "randomised": [[0.2, 0.1], [0.1]]}), "main scores for input 1"),
    (_result(scores={"main": [[0.1, "x"], [0.3]], "randomised": [[0.2, 0.1], [0.1]]}), "main scores for input 0"),
    (_result(scores={"main": [[0.1, True], [0.3]], "randomised": [[0.2, 0.1], [0.1]]}), "main scores for input 0"),
    (_result().replace(b"0.3", b"NaN"), "main scores for input 1"),
    (_result(main_seconds=-1), "main_seconds"),
    (_result(explainer={"name": "x", "version": "1", "params": {"k": "v" * 5000}}), "params"),
    (b"[" * 200_000, "at most"),  # over what two short inputs can need: refused unread
    (b"[" * 60_000, "not valid JSON"),
    (_result() + b"[[]]\n", "score lines, got 5"),
    (_result().replace(b"[0.3]", b"[[0.3]]"), "main scores for input 1"),
    (b"\xff\xfe", "not valid JSON"),
    (b"[]", "must be a JSON object"),
])
def test_a_malformed_result_is_refused_with_the_problem(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_result(raw, WORDS, ("main", "randomised"))


def test_the_result_bound_follows_from_the_inputs_and_each_row_is_checked_before_parsing():
    kinds = ("main", "randomised")
    bound = result_size_bound(WORDS, kinds)
    longer = result_size_bound(WORDS + [["d"] * 100], kinds)
    assert bound < longer < bound + 2 * 100 * 32  # a word costs a bounded number of bytes per kind
    # A result one byte over the bound is refused before parsing, whatever it holds.
    with pytest.raises(ValueError, match=f"at most {bound} bytes"):
        parse_result(b" " * (bound + 1), WORDS, kinds)
    # One row far longer than its two words can need is refused before it is parsed.
    raw = _result().replace(b"[0.1, 0.2]", b"[" + b"0.0, " * 200 + b"0.0]", 1)
    with pytest.raises(ValueError, match="main scores for input 0 are .* bytes; at most"):
        parse_result(raw, WORDS, kinds)
    # The longest number repr fits the per-word allowance.
    tight = encode_result({"main": [[-2.2250738585072014e-308, -1.7976931348623157e+308], [5e-324]],
                           "randomised": [[0.0, 0.0], [0.0]]}, kinds, {"explainer": {}})
    assert parse_result(tight, WORDS, kinds)["scores"]["main"][1] == [5e-324]


def test_token_shaped_strings_and_secret_values_are_redacted():
    environ = {"HF_TOKEN": "s3cr3t-value-123", "HOME": "/root"}
    text = "boom hf_abcdefghijklmnopqrstuv and ghp_abcdefghijklmnop, env s3cr3t-value-123 at /root"
    cleaned = redact(text, environ)
    assert "hf_abc" not in cleaned and "ghp_abc" not in cleaned and "s3cr3t" not in cleaned
    assert "/root" in cleaned and cleaned.count("[redacted]") == 3


def _record(**explainer):
    return {"explainer": {"name": "integrated_gradients", "version": "1.0.0", "params": {}, **explainer},
            "model": {"regime": "OLA", "base_model": "b", "seed": 0}, "dataset": {"config": "binary_all",
            "split": "test", "fingerprint": "f"}, "protocol": {}}


def test_a_submission_cannot_take_over_a_builtin_record_or_another_submission():
    builtin = record_id_for(explainer_score_identity(_record()))
    assert builtin == record_id_for(explainer_score_identity(_record(source="builtin")))  # built-ins unchanged
    alike = record_id_for(explainer_score_identity(_record(source="submission", submission_id="a" * 32,
                                                           submission_sha256="1" * 64)))
    other_submitter = record_id_for(explainer_score_identity(_record(source="submission", submission_id="b" * 32,
                                                                     submission_sha256="1" * 64)))
    other_code = record_id_for(explainer_score_identity(_record(source="submission", submission_id="a" * 32,
                                                                submission_sha256="2" * 64)))
    assert len({builtin, alike, other_submitter, other_code}) == 4


def test_without_a_sandbox_code_requests_stay_pending_unless_unsafe_is_asked_for(tmp_path, monkeypatch):
    from submissions import worker

    monkeypatch.setattr(worker, "sandbox_status", lambda: (False, "bubblewrap (bwrap) is not installed"))
    store = RequestStore(tmp_path / "requests")
    code = _submit(store, "needs_sandbox")
    config = WorkerConfig(model_paths=[], configs=[], results_location=str(tmp_path / "results"))
    assert process_queue(store, config) == {code.request_id: "SKIPPED"}
    assert store.get(code.request_id).status == "PENDING"
    # With --unsafe-no-sandbox the worker runs it (no model set here: nothing to run, so it FINISHES at once).
    config.unsafe_no_sandbox = True
    assert process_queue(store, config) == {code.request_id: "FINISHED"}


def test_a_missing_bwrap_is_reported_with_how_to_install_it(monkeypatch):
    from submissions import sandbox

    monkeypatch.delenv("GECOBENCH_BWRAP", raising=False)
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    available, message = sandbox.sandbox_status.__wrapped__()
    assert not available and "apt-get install bubblewrap" in message and "--unsafe-no-sandbox" in message


def test_the_worker_drops_its_tokens_and_the_sandbox_gets_a_fixed_environment():
    from submissions.sandbox import drop_secrets_from_environment, sandbox_environment

    environ = {"HF_TOKEN": "x", "HUGGING_FACE_HUB_TOKEN": "y", "AWS_SECRET_ACCESS_KEY": "z", "PATH": "/bin",
               "TOKENIZERS_PARALLELISM": "false"}
    assert drop_secrets_from_environment(environ) == ["AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"]
    assert environ == {"PATH": "/bin", "TOKENIZERS_PARALLELISM": "false"}
    assert not any(is_secret for is_secret in map(_secret_name, sandbox_environment()))


def _secret_name(name: str) -> bool:
    from submissions.sandbox import is_secret_name

    return is_secret_name(name)


def test_the_sandbox_mounts_nothing_of_the_checkout_data_or_stores(tmp_path):
    from submissions.sandbox import SandboxLimits, bwrap_command

    command = bwrap_command(3_000_123, tmp_path / "input", {"main": tmp_path / "model"}, SandboxLimits(), ["python"])
    import sys

    # The Python environment may live inside the checkout (make setup puts .venv there): it is bound read-only.
    python = {sys.prefix, str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())}
    sources = [command[i + 1] for i, arg in enumerate(command) if arg in ("--bind", "--ro-bind")]
    sources = [s for s in sources if s not in python]
    repo_root = str(Path(__file__).resolve().parent.parent)
    assert "--bind" not in command  # nothing of the host is writable
    assert not any(s == repo_root or s.startswith(repo_root + "/") or "shared" in s or s == str(Path.home())
                   for s in sources), sources
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in command
    assert "--reuid=3000123" in command and "--bounding-set=-all" in command and "--no-new-privs" in command

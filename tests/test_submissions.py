"""Submitting: metadata and file checks, duplicates, resubmission, atomic status changes, concurrency."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from submissions import RequestStore, SubmissionError, TransitionError, submit_request
from submissions.validation import validate_precomputed

EXAMPLE = Path(__file__).resolve().parent.parent / "submissions" / "examples" / "gradient_norm_explainer.py"
META = {"name": "gradient_norm", "version": "1.0.0", "authors": "Ada", "description": "d", "license": "MIT",
        "contact": "ada@example.org"}


def test_submit_files_a_pending_request_with_payload(tmp_path):
    store = RequestStore(tmp_path)
    view = submit_request(store, "code", META, EXAMPLE.name, EXAMPLE.read_bytes(), submitter="ada")
    assert view.status == "PENDING"
    assert store.payload_path(view.request_id).read_bytes() == EXAMPLE.read_bytes()
    assert [v.request_id for v in store.list("PENDING")] == [view.request_id]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"name": ""}, "missing required field"),
        ({"contact": None}, "missing required field"),
        ({"name": "../../etc/passwd"}, "'name'"),
        ({"name": "Upper Case"}, "'name'"),
        ({"version": "latest"}, "'version'"),
        ({"description": "x" * 6000}, "limit is 5000"),
        ({"homepage": "x"}, "unknown metadata field"),
    ],
)
def test_bad_metadata_is_refused_with_a_clear_message(tmp_path, change, message):
    with pytest.raises(SubmissionError, match=message):
        submit_request(RequestStore(tmp_path), "code", {**META, **change}, "x.py", EXAMPLE.read_bytes())
    assert not list(RequestStore(tmp_path).iter_requests())


@pytest.mark.parametrize("file_name", ["../evil.py", "/abs/evil.py", "sub/evil.py", "..", "evil.sh", ".hidden.py"])
def test_unsafe_or_wrong_file_names_are_refused(tmp_path, file_name):
    with pytest.raises(SubmissionError, match="file"):
        submit_request(RequestStore(tmp_path), "code", META, file_name, EXAMPLE.read_bytes())


def test_oversize_unparsable_and_explainerless_code_is_refused(tmp_path):
    store = RequestStore(tmp_path)
    with pytest.raises(SubmissionError, match="limit"):
        submit_request(store, "code", META, "big.py", b"#" * (2 << 20))
    with pytest.raises(SubmissionError, match="does not parse"):
        submit_request(store, "code", META, "bad.py", b"def (:\n")
    with pytest.raises(SubmissionError, match="defines no explainer"):
        submit_request(store, "code", META, "none.py", b"x = 1\n")


def test_precomputed_rows_are_checked_line_by_line(tmp_path):
    good = json.dumps({"model": "m", "config": "binary_all", "sentence_id": 1, "label": 0, "attributions": [0.1, 0.2]})
    assert validate_precomputed((good + "\n").encode(), "a.jsonl") == 1
    nan_row = good.replace("0.2", "NaN")
    with pytest.raises(SubmissionError, match="line 2: 'attributions' holds NaN"):
        validate_precomputed((good + "\n" + nan_row + "\n").encode(), "a.jsonl")
    with pytest.raises(SubmissionError, match="line 1: missing field"):
        validate_precomputed(b'{"model": "m"}\n', "a.jsonl")
    with pytest.raises(SubmissionError, match="line 1: not valid JSON"):
        validate_precomputed(b"{oops\n", "a.jsonl")


def test_duplicates_are_refused_and_failed_requests_resubmittable_by_their_submitter(tmp_path):
    store = RequestStore(tmp_path)
    first = submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes(), submitter="ada")
    with pytest.raises(SubmissionError, match="duplicate"):
        submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes(), submitter="ada")
    store.transition(first.request_id, "RUNNING")
    store.transition(first.request_id, "FAILED", reason="boom")
    with pytest.raises(SubmissionError, match="only its submitter"):
        submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes(), submitter="mallory")
    again = submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes(), submitter="ada")
    assert again.request["resubmission_of"] == first.request_id and again.status == "PENDING"
    assert store.get(first.request_id).status == "FAILED"  # history kept


def test_status_machine_and_exclusive_claims(tmp_path):
    store = RequestStore(tmp_path)
    view = submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes())
    with pytest.raises(TransitionError, match="PENDING to FINISHED"):
        store.transition(view.request_id, "FINISHED")

    def claim(_):
        try:
            store.transition(view.request_id, "RUNNING", worker="w")
            return "claimed"
        except TransitionError:
            return "lost"

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(claim, range(8)))
    assert outcomes.count("claimed") == 1
    final = store.transition(view.request_id, "FAILED", reason="r", log_excerpt="tail")
    assert final["reason"] == "r"
    history = [e["status"] for e in store.get(view.request_id).events]
    assert history == ["PENDING", "RUNNING", "FAILED"]


def test_fifty_concurrent_submissions_make_exactly_fifty_requests(tmp_path):
    store = RequestStore(tmp_path)

    def submit(i):
        meta = {**META, "name": f"method_{i:02d}"}
        return submit_request(store, "code", meta, "a.py", EXAMPLE.read_bytes() + f"# {i}\n".encode()).request_id

    with ThreadPoolExecutor(16) as pool:
        ids = list(pool.map(submit, range(50)))
    assert len(set(ids)) == 50
    stored = list(store.iter_requests())
    assert len(stored) == 50 and {v.request_id for v in stored} == set(ids)
    assert {v.status for v in stored} == {"PENDING"}


def test_concurrent_identical_submissions_are_accepted_once(tmp_path):
    store = RequestStore(tmp_path)

    def submit(_):
        try:
            submit_request(store, "code", META, "a.py", EXAMPLE.read_bytes())
            return "ok"
        except SubmissionError:
            return "refused"

    with ThreadPoolExecutor(10) as pool:
        outcomes = list(pool.map(submit, range(10)))
    assert outcomes.count("ok") == 1 and len(list(store.iter_requests())) == 1


# ---- bounded parsing at submit time: a clear error naming the problem, never a traceback

ROW = {"model": "m", "config": "binary_all", "sentence_id": 1, "label": 0, "attributions": [0.1, 0.2]}


def _jsonl(*rows) -> bytes:
    return ("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n").encode()


@pytest.mark.parametrize("source, message", [
    (b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\nclass A:\n    name='a'\n    def explain(self): pass\n",
     "nested|parse"),
    (b"x = " + b"-" * 200_000 + b"1\nclass A:\n    name='a'\n    def explain(self): pass\n", "nested"),
    (b"x = [" + b"1," * 300_000 + b"]\nclass A:\n    name='a'\n    def explain(self): pass\n", "syntax nodes"),
])
def test_code_bombs_get_a_clear_error(tmp_path, source, message):
    with pytest.raises(SubmissionError, match=message):
        submit_request(RequestStore(tmp_path), "code", META, "bomb.py", source)


@pytest.mark.parametrize("payload, message", [
    (_jsonl('{"a": ' * 50 + "1" + "}" * 50), "line 1: JSON nested 50 levels deep"),
    (_jsonl(ROW, "[" * 100_000 + "]" * 100_000), "line 2: JSON nested 100000 levels deep"),
    (_jsonl({**ROW, "sentence_id": 10**30}), "line 1: an integer of 31 digits"),
    (_jsonl(json.dumps(ROW).replace('"label": 0', '"label": ' + "9" * 5000)), "line 1: an integer of 5000 digits"),
    (_jsonl({**ROW, "sentence_id": 2.5}), "line 1: 'sentence_id' must be an integer"),
    (_jsonl({**ROW, "label": True}), "line 1: 'label' must be an integer, got a boolean"),
    (_jsonl({**ROW, "attributions": [0.1, "0.2"]}), "line 1: 'attributions' must hold numbers only"),
    (_jsonl(json.dumps(ROW).replace("0.2", "Infinity")), "line 1: 'attributions' holds NaN or infinite"),
    (_jsonl(ROW, {**ROW, "attributions": [0.3, 0.4]}), "lines 1 and 2: conflicting attributions .* sentence_id 1, label 0"),
    (_jsonl({**ROW, "model": ["m"]}), "line 1: 'model' must be non-empty text"),
    ("x" * (2 << 20) + "\n", "line 1: 2097152 characters"),
])
def test_malformed_precomputed_files_get_a_clear_error(payload, message):
    payload = payload.encode() if isinstance(payload, str) else payload
    with pytest.raises(SubmissionError, match=message):
        validate_precomputed(payload, "a.jsonl")


def test_exact_repeats_and_integral_float_ids_are_accepted():
    assert validate_precomputed(_jsonl(ROW, ROW, {**ROW, "sentence_id": 2.0}), "a.jsonl") == 2


@pytest.mark.parametrize("version", ["1.0", "1", "01.0.0", "1.0.0-", "１.0.0", "1.0.0\n2", "1.0.0 beta", "v1.0.0",
                                     "1.٠.0"])
def test_versions_must_be_ascii_semver(tmp_path, version):
    with pytest.raises(SubmissionError, match="'version'"):
        submit_request(RequestStore(tmp_path), "code", {**META, "version": version}, "a.py", EXAMPLE.read_bytes())


@pytest.mark.parametrize("version", ["0.1.0", "10.20.30", "1.0.0-rc.1", "1.0.0+build.5"])
def test_semver_versions_are_accepted(tmp_path, version):
    assert submit_request(RequestStore(tmp_path), "code", {**META, "version": version}, "a.py",
                          EXAMPLE.read_bytes()).status == "PENDING"


@pytest.mark.parametrize("submitter, message", [
    ("a" * 65, "limit is 64"), ("ada\x1b[31m", "control characters"), ("ada lovelace", "ASCII letters"),
    ("ädä", "ASCII letters"), ("-ada", "starting with"), (42, "must be text"),
])
def test_submitter_names_are_validated(tmp_path, submitter, message):
    with pytest.raises(SubmissionError, match=message):
        submit_request(RequestStore(tmp_path), "code", META, "a.py", EXAMPLE.read_bytes(), submitter=submitter)


def test_the_cli_reports_a_bad_file_without_a_traceback(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("submit_cli", Path(__file__).resolve().parent.parent / "scripts" / "submit.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    bomb = tmp_path / "bomb.py"
    bomb.write_bytes(b"x = " + b"-" * 200_000 + b"1\n")
    code = cli.main(["--requests", str(tmp_path / "requests"), "code", str(bomb), "--name", "bomb", "--version", "1.0.0",
                     "--authors", "a", "--description", "d", "--license", "MIT", "--contact", "c"])
    captured = capsys.readouterr()
    assert code == 2 and "submission refused: bomb.py" in captured.err and "Traceback" not in captured.err

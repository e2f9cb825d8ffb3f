"""The results store refuses bad records on write and skips them, with a visible warning, on read; a live Space
keeps showing every valid record whatever else lands in its store."""

from __future__ import annotations

import copy
import json
import random
import socket
from pathlib import Path

import pytest
from _sample_records import make_bias_record, make_explainer_record

from gecobench.records import (
    MAX_RECORD_BYTES,
    RecordValidationError,
    expected_record_id,
    validate_record,
    validate_stored_record,
)
from gecobench.store import LocalStore


def _valid_records() -> list[dict]:
    rng = random.Random(11)
    records = [
        make_explainer_record("integrated_gradients", "full_finetune", "binary_all", rng=rng),
        make_explainer_record("saliency", "full_finetune", "binary_all", rng=rng),
        make_explainer_record("saliency", "from_scratch", "nonbinary_subject", rng=rng),
        make_explainer_record("uniform_random", "full_finetune", "binary_all", is_baseline=True,
                              model_independent=True, rng=rng),
        make_bias_record("model/a", rng=rng),
    ]
    return records


def _with_ma(record: dict, value) -> dict:
    changed = copy.deepcopy(record)
    changed["metrics"]["mass_accuracy"]["value"] = value
    return changed


def _reidentified(record: dict) -> dict:
    record["record_id"] = expected_record_id(record)
    return record


def _bad_documents(valid: list[dict]) -> dict[str, bytes | dict]:
    """File name -> content (bytes written as they are; dicts as JSON) of every malformed kind the store refuses."""
    explainer, bias = valid[0], valid[-1]
    new_id = copy.deepcopy(explainer)
    new_id["record_id"] = "f" * 32  # the same unit under a new id: would be counted twice
    edited_identity = copy.deepcopy(explainer)
    edited_identity["explainer"]["params"] = {"n_steps": 4}  # identity changed, id kept
    oops = copy.deepcopy(bias)
    oops["schemes"]["supersenses_top10"]["bpi"] = "oops"  # schema-valid: the schema does not type the block
    cell_oops = copy.deepcopy(bias)
    first_category = next(iter(cell_oops["schemes"]["supersenses_top10"]["bpi"]))
    cell_oops["schemes"]["supersenses_top10"]["bpi"][first_category]["male"] = "oops"
    oversized = copy.deepcopy(explainer)
    oversized["protocol"] = {**oversized["protocol"], "note": "x" * (MAX_RECORD_BYTES + 10)}
    deep = copy.deepcopy(explainer)
    nested: dict = {}
    cursor = nested
    for _ in range(100):  # valid JSON, under orjson's own limit, schema-valid (protocol is free-form)
        cursor["d"] = {}
        cursor = cursor["d"]
    deep["protocol"] = {**deep["protocol"], "nested": nested}
    ma_text = json.dumps(explainer)
    return {
        "ma_above_one.json": _with_ma(explainer, 1.5),
        "ma_negative.json": _with_ma(explainer, -0.3),
        "ma_1e308.json": _with_ma(explainer, 1e308),
        "ma_nan.json": ma_text.replace('"value": ' + json.dumps(explainer["metrics"]["mass_accuracy"]["value"]),
                                       '"value": NaN', 1).encode(),
        "ma_1e999.json": ma_text.replace('"value": ' + json.dumps(explainer["metrics"]["mass_accuracy"]["value"]),
                                         '"value": 1e999', 1).encode(),
        "ci_above_one.json": {**copy.deepcopy(explainer),
                              "metrics": {**explainer["metrics"],
                                          "mass_accuracy": {**explainer["metrics"]["mass_accuracy"], "ci_high": 1.2}}},
        f"{new_id['record_id']}.json": new_id,
        "edited_identity.json": edited_identity,
        "exact_copy.json": json.dumps(explainer).encode(),  # the same record under a second file name
        "bpi_oops.json": oops,
        "bpi_cell_oops.json": cell_oops,
        "oversized.json": _reidentified(oversized),
        "deep_protocol.json": _reidentified(deep),
        "brackets.json": b"[" * 200_000,  # 200 KB of nested brackets
        "braces.json": b'{"a":' * 50_000,
        "bad_utf8.json": b'{"record_type": "explainer_score", "x": "\xff\xfe"}',
        "array.json": b"[]",
        "number.json": b"42",
        "empty.json": b"",
        "truncated.json": ma_text[: len(ma_text) // 2].encode(),
    }


def _drop(store_root: Path, name: str, content: bytes | dict) -> Path:
    folder = store_root / ("model_bias" if name.startswith("bpi") else "explainer_score")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


@pytest.fixture
def valid_store(tmp_path) -> LocalStore:
    store = LocalStore(tmp_path / "results")
    for record in _valid_records():
        store.append(record)
    return store


def test_sample_records_carry_the_identity_hash():
    for record in _valid_records():
        assert record["record_id"] == expected_record_id(record)
        validate_stored_record(record)


def _as_document(content: bytes | dict) -> dict | None:
    """The object an append could be handed for a malformed file; None for bytes that are no JSON object."""
    if isinstance(content, dict):
        return content
    try:
        parsed = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


_WRITABLE = {name: doc for name, content in _bad_documents(_valid_records()).items()
             if name != "exact_copy.json" and (doc := _as_document(content)) is not None}


@pytest.mark.parametrize("name", sorted(_WRITABLE))
def test_store_refuses_to_write_each_malformed_record(tmp_path, name):
    content = copy.deepcopy(_WRITABLE[name])
    store = LocalStore(tmp_path / "results")
    with pytest.raises((RecordValidationError, ValueError)):
        store.append(content)
    assert not list((tmp_path / "results").rglob("*.json"))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r["metrics"]["mass_accuracy"].update(value=1.5), r"metrics/mass_accuracy/value: 1.5 is greater than the maximum of 1"),
        (lambda r: r["metrics"]["mass_accuracy"].update(value=-0.3), r"metrics/mass_accuracy/value: -0.3 is less than the minimum of 0"),
        (lambda r: r["metrics"]["mass_accuracy"].update(value=1e308), r"metrics/mass_accuracy/value: 1e\+308 is greater than the maximum"),
        (lambda r: r["metrics"]["mass_accuracy"].update(value=float("inf")), r"non-finite"),
        (lambda r: r["metrics"]["mass_accuracy"].update(ci_low=-0.5), r"metrics/mass_accuracy/ci_low"),
        (lambda r: r["metrics"].update(sparsity={"value": 2.0}), r"metrics/sparsity/value"),
        (lambda r: r["metrics"].update(mass_accuracy_gap={"value": 1.5}), r"metrics/mass_accuracy_gap/value"),
        (lambda r: r["metrics"].update(relative_mass_accuracy={"value": 1e308}), r"relative_mass_accuracy"),
        (lambda r: next(iter(r["groups"].values())).update(ci_high=3.0), r"groups/.*/ci_high"),
    ],
)
def test_validation_names_the_value_outside_its_range(mutate, message):
    record = copy.deepcopy(_valid_records()[0])
    mutate(record)
    with pytest.raises(RecordValidationError, match=message):
        validate_record(record)


@pytest.mark.parametrize("bad, message", [("oops", "is not of type"), (250.0, "greater than the maximum"),
                                          (True, "is not of type")])
def test_bias_values_must_be_numbers_in_range(bad, message):
    record = copy.deepcopy(_valid_records()[-1])
    scheme = record["schemes"]["supersenses_top10"]
    category = next(iter(scheme["bpi"]))
    scheme["bpi"][category]["male"] = bad
    with pytest.raises(RecordValidationError, match=rf"schemes/supersenses_top10/bpi/{category}/male: .*{message}"):
        validate_record(record)
    record = copy.deepcopy(_valid_records()[-1])
    record["schemes"]["supersenses_top10"]["bias"]["bri"][category] = 150.0 if bad != "oops" else bad
    with pytest.raises(RecordValidationError, match=rf"bias/bri/{category}"):
        validate_record(record)


def test_id_must_be_the_identity_hash_and_names_the_expected_one():
    record = copy.deepcopy(_valid_records()[0])
    record["explainer"]["params"] = {"n_steps": 4}
    with pytest.raises(RecordValidationError, match=r"not the hash of the record's identity \(expected [0-9a-f]{32}\)"):
        validate_stored_record(record)
    validate_stored_record(_reidentified(record))


def test_reading_skips_each_malformed_file_with_a_warning_naming_it(valid_store):
    valid = _valid_records()
    bad = _bad_documents(valid)
    for name, content in bad.items():
        _drop(valid_store.root, name, content)
    report = valid_store.read_all()
    assert sorted(d["record_id"] for d in report.documents) == sorted(r["record_id"] for r in valid)
    assert len(report.warnings) == len(bad)
    for name in bad:
        assert sum(name in w for w in report.warnings) == 1, (name, report.warnings)
    by_name = {name: next(w for w in report.warnings if name in w) for name in bad}
    assert "duplicate of" in by_name["exact_copy.json"]
    assert "maximum" in by_name["ma_1e308.json"] and "maximum" in by_name["ma_above_one.json"]
    assert "not the hash" in by_name["edited_identity.json"] and "not the hash" in by_name[f"{'f' * 32}.json"]
    assert f"more than {MAX_RECORD_BYTES} bytes" in by_name["oversized.json"] and "deep" in by_name["brackets.json"]
    assert "deep" in by_name["deep_protocol.json"] and "is not of type" in by_name["bpi_cell_oops.json"]
    assert "schemes/supersenses_top10/bpi: 'oops' is not of type 'object'" in by_name["bpi_oops.json"]


def test_an_oversized_file_is_not_read(valid_store, monkeypatch):
    path = _drop(valid_store.root, "huge.json", b" " * (4 * MAX_RECORD_BYTES))
    read_sizes = []
    real_open = open

    class CountingReader:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def fileno(self):
            return self.handle.fileno()

        def read(self, size=-1):
            data = self.handle.read(size)
            read_sizes.append(len(data))
            return data

    monkeypatch.setattr("builtins.open", lambda p, *a, **k: CountingReader(real_open(p, *a, **k)))
    document, warning = valid_store.read_file(path)
    assert document is None and f"more than {MAX_RECORD_BYTES} bytes" in warning
    assert sum(read_sizes) == 0  # its size alone decides


# ---- the live Space ---------------------------------------------------------------------------------------------


def test_each_malformed_file_leaves_every_valid_record_in_the_space_table(tmp_path):
    """One live Space state (the app's LeaderboardState over its incremental loader): each malformed file is
    dropped into the store, the page refreshes, the table still holds every valid record and the status names
    the file; then the file goes and the next one comes."""
    from leaderboard_space.app import LeaderboardState, status_markdown

    valid = _valid_records()
    store = LocalStore(tmp_path / "results")
    for record in valid:
        store.append(record)
    explainer_ids = sorted(r["record_id"] for r in valid if r["record_type"] == "explainer_score")
    state = LeaderboardState(str(store.root))
    state.refresh()
    assert sorted(state.frame.frame["record_id"]) == explainer_ids
    for name, content in _bad_documents(valid).items():
        path = _drop(store.root, name, content)
        state.refresh()
        assert sorted(state.frame.frame["record_id"]) == explainer_ids, name
        assert {r["record_id"] for r in state.loaded.bias_records} == {valid[-1]["record_id"]}, name
        assert len(state.loaded.warnings) == 1 and name in state.loaded.warnings[0], (name, state.loaded.warnings)
        assert "1 record(s) skipped" in status_markdown(state.loaded, state.frame.warnings)
        path.unlink()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_running_space_refreshes_over_every_malformed_file(tmp_path):
    """The app as it is served: start it on a valid store, drop every malformed file into the store while it
    runs, refresh through the API, and read the table and the status line."""
    from gradio_client import Client

    from leaderboard_space.app import build_app

    valid = _valid_records()
    store = LocalStore(tmp_path / "results")
    for record in valid:
        store.append(record)
    demo = build_app(str(store.root), str(tmp_path / "requests"), show_reference=False)
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        refresh_args = ([], [], [], "", "MA", True, True, None, "bpi", None)
        before = client.predict(*refresh_args, api_name="/refresh")
        table_before = client.predict([], [], [], "", "MA", True, True, api_name="/explainer_table")

        bad = _bad_documents(valid)
        for name, content in bad.items():
            _drop(store.root, name, content)
        after = client.predict(*refresh_args, api_name="/refresh")
        status = after[0]
        assert "5 records (4 explainer_score, 1 model_bias)" in before[0]
        assert "5 records (4 explainer_score, 1 model_bias)" in status
        assert f"{len(bad)} record(s) skipped" in status
        table_after = client.predict([], [], [], "", "MA", True, True, api_name="/explainer_table")
        assert table_after == table_before
        assert "model/a" in after[-1]  # the Spanish heat map still renders the valid model_bias record
    finally:
        demo.close()

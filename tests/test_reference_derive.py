"""The reference's paper filter without weights: prediction files define the shared subset, a unit's stored columns
give its paper-filter records on another machine, equal to a direct filtered evaluation; the files are validated."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tolerances import ulp_tolerance

from gecobench.evaluation.unit_columns import (
    UnitColumnsError,
    columns_document,
    decode,
    encode,
    read_columns,
    write_columns,
)
from gecobench.reference import (
    EvaluationUnit,
    ReferencePlan,
    ZooUnit,
    derive_units,
    plan_report,
    promote_seed,
    read_predictions,
    run_evaluations,
    run_zoo,
    unit_state,
    write_filter_subsets,
)
from gecobench.store import LocalStore

# -- the columns file ------------------------------------------------------------------------------------------


def test_columns_encoding_is_lossless_and_keeps_integers() -> None:
    rng = np.random.default_rng(0)
    as32 = rng.normal(size=7).astype(np.float32).astype(np.float64).tolist()  # attributions: float32 values
    as64 = (rng.normal(size=5) / 3).tolist()  # not float32-exact: kept as float64
    value = {"rows": [3, 4], "scores": {"main": [as32, as64, []], "noisy": None},
             "faithfulness": {"tau": [0.25, None, 1.0 / 3]}, "seconds": {"total": 1.5}}
    packed = encode(value)
    assert "__f32__" in packed["scores"]["main"][0] and "__f64__" in packed["scores"]["main"][1]
    assert packed["rows"] == [3, 4], "lists of integers stay integers"
    back = decode(json.loads(json.dumps(packed)))
    assert back == value  # bit for bit: == on floats
    assert all(type(v) is float for v in back["scores"]["main"][0])


def _split_stub(config: str = "binary_all") -> Any:
    return type("Split", (), {"config": config, "split": "test", "fingerprint": "f" * 64})()


def _entry() -> dict[str, Any]:
    chunk = {"chunk": 0, "groups": [[0, 1]], "rows": [0, 1], "predictions": {0: 1, 1: 0}, "kept": [0, 1],
             "malformed": 0, "explainers": {"saliency-x": {"scores": {"main": [[0.5, 0.25], [1.0, 0.125]]},
                                                           "seconds": {"total": 0.1, "main": 0.1}}},
             "resumed_seconds": 0.0, "resumed_cpu_seconds": 0.0}
    return {"chunks": [chunk], "model": {"info": {}, "path": "p", "checkpoint_sha256": "c", "name": "n",
                                         "function_sha256": "f", "num_labels": 2},
            "reference": None, "reference_reason": "OLA", "n_processes": 1}


def test_columns_file_round_trips_and_refuses_edits_and_other_data(tmp_path: Path) -> None:
    document = columns_document("binary_all", _split_stub(), ["saliency-x"], _entry())
    path = write_columns(tmp_path / "c.json.gz", document)
    read = read_columns(path, _split_stub(), document["sha256"])
    assert read["entry"]["chunks"][0]["predictions"] == {0: 1, 1: 0}
    assert read["entry"]["chunks"][0]["explainers"] == _entry()["chunks"][0]["explainers"]
    with pytest.raises(UnitColumnsError, match="not of this run's nonbinary_all"):
        read_columns(path, _split_stub("nonbinary_all"))
    with pytest.raises(UnitColumnsError, match="marker names"):
        read_columns(path, sha256="0" * 64)
    edited = dict(document, reference_reason="edited")
    write_columns(tmp_path / "e.json.gz", edited)
    with pytest.raises(UnitColumnsError, match="edited or is corrupt"):
        read_columns(tmp_path / "e.json.gz")
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    with pytest.raises(UnitColumnsError, match="not a gzipped JSON"):
        read_columns(tmp_path / "bad.json.gz")


# -- prediction files and the subset --------------------------------------------------------------------------


def _tiny_plan(root: Path, checkpoints: Path, **changes: Any) -> ReferencePlan:
    return dataclasses.replace(ReferencePlan(
        seeds=(0, 1), configs=("binary_all",), regimes=("ZS", "OLA", "C"),
        explainers=("saliency", "input_x_gradient"), max_groups=4, bootstrap=20, properties_groups=16,
        checkpoint_root=checkpoints, store=root / "store", zoo_summary=root / "zoo_summary.json",
        timings=root / "timings.json", schedules={"ZS": ("tiny", {}), "OLA": ("tiny", {}), "C": ("tiny", {})}),
        **changes)


def _write_fake_predictions(plan: ReferencePlan, unit: ZooUnit, split: Any, wrong: set[int]) -> Path:
    """A prediction file as write_predictions writes it, every row correct except the source sentences ``wrong``."""
    from gecobench.evaluation.runner import split_into_chunks
    from gecobench.reference import PREDICTIONS_FORMAT, _write_json

    rows = []
    for chunk in split_into_chunks(split, plan.evaluation_settings(unit.seed)):
        for group in chunk:
            for i in group:
                label = split.rows[i].label
                predicted = 1 - label if split.rows[i].sentence_id in wrong else label
                rows.append({"row": i, "sentence_id": int(split.rows[i].sentence_id), "label": int(label),
                             "predicted": int(predicted), "correct": predicted == label})
    path = plan.predictions_file(unit)
    _write_json(path, {"format": PREDICTIONS_FORMAT, "config": unit.config, "regime": unit.regime,
                       "seed": unit.seed, "checkpoint_sha256": f"sha-{unit.regime}-{unit.seed}", "split": split.split,
                       "dataset_fingerprint": split.fingerprint, "rows": rows})
    return path


def test_subset_comes_from_prediction_files_alone_and_names_them(tmp_path: Path, geco_dir: Path) -> None:
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.filters import FilterSubsetError

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path / "reference", tmp_path / "no-weights-here")
    ids = [split.rows[g[0]].sentence_id for g in split.groups[:4]]
    _write_fake_predictions(plan, ZooUnit("binary_all", "OLA", 0), split, {ids[0]})
    _write_fake_predictions(plan, ZooUnit("binary_all", "C", 0), split, set())
    _write_fake_predictions(plan, ZooUnit("binary_all", "C", 1), split, set())
    with pytest.raises(FileNotFoundError, match="binary_all/OLA/seed1"):
        write_filter_subsets(plan, data_dir=str(geco_dir))
    assert "[waiting]" in "\n".join(plan_report(plan))
    # the zero-shot model's file does not define the subset (gecobench.evaluation.filters)
    _write_fake_predictions(plan, ZooUnit("binary_all", "ZS", 0), split, set(ids))
    _write_fake_predictions(plan, ZooUnit("binary_all", "OLA", 1), split, {ids[2]})
    subset = write_filter_subsets(plan, data_dir=str(geco_dir))["binary_all"]
    assert list(subset.source_sentence_ids) == sorted({ids[1], ids[3]})
    assert sorted(f["path"] for f in subset.prediction_files) == [
        "predictions/binary_all/C-seed0.json", "predictions/binary_all/C-seed1.json",
        "predictions/binary_all/OLA-seed0.json", "predictions/binary_all/OLA-seed1.json"]
    assert {m["checkpoint_sha256"] for m in subset.defined_by} == {"sha-OLA-0", "sha-OLA-1", "sha-C-0", "sha-C-1"}
    assert "[done]" in "\n".join(plan_report(plan))
    assert write_filter_subsets(plan, data_dir=str(geco_dir)) == {"binary_all": subset}  # kept as it is
    # a prediction file that changed (a retrained checkpoint) makes the subset stale: refused, never replaced
    _write_fake_predictions(plan, ZooUnit("binary_all", "OLA", 1), split, set())
    with pytest.raises(FilterSubsetError, match="delete the file"):
        write_filter_subsets(plan, data_dir=str(geco_dir))


def test_prediction_files_are_validated(tmp_path: Path, geco_dir: Path) -> None:
    from gecobench.evaluation.data import load_split

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path, tmp_path / "runs")
    unit = ZooUnit("binary_all", "OLA", 0)
    path = _write_fake_predictions(plan, unit, split, set())
    document = read_predictions(path, split, unit)
    assert len(document["sha256"]) == 64
    with pytest.raises(ValueError, match="not of zoo/binary_all/OLA/seed1"):
        read_predictions(path, split, ZooUnit("binary_all", "OLA", 1))
    original = json.loads(path.read_text())
    for change, message in (({"correct": False}, "says correct=False"), ({"label": 7, "correct": False}, "the split has"),
                            ({"predicted": "1"}, "integer row")):
        broken = dict(original, rows=[{**original["rows"][0], **change}, *original["rows"][1:]])
        path.write_text(json.dumps(broken))
        with pytest.raises(ValueError, match=message):
            read_predictions(path, split)
    path.write_text(json.dumps({**original, "dataset_fingerprint": "0" * 64}))
    with pytest.raises(ValueError, match="not on binary_all/test"):
        read_predictions(path, split)


# -- a unit on one machine, the paper's filter on another ------------------------------------------------------


def _numbers_close(derived: Any, direct: Any, where: str, tolerance: float) -> None:
    if isinstance(direct, dict):
        assert isinstance(derived, dict) and set(derived) == set(direct), where
        for key in direct:
            _numbers_close(derived[key], direct[key], f"{where}.{key}", tolerance)
    elif isinstance(direct, list):
        assert isinstance(derived, list) and len(derived) == len(direct), where
        for i, (a, b) in enumerate(zip(derived, direct)):
            _numbers_close(a, b, f"{where}[{i}]", tolerance)
    elif isinstance(direct, float) and not isinstance(direct, bool):
        assert isinstance(derived, float), where
        assert math.isclose(derived, direct, rel_tol=tolerance, abs_tol=tolerance), (where, derived, direct)
    else:
        assert derived == direct, where


@pytest.mark.slow
def test_a_unit_committed_on_one_machine_gets_its_paper_records_on_another(tmp_path: Path, geco_dir: Path,
                                                                          monkeypatch) -> None:
    """Machine A trains and evaluates seed 0 and leaves only the repository (prediction files, unfiltered records,
    columns); machine B, without A's weights, trains and evaluates seed 1, computes the shared subset from the
    prediction files and derives both seeds' paper-filter records: equal to a direct filtered evaluation of A's
    models on the same subset, and every regime of the config scored on the same sentences."""
    from gecobench.evaluation import modelling, runner

    repository = tmp_path / "reference"
    machine_a = _tiny_plan(repository, tmp_path / "machine-a", seeds=(0,), filter_seeds=(0, 1))
    run_zoo(machine_a, progress=False)
    run_evaluations(machine_a, progress=False)
    assert unit_state(machine_a, EvaluationUnit("binary_all", 0)) == "evaluated"
    assert machine_a.predictions_file(ZooUnit("binary_all", "OLA", 0)).is_file()
    with pytest.raises(FileNotFoundError, match="binary_all/OLA/seed1"):
        write_filter_subsets(machine_a)  # seed 1's prediction file is not there yet

    machine_b = _tiny_plan(repository, tmp_path / "machine-b")
    assert not machine_b.checkpoint(ZooUnit("binary_all", "OLA", 0)).exists()
    run_zoo(dataclasses.replace(machine_b, seeds=(1,)), progress=False)
    run_evaluations(dataclasses.replace(machine_b, seeds=(1,)), progress=False)
    report = "\n".join(plan_report(machine_b))
    assert "no checkpoint here; predictions committed" in report and "to derive the paper's filter" in report

    def no_weights(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("deriving the paper's filter loaded a model")

    monkeypatch.setattr(modelling, "load_model", no_weights)
    assert derive_units(machine_b) == [EvaluationUnit("binary_all", 0), EvaluationUnit("binary_all", 1)]
    monkeypatch.undo()
    subset = write_filter_subsets(machine_b)["binary_all"]
    assert {(m["regime"], m["seed"]) for m in subset.defined_by} == {(r, s) for r in ("OLA", "C") for s in (0, 1)}
    # C's zero-shot reference columns are the zero-shot model's own attributions: stored once, in ZS's file
    from gecobench.evaluation.unit_columns import read_columns

    marker = json.loads(machine_b.unit_marker(EvaluationUnit("binary_all", 0)).read_text())
    c_columns = read_columns(machine_b.staging_dir / marker["columns"]["C"]["path"],
                             zero_shot=read_columns(machine_b.staging_dir / marker["columns"]["ZS"]["path"]))
    assert c_columns["zero_shot_columns_sha256"] == marker["columns"]["ZS"]["sha256"]

    staged = [r for seed in (0, 1) for r in LocalStore(machine_b.staged_store(seed)).read_all().documents]
    paper = [r for r in staged if r["protocol"]["filter"] == "paper"]
    assert len(paper) == len([r for r in staged if r["protocol"]["filter"] == "none"]) == 2 * 3 * 2
    # one sentence set for every regime and seed of the config: the subset's
    assert {r["filter"]["scored_fingerprint"] for r in paper} == {subset.fingerprint}
    assert {r["protocol"]["filter_subset_sha256"] for r in paper} == {subset.fingerprint}

    # the direct filtered evaluation of machine A's seed-0 models on the same subset
    direct_store = tmp_path / "direct"
    runner.run_evaluation(list(machine_a.explainers), machine_a.models_of("binary_all", 0), ["binary_all"],
                          machine_a.evaluation_settings(0), store_location=str(direct_store),
                          checkpoint_dir=tmp_path / "direct-checkpoints", progress=False, filters=("paper",),
                          filter_subsets={"binary_all": subset})
    direct = {r["record_id"]: r for r in LocalStore(direct_store).read_all().documents}
    derived = {r["record_id"]: r for r in paper if r["model"]["seed"] == 0}
    assert set(derived) == set(direct), "same identities: explainer, model, data, protocol and subset"
    # Attributions on a filtered run are batched over the kept rows only, so padding (and float32 summation
    # order) may differ from the unfiltered pass the columns hold: a few float32 ulps at the scale of the values.
    tolerance = ulp_tolerance(np.float32, 1.0)
    for record_id, record in direct.items():
        for part in ("metrics", "groups", "by_gender", "comparisons", "counts", "filter", "protocol", "dataset"):
            _numbers_close(derived[record_id].get(part), record.get(part), f"{record_id}.{part}", tolerance)
        assert derived[record_id]["model"]["checkpoint_sha256"] == record["model"]["checkpoint_sha256"]
    with_reference = [r for r in direct.values() if r["model"]["regime"] == "C"]
    assert with_reference and all(r["model"]["zero_shot_reference"] for r in with_reference)  # RMA is derived too

    for seed in (0, 1):
        promote_seed(machine_b, seed)
    promoted = LocalStore(machine_b.store).read_all()
    assert promoted.warnings == [] and len(promoted.documents) == 2 * 3 * 2 * 2
    assert machine_b.predictions_file(ZooUnit("binary_all", "OLA", 0)).is_file(), "predictions outlive promotion"


def test_a_reference_column_equal_to_the_zero_shot_columns_is_stored_once(tmp_path: Path) -> None:
    zero_shot_entry = _entry()
    zs = columns_document("binary_all", _split_stub(), ["saliency-x"], zero_shot_entry)
    write_columns(tmp_path / "zs.json.gz", zs)
    model = _entry()
    model["chunks"][0]["explainers"]["saliency-x"]["scores"]["reference"] = [[0.5, 0.25], [1.0, 0.125]]
    other = _entry()
    other["chunks"][0]["explainers"]["saliency-x"]["scores"]["reference"] = [[0.5, 0.25], [1.0, 0.5]]  # differs
    shared = columns_document("binary_all", _split_stub(), ["saliency-x"], model, zs)
    kept = columns_document("binary_all", _split_stub(), ["saliency-x"], other, zs)
    assert shared["zero_shot_columns_sha256"] == zs["sha256"] and kept["zero_shot_columns_sha256"] is None
    write_columns(tmp_path / "m.json.gz", shared)
    with pytest.raises(UnitColumnsError, match="not given"):
        read_columns(tmp_path / "m.json.gz")
    read_zs = read_columns(tmp_path / "zs.json.gz")
    back = read_columns(tmp_path / "m.json.gz", zero_shot=read_zs)
    assert back["entry"]["chunks"][0]["explainers"] == model["chunks"][0]["explainers"]
    wrong = dict(read_zs, sha256="0" * 64)
    with pytest.raises(UnitColumnsError, match="given 0000"):
        read_columns(tmp_path / "m.json.gz", zero_shot=wrong)


def test_a_unit_evaluated_on_another_checkpoint_than_the_subset_s_is_refused(tmp_path: Path, geco_dir: Path) -> None:
    from gecobench.evaluation.data import load_split
    from gecobench.reference import _write_json

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path / "reference", tmp_path / "no-weights")
    for regime in ("ZS", "OLA", "C"):
        for seed in (0, 1):
            _write_fake_predictions(plan, ZooUnit("binary_all", regime, seed), split, set())
    unit = EvaluationUnit("binary_all", 0)
    columns = {r: {"path": f"seed-0/columns/binary_all/{r}.json.gz", "sha256": "0" * 64,
                   "checkpoint_sha256": f"sha-{r}-0"} for r in ("ZS", "OLA", "C")}
    columns["C"]["checkpoint_sha256"] = "retrained"
    _write_json(plan.unit_marker(unit), {"config": "binary_all", "seed": 0, "record_ids": [], "filters": ["none"],
                                         "columns": columns, "explainers": list(plan.explainers),
                                         "regimes": list(plan.regimes)})
    assert unit_state(plan, unit) == "evaluated"
    with pytest.raises(ValueError, match="columns of C are of another checkpoint"):
        derive_units(plan, seeds=(0,), data_dir=str(geco_dir))

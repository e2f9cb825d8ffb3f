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


def _write_fake_predictions(plan: ReferencePlan, unit: ZooUnit, split: Any, wrong: set[int], *,
                            legacy: bool = False, checkpoint_sha256: str | None = None) -> Path:
    """A prediction file as write_predictions writes it, every row correct except the source sentences ``wrong``:
    with the plan's schedule and its own fingerprint, or, ``legacy``, as files were written before 1.0 (neither)."""
    from gecobench.evaluation.runner import split_into_chunks
    from gecobench.fingerprinted import fingerprint
    from gecobench.reference import PREDICTIONS_FORMAT, PREDICTIONS_UNHASHED, _write_json, schedule_record

    rows = []
    for chunk in split_into_chunks(split, plan.evaluation_settings(unit.seed)):
        for group in chunk:
            for i in group:
                label = split.rows[i].label
                predicted = 1 - label if split.rows[i].sentence_id in wrong else label
                rows.append({"row": i, "sentence_id": int(split.rows[i].sentence_id), "label": int(label),
                             "predicted": int(predicted), "correct": predicted == label})
    path = plan.predictions_file(unit)
    document = {"format": PREDICTIONS_FORMAT, "config": unit.config, "regime": unit.regime, "seed": unit.seed,
                "checkpoint_sha256": checkpoint_sha256 or f"sha-{unit.regime}-{unit.seed}", "split": split.split,
                "dataset_fingerprint": split.fingerprint, "test_accuracy": 0.75, "rows": rows}
    if not legacy:
        document["schedule"] = schedule_record(plan, unit)
        document["sha256"] = fingerprint(document, PREDICTIONS_UNHASHED)
    _write_json(path, document)
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
    # a file without a recorded fingerprint (written before 1.0): the content checks are all that guard it
    path = _write_fake_predictions(plan, unit, split, set(), legacy=True)
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


def _fake_checkpoint(plan: ReferencePlan, unit: ZooUnit, schedule: dict[str, Any]) -> str:
    """A checkpoint folder of ``unit`` here, trained (its info file says) with ``schedule``; its fingerprint."""
    from gecobench.models.training import INFO_FILE
    from gecobench.provenance import checkpoint_fingerprints

    folder = plan.checkpoint(unit)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "unit": unit.key}))
    (folder / INFO_FILE).write_text(json.dumps({"regime": unit.regime, "schedule": schedule}))
    return checkpoint_fingerprints(folder)[0]


def _defining_files(plan: ReferencePlan, split: Any, **kwargs: Any) -> None:
    for regime in ("OLA", "C"):
        for seed in (0, 1):
            _write_fake_predictions(plan, ZooUnit("binary_all", regime, seed), split, set(), **kwargs)


def test_a_prediction_file_of_another_schedule_than_the_plan_s_is_stale_and_refused(tmp_path: Path,
                                                                                   geco_dir: Path) -> None:
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.filters import FilterSubsetError
    from gecobench.reference import predictions_state, subset_state

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path / "reference", tmp_path / "no-weights-here")
    _defining_files(plan, split)
    unit = ZooUnit("binary_all", "C", 0)
    assert predictions_state(plan, unit) == "current"
    subset = write_filter_subsets(plan, data_dir=str(geco_dir))["binary_all"]
    recorded = json.loads(plan.predictions_file(unit).read_text())["schedule"]
    assert (recorded["preset"], recorded["overrides"]) == plan.schedule_for("C", "binary_all") == ("tiny", {})
    assert recorded["fields"] == plan.planned_schedule("C", "binary_all")

    # the plan gives C on binary_all another schedule: its files are stale, the computed subset is not used
    changed = dataclasses.replace(plan, exceptions={("C", "binary_all"): ("tiny", {"epochs": 3})})
    assert predictions_state(changed, unit) == "stale"
    assert predictions_state(changed, ZooUnit("binary_all", "OLA", 0)) == "current", "other cells are unchanged"
    report = "\n".join(plan_report(changed))
    assert "zoo/binary_all/C/seed0" in report and "[to train; predictions of another checkpoint or schedule]" in report
    assert "C-seed0.json comes from a checkpoint trained with tiny {} (fields epochs=2)" in report
    assert subset_state(changed, "binary_all")[0] == "outdated predictions"
    with pytest.raises(FilterSubsetError) as refused:
        write_filter_subsets(changed, data_dir=str(geco_dir))
    message = str(refused.value)
    assert "C-seed0.json" in message and "C-seed1.json" in message and "OLA-seed0.json" not in message
    assert "tiny {}" in message and "tiny {'epochs': 3}" in message
    # refused before a subset exists too, and the committed subset is left as it was
    (plan.filters_dir / "binary_all.json").unlink()
    with pytest.raises(FilterSubsetError, match="tiny {'epochs': 3}"):
        write_filter_subsets(changed, data_dir=str(geco_dir))
    assert not (plan.filters_dir / "binary_all.json").exists()
    # a preset redefined since (same name and overrides, other fields) is caught by the recorded fields
    path = plan.predictions_file(unit)
    document = json.loads(path.read_text())
    document["schedule"]["fields"]["epochs"] = 5
    _rewrite_with_fingerprint(path, document)
    assert predictions_state(plan, unit) == "stale"
    with pytest.raises(FilterSubsetError, match=r"tiny \{\} \(fields epochs=5\)"):
        write_filter_subsets(plan, data_dir=str(geco_dir))
    # the cell's files written again with the plan's schedule: the same subset as before
    _defining_files(plan, split)
    assert write_filter_subsets(plan, data_dir=str(geco_dir))["binary_all"].fingerprint == subset.fingerprint


def _rewrite_with_fingerprint(path: Path, document: dict[str, Any]) -> None:
    from gecobench.fingerprinted import fingerprint
    from gecobench.reference import PREDICTIONS_UNHASHED

    path.write_text(json.dumps({**document, "sha256": fingerprint(document, PREDICTIONS_UNHASHED)}))


def test_a_prediction_file_without_schedule_counts_only_where_its_checkpoint_shows_it(tmp_path: Path,
                                                                                    geco_dir: Path) -> None:
    """Files written before 1.0 record no schedule: taken to have their checkpoint's where that checkpoint is here
    (stale when it is not the plan's), ``unverified`` and refused elsewhere, and given the schedule by
    record_schedules where the checkpoint shows the plan's — nothing else of them changing but the fingerprint."""
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.filters import FilterSubsetError
    from gecobench.reference import predictions_state, record_schedules, subset_state

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path / "reference", tmp_path / "runs")
    _defining_files(plan, split)
    unit = ZooUnit("binary_all", "C", 0)
    path = _write_fake_predictions(plan, unit, split, set(), legacy=True)
    assert predictions_state(plan, unit) == "unverified"
    report = "\n".join(plan_report(plan))
    assert "predictions of no recorded schedule, checkpoint not here to show it" in report
    assert subset_state(plan, "binary_all")[0] == "outdated predictions"
    # while another seed's file is still to come, the subset waits (and says the file is outdated too)
    plan.predictions_file(ZooUnit("binary_all", "OLA", 1)).unlink()
    state, detail = subset_state(plan, "binary_all")
    assert state == "waiting" and "1 not of the plan's checkpoints" in detail
    _write_fake_predictions(plan, ZooUnit("binary_all", "OLA", 1), split, set())
    with pytest.raises(FilterSubsetError, match="C-seed0.json records no schedule"):
        write_filter_subsets(plan, data_dir=str(geco_dir))

    # its checkpoint here, of the plan's schedule: current
    sha = _fake_checkpoint(plan, unit, plan.planned_schedule("C", "binary_all"))
    path = _write_fake_predictions(plan, unit, split, set(), legacy=True, checkpoint_sha256=sha)
    assert predictions_state(plan, unit) == "current"
    # ... not under a plan that changed the cell's schedule: the checkpoint shows the old one
    changed = dataclasses.replace(plan, exceptions={("C", "binary_all"): ("tiny", {"epochs": 3})})
    assert predictions_state(changed, unit) == "stale"
    with pytest.raises(FilterSubsetError, match="C-seed0.json comes from a checkpoint trained with no preset of the "
                                                "plan \\(fields epochs=2\\)"):
        write_filter_subsets(changed, data_dir=str(geco_dir))
    assert record_schedules(changed) == [], "a file is given only the schedule its checkpoint shows to be the plan's"

    before = read_predictions(path, split, unit)
    assert record_schedules(plan) == [path]
    after = read_predictions(path, split, unit)
    assert after["schedule"] == {"preset": "tiny", "overrides": {}, "fields": plan.planned_schedule("C", "binary_all")}
    for key in ("rows", "test_accuracy", "checkpoint_sha256", "provenance", "dataset_fingerprint"):
        assert after[key] == before[key], key
    from gecobench.fingerprinted import fingerprint
    from gecobench.reference import PREDICTIONS_UNHASHED

    stored = json.loads(path.read_text())
    assert stored["sha256"] == after["sha256"] == fingerprint(stored, PREDICTIONS_UNHASHED) != before["sha256"]
    assert record_schedules(plan) == [], "migrated once"
    # the schedule now travels with the file: current without the checkpoint, and the subset is computed
    import shutil

    shutil.rmtree(plan.checkpoint(unit))
    assert predictions_state(plan, unit) == "current"
    assert write_filter_subsets(plan, data_dir=str(geco_dir))["binary_all"].size > 0


def test_one_reader_refuses_edited_prediction_and_columns_files(tmp_path: Path, geco_dir: Path) -> None:
    from gecobench.evaluation.data import load_split
    from gecobench.fingerprinted import read_fingerprinted

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path, tmp_path / "runs")
    unit = ZooUnit("binary_all", "OLA", 0)
    path = _write_fake_predictions(plan, unit, split, set())
    original = json.loads(path.read_text())
    assert read_predictions(path, split, unit)["sha256"] == original["sha256"]
    # an edit every row check accepts (a prediction flipped with its ``correct``): only the fingerprint sees it
    first = original["rows"][0]
    flipped = {**first, "predicted": 1 - first["predicted"], "correct": not first["correct"]}
    path.write_text(json.dumps({**original, "rows": [flipped, *original["rows"][1:]]}))
    with pytest.raises(ValueError, match="OLA-seed0.json: its payload hashes to .* the file was edited or is corrupt"):
        read_predictions(path, split, unit)
    # the provenance is not content: a file with other provenance reads, with the same fingerprint
    path.write_text(json.dumps({**original, "provenance": {"created_at": "elsewhere"}}))
    assert read_predictions(path, split, unit)["sha256"] == original["sha256"]
    # a file written before 1.0 records no fingerprint: read, its fingerprint computed the same way
    legacy = _write_fake_predictions(plan, ZooUnit("binary_all", "C", 0), split, set(), legacy=True)
    assert "sha256" not in json.loads(legacy.read_text()) and len(read_predictions(legacy)["sha256"]) == 64
    # each caller keeps its own messages and error class
    path.write_text(json.dumps({k: v for k, v in original.items() if k != "rows"}))
    with pytest.raises(ValueError, match=r"OLA-seed0.json: missing field\(s\) \['rows'\]"):
        read_predictions(path)
    path.write_text(json.dumps({**original, "format": "gecobench-unit-columns/1"}))
    with pytest.raises(ValueError, match="not a predictions file"):
        read_predictions(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="cannot read a predictions file"):
        read_predictions(path)
    document = columns_document("binary_all", _split_stub(), ["saliency-x"], _entry())
    columns = write_columns(tmp_path / "c.json.gz", document)
    write_columns(columns, {k: v for k, v in document.items() if k != "sha256"})
    with pytest.raises(UnitColumnsError, match=r"c.json.gz: missing field\(s\) \['sha256'\]"):
        read_columns(columns)
    write_columns(columns, {**document, "format": "gecobench-predictions/1"})
    with pytest.raises(UnitColumnsError, match="not a columns file"):
        read_columns(columns)
    # the reader alone: the same refusal of an edited payload, in the caller's error class
    write_columns(columns, {**document, "config": "nonbinary_all"})
    with pytest.raises(UnitColumnsError, match="edited or is corrupt"):
        read_fingerprinted(columns, file_format=document["format"], required=(), kind="columns file",
                           unhashed=("format",), error=UnitColumnsError, compressed=True)
    read, sha = read_fingerprinted(write_columns(columns, document), file_format=document["format"], required=(),
                                   kind="columns file", unhashed=("format",), compressed=True)
    assert sha == document["sha256"] and read["config"] == "binary_all"


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

    # the runner loads its models through as_loaded_model (a folder: modelling.load_model): neither may run
    monkeypatch.setattr(runner, "as_loaded_model", no_weights)
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


def test_zoo_summary_merges_into_the_committed_rows_and_drops_no_model_trained_elsewhere(tmp_path: Path,
                                                                                           geco_dir: Path) -> None:
    """A machine without the checkpoints (a new session, or one config trained here) rewrites the summary: rows of
    cells outside its plan stay as committed, a cell with a committed prediction file of the plan's checkpoint gets
    its row from that file (keeping the committed row's other facts when it is the same checkpoint)."""
    from gecobench.evaluation.data import load_split
    from gecobench.reference import write_zoo_summary

    split = load_split("binary_all", "test", str(geco_dir))
    plan = _tiny_plan(tmp_path / "reference", tmp_path / "no-weights-here", seeds=(0,))
    elsewhere = {"config": "nonbinary_all", "regime": "C", "seed": 0, "test_accuracy": 0.91,
                 "checkpoint_sha256": "sha-other-config"}
    same_ola = {"config": "binary_all", "regime": "OLA", "seed": 0, "test_accuracy": 0.5,
                "checkpoint_sha256": "sha-OLA-0", "base_model": "tiny-base", "val_accuracy": 0.8}
    other_c = {"config": "binary_all", "regime": "C", "seed": 0, "test_accuracy": 0.4,
               "checkpoint_sha256": "sha-an-older-C", "base_model": "old-base"}
    plan.zoo_summary.parent.mkdir(parents=True, exist_ok=True)
    plan.zoo_summary.write_text(json.dumps([elsewhere, same_ola, other_c]))
    _write_fake_predictions(plan, ZooUnit("binary_all", "OLA", 0), split, set())
    _write_fake_predictions(plan, ZooUnit("binary_all", "C", 0), split, set())

    rows = {(r["config"], r["regime"], r["seed"]): r for r in write_zoo_summary(plan)}
    assert rows[("nonbinary_all", "C", 0)] == elsewhere, "a cell outside the plan keeps its committed row"
    ola, c = rows[("binary_all", "OLA", 0)], rows[("binary_all", "C", 0)]
    assert (ola["test_accuracy"], ola["checkpoint_sha256"]) == (0.75, "sha-OLA-0")  # from the prediction file
    assert (ola["base_model"], ola["val_accuracy"]) == ("tiny-base", 0.8), "same checkpoint: its other facts kept"
    assert (c["checkpoint_sha256"], c["base_model"]) == ("sha-C-0", None), "another checkpoint's facts are not"
    from gecobench.reference import schedule_record

    assert c["schedule"] == schedule_record(plan, ZooUnit("binary_all", "C", 0))["fields"]
    assert ("binary_all", "ZS", 0) not in rows, "no checkpoint, no prediction file: no row is made up"
    assert json.loads(plan.zoo_summary.read_text()) == list(write_zoo_summary(plan)), "rewriting changes nothing"

"""The queue end to end: submit → worker → FINISHED records on the leaderboard, or FAILED with a reason."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from gecobench.evaluation.data import load_split, scorable
from gecobench.evaluation.leaderboard import leaderboard_text
from gecobench.evaluation.runner import EvaluationSettings
from gecobench.store import LocalStore
from submissions import RequestStore, submit_file, submit_request
from submissions.sandbox import SandboxLimits, sandbox_status
from submissions.worker import WorkerConfig, model_id, process_queue
from tests.test_submissions_sandbox import EXAMPLE, HOSTILE, save_tiny_checkpoint


def _load_script(name: str):
    path = Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


submit_cli = _load_script("submit")

META = {"authors": "Ada", "description": "d", "license": "MIT", "contact": "ada@example.org"}
MAX_GROUPS = 3


@pytest.fixture(scope="module")
def model_set(tmp_path_factory, bert_tokenizer) -> list[str]:
    return [str(save_tiny_checkpoint(tmp_path_factory.mktemp("models") / "TINY-binary_all-s0", bert_tokenizer))]


def worker_config(tmp_path: Path, models: list[str], geco_dir: Path) -> WorkerConfig:
    settings = EvaluationSettings(max_groups=MAX_GROUPS, bootstrap=50, filter="none",
                                  data_dir=str(geco_dir))
    return WorkerConfig(model_paths=models, configs=["binary_all"], results_location=str(tmp_path / "results"),
                        data_dir=str(geco_dir), settings=settings, checkpoint_dir=str(tmp_path / "ckpt"),
                        limits=SandboxLimits(memory_bytes=3 << 30, cpu_seconds=120, wall_seconds=180))


@pytest.mark.skipif(not sandbox_status()[0], reason=f"no sandbox here: {sandbox_status()[1]}")
def test_code_submission_finishes_and_a_failing_one_does_not_disturb_it(tmp_path, model_set, geco_dir):
    requests = RequestStore(tmp_path / "requests")
    # The example goes through the command line a new user runs; the hostile one through the Python API.
    cli = ["--requests", str(requests.root), "code", str(EXAMPLE), "--name", "gradient_norm", "--version", "1.0.0",
           "--authors", "Ada", "--description", "d", "--license", "MIT", "--contact", "ada@example.org",
           "--submitter", "ada"]
    assert submit_cli.main(cli) == 0
    (good,) = requests.list()
    assert submit_cli.main(cli) == 2  # the same submission again is refused as a duplicate
    bad = submit_file(requests, "code", {**META, "name": "raises", "version": "1.0.0"}, HOSTILE / "raises.py")
    cheat = submit_file(requests, "code", {**META, "name": "integrated_gradients", "version": "1.0.0"},
                        HOSTILE / "constant_named_like_builtin.py")
    config = worker_config(tmp_path, model_set, geco_dir)

    outcomes = process_queue(requests, config)

    assert outcomes == {good.request_id: "FINISHED", bad.request_id: "FAILED", cheat.request_id: "FINISHED"}
    failed = requests.get(bad.request_id)
    assert [e["status"] for e in failed.events] == ["PENDING", "RUNNING", "FAILED"]
    assert "raised RuntimeError" in failed.last_event["reason"] and failed.last_event["log_excerpt"]
    finished = requests.get(good.request_id).last_event
    assert finished["isolation"]["sandbox"].startswith("bubblewrap")
    # GECO's binary groups hold two gender variants: they go to two separate runs of rows, and each run of rows is
    # explained once per model (the real one, its re-initialised copy) and once for the perturbation kinds, each in
    # a sandbox run of its own.
    assert finished["isolation"]["rows_runs_per_model"] == 2
    assert finished["isolation"]["runs_per_model"] == 2 * 3

    records = {r["explainer"]["submission_id"]: r for r in LocalStore(config.results_location).read_all().documents}
    assert [records[good.request_id]["record_id"]] == finished["result_record_ids"]
    record = records[good.request_id]
    assert record["explainer"]["model_independent"] is False
    assert record["explainer"]["name"] == "gradient_norm" and record["explainer"]["source"] == "submission"
    assert record["explainer"]["submission_id"] == good.request_id
    assert record["explainer"]["submission_sha256"] == good.request["content_sha256"]
    assert record["metrics"]["mass_accuracy"]["value"] is not None
    assert record["metrics"]["model_randomisation_check"]["value"] > 0  # the explainer depends on the model
    assert record["runtime"]["seconds_per_sentence"] > 0
    assert "gradient_norm" in leaderboard_text(LocalStore(config.results_location))

    # The constant explainer declared that it uses the model; its MRC of 0 marks it model-independent anyway, on
    # its own record (a submission, not the built-in it is named after), and on the leaderboard.
    cheat_record = records[cheat.request_id]
    assert cheat_record["metrics"]["model_randomisation_check"]["value"] == pytest.approx(0.0, abs=1e-12)
    assert cheat_record["explainer"]["model_independent"] is True
    assert cheat_record["explainer"]["source"] == "submission"
    assert requests.get(cheat.request_id).last_event["isolation"]["model_independent_by_mrc"] is True
    from leaderboard_space.tables import explainer_summary

    kinds = dict(zip(*explainer_summary(list(records.values()))[["Explainer", "Kind"]].values.T))
    assert "model-independent" in kinds["integrated_gradients [model-independent]"]
    assert "model-independent" not in kinds["gradient_norm"]

    # Nothing is left to do, and a second pass changes nothing.
    assert process_queue(requests, config) == {}
    assert len(LocalStore(config.results_location).read_all().documents) == 2


def _precomputed_rows(model_path: str, geco_dir: Path, drop: int = 0) -> bytes:
    split = load_split("binary_all", "test", geco_dir)
    rows = [split.rows[i] for g in split.groups[:MAX_GROUPS] for i in g if scorable(split.rows[i])]
    lines = [json.dumps({"model": model_id(model_path), "config": "binary_all", "sentence_id": r.sentence_id,
                         "label": r.label, "attributions": [float(g) + 0.001 for g in r.ground_truth]})
             for r in rows[drop:]]
    return ("\n".join(lines) + "\n").encode()


def test_precomputed_attributions_are_scored_as_self_reported(tmp_path, model_set, geco_dir):
    requests = RequestStore(tmp_path / "requests")
    full = submit_request(requests, "precomputed", {**META, "name": "oracle", "version": "1.0.0"}, "oracle.jsonl",
                          _precomputed_rows(model_set[0], geco_dir))
    partial = submit_request(requests, "precomputed", {**META, "name": "partial", "version": "1.0.0"},
                             "partial.jsonl", _precomputed_rows(model_set[0], geco_dir, drop=2))
    config = worker_config(tmp_path, model_set, geco_dir)

    outcomes = process_queue(requests, config)

    assert outcomes[full.request_id] == "FINISHED"
    assert outcomes[partial.request_id] == "FAILED"
    assert "does not cover model" in requests.get(partial.request_id).last_event["reason"]
    (record,) = LocalStore(config.results_location).read_all().documents
    assert record["explainer"]["source"] == "self-reported"
    # Attributions that put (almost) all mass on the ground truth score close to 1.
    assert record["metrics"]["mass_accuracy"]["value"] > 0.95
    assert record["metrics"]["model_randomisation_check"]["value"] is None
    assert "self-reported" in record["metrics"]["model_randomisation_check"]["reason"]
    assert record["runtime"]["seconds_per_sentence"] is None
    # An upload of the (public) ground-truth masks is flagged, marked on the leaderboard and ranked apart.
    from gecobench.flags import ranked_apart

    flags = record["flags"]
    assert flags["self_reported"] and flags["matches_ground_truth"] and ranked_apart(record)
    assert flags["ground_truth_match"]["share"] == 1.0 and flags["ground_truth_match"]["n_scored"] > 0
    from gecobench.evaluation.leaderboard import explainer_rows

    (row,) = explainer_rows([record])
    assert row[3] == "oracle [self-reported] [matches the ground truth]" and row[7] == "flagged"


# ------------------------------------------------------------------ the zero-shot reference of RMA (#33)

def _tiny_zoo(root: Path, tokenizer) -> dict[str, str]:
    """A 'CE' model and its 'ZS' reference of one base, side by side (the worker finds the ZS next to the CE)."""
    from tests.conftest import write_tiny_zoo

    return write_tiny_zoo(root, tokenizer)


def _published_bundle(folder: Path, zero_shot: str, geco_dir: Path, base_model: str = "tiny-bert",
                      fingerprint: str | None = None) -> Path:
    """A published reference bundle naming ``zero_shot`` (its fingerprints, as the reference run exports them) as
    binary_all's zero-shot model of ``base_model``, made on the test split of ``geco_dir`` (or on data of
    ``fingerprint``); it holds no attributions (the worker never uses them)."""
    from gecobench.evaluation.checkpoints import reference_unit_name
    from gecobench.evaluation.published_reference import (
        BUNDLE_FORMAT,
        BUNDLE_FORMAT_VERSION,
        write_bundle,
    )
    from gecobench.provenance import checkpoint_fingerprints

    checkpoint_sha256, function_sha256 = checkpoint_fingerprints(zero_shot)
    fingerprint = fingerprint or load_split("binary_all", "test", geco_dir).fingerprint
    protocol = {"seed": 0}
    return write_bundle({
        "format": BUNDLE_FORMAT, "format_version": BUNDLE_FORMAT_VERSION,
        "unit": reference_unit_name(function_sha256, fingerprint, protocol),
        "reference": {"name": "binary_all/ZS/seed0", "base_model": base_model, "seed": 0,
                      "function_sha256": function_sha256, "checkpoint_sha256": checkpoint_sha256},
        "dataset": {"config": "binary_all", "split": "test", "fingerprint": fingerprint},
        "attribution_protocol": protocol, "provenance": {}, "explainers": {}}, folder)


def _no_sandbox_config(tmp_path: Path, models: list[str], geco_dir: Path, **zero_shot) -> WorkerConfig:
    # The reference is resolved before any sandbox run, so these failures need no sandbox.
    config = worker_config(tmp_path, models, geco_dir)
    config.unsafe_no_sandbox = True
    for name, value in zero_shot.items():
        setattr(config, name, value)
    return config


@pytest.mark.skipif(not sandbox_status()[0], reason=f"no sandbox here: {sandbox_status()[1]}")
def test_code_submission_rma_compares_with_its_own_run_on_the_published_zero_shot_model(
        tmp_path, geco_dir, bert_tokenizer):
    from gecobench.provenance import checkpoint_fingerprints
    from tests.conftest import make_tiny_bert_classifier

    zoo = _tiny_zoo(tmp_path / "zoo", bert_tokenizer)
    # The published ZS model is another checkpoint than the one next to the CE model (which the runner alone
    # would have taken): the worker is pointed at it, and the record must name the one the submission ran on.
    published_zs = _tiny_zoo(tmp_path / "published_zoo", bert_tokenizer)["ZS"]
    make_tiny_bert_classifier(seed=7).save_pretrained(published_zs)
    bundle = _published_bundle(tmp_path / "published", published_zs, geco_dir)
    requests = RequestStore(tmp_path / "requests")
    good = submit_file(requests, "code", {**META, "name": "gradient_norm", "version": "1.0.0"}, EXAMPLE)
    config = worker_config(tmp_path, [zoo["CE"]], geco_dir)
    config.settings = EvaluationSettings(max_groups=MAX_GROUPS, bootstrap=50, filter="none", properties=False,
                                         data_dir=str(geco_dir))
    config.published_reference, config.zero_shot = str(bundle), published_zs

    assert process_queue(requests, config) == {good.request_id: "FINISHED"}

    finished = requests.get(good.request_id).last_event
    # one run per (run of rows, model): the CE model, its re-initialised copy and the ZS reference
    assert finished["isolation"]["runs_per_model"] == 2 * 3
    (record,) = LocalStore(config.results_location).read_all().documents
    zs_sha256, _ = checkpoint_fingerprints(published_zs)
    assert zs_sha256 != checkpoint_fingerprints(zoo["ZS"])[0]
    assert record["model"]["zero_shot_reference_sha256"] == zs_sha256
    assert record["protocol"]["rma_reference_sha256"] == zs_sha256
    # MA_ZS is the submission's own explainer on the ZS model, not a published (built-in) attribution
    assert record["model"]["zero_shot_reference_source"] == "submission"
    rma = record["metrics"]["relative_mass_accuracy"]
    assert rma["value"] is not None and rma["value"] == rma["value"]  # computed, finite (not NaN)


def test_a_zero_shot_checkpoint_that_is_not_the_published_one_fails_the_request(tmp_path, geco_dir, bert_tokenizer):
    zoo = _tiny_zoo(tmp_path / "zoo", bert_tokenizer)
    other = _tiny_zoo(tmp_path / "other", bert_tokenizer)
    # another ZS checkpoint of the same base, with other weights: what the published reference names
    from tests.conftest import make_tiny_bert_classifier

    make_tiny_bert_classifier(seed=7).save_pretrained(other["ZS"])
    bundle = _published_bundle(tmp_path / "published", other["ZS"], geco_dir)
    requests = RequestStore(tmp_path / "requests")
    code = submit_file(requests, "code", {**META, "name": "gradient_norm", "version": "1.0.0"}, EXAMPLE)
    upload = submit_request(requests, "precomputed", {**META, "name": "oracle", "version": "1.0.0"}, "oracle.jsonl",
                            _precomputed_rows(zoo["CE"], geco_dir))
    config = _no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir, published_reference=str(bundle))

    assert process_queue(requests, config) == {code.request_id: "FAILED", upload.request_id: "FAILED"}
    for request in (code, upload):
        reason = requests.get(request.request_id).last_event["reason"]
        assert "does not match published zero-shot reference" in reason and "binary_all/ZS/seed0" in reason
    assert LocalStore(config.results_location).read_all().documents == []

    # the worker's command line refuses to start on it, before claiming anything
    from submissions.cli import queue

    argv = ["--requests", str(tmp_path / "empty"), "--results", str(tmp_path / "r2"), "--models", zoo["CE"],
            "--data-dir", str(geco_dir), "--unsafe-no-sandbox", "--published-reference", str(bundle)]
    assert queue.main(argv) == 2
    # pointing it at the published checkpoint explicitly passes the check
    assert queue.main([*argv, "--zero-shot-reference", other["ZS"]]) == 0


def test_a_published_reference_without_a_local_zero_shot_checkpoint_or_of_another_base_is_an_error(
        tmp_path, geco_dir, bert_tokenizer):
    from submissions.worker import ZeroShotReferenceError, check_zero_shot_references

    zoo = _tiny_zoo(tmp_path / "zoo", bert_tokenizer)
    lone = tmp_path / "lone" / "CE"
    import shutil

    shutil.copytree(zoo["CE"], lone)  # a model set whose ZS checkpoint is nowhere near it
    bundle = _published_bundle(tmp_path / "published", zoo["ZS"], geco_dir)
    with pytest.raises(ZeroShotReferenceError, match="no zero-shot checkpoint of that base"):
        check_zero_shot_references(_no_sandbox_config(tmp_path, [str(lone)], geco_dir,
                                                      published_reference=str(bundle)))
    # given explicitly, it is found and matches
    lines = check_zero_shot_references(_no_sandbox_config(tmp_path, [str(lone)], geco_dir, zero_shot=zoo["ZS"],
                                                          published_reference=str(bundle)))
    assert lines == [f"binary_all binary_all/CE/seed0: zero-shot reference {zoo['ZS']}"]
    # the committed reference names the MiniLM zoo's ZS models, not this base
    committed = Path(__file__).resolve().parent.parent / "reference" / "zero_shot_attributions"
    with pytest.raises(ZeroShotReferenceError, match="names no zero-shot model of base 'tiny-bert'"):
        check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir,
                                                      published_reference=str(committed)))
    with pytest.raises(ZeroShotReferenceError, match="cannot download"):
        check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir,
                                                      published_reference="no-such-org/no-such-reference"))
    # an explicit reference must be a ZS checkpoint of a base of the set
    with pytest.raises(ZeroShotReferenceError, match="not 'ZS'"):
        check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir, zero_shot=zoo["CE"]))
    foreign = tmp_path / "foreign"
    shutil.copytree(zoo["ZS"], foreign)
    info = json.loads((foreign / "gecobench_model.json").read_text())
    (foreign / "gecobench_model.json").write_text(json.dumps({**info, "base_model": "another-base"}))
    with pytest.raises(ZeroShotReferenceError, match="of base 'another-base'; no model of the set has that base"):
        check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir, zero_shot=str(foreign)))


def test_precomputed_rma_comes_from_the_files_own_zero_shot_rows(tmp_path, geco_dir, bert_tokenizer):
    zoo = _tiny_zoo(tmp_path / "zoo", bert_tokenizer)
    requests = RequestStore(tmp_path / "requests")
    with_zs = submit_request(requests, "precomputed", {**META, "name": "with_zs", "version": "1.0.0"}, "a.jsonl",
                             _precomputed_rows(zoo["CE"], geco_dir) + _precomputed_rows(zoo["ZS"], geco_dir))
    without = submit_request(requests, "precomputed", {**META, "name": "without_zs", "version": "1.0.0"},
                             "b.jsonl", _precomputed_rows(zoo["CE"], geco_dir))
    config = _no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir)

    assert process_queue(requests, config) == {with_zs.request_id: "FINISHED", without.request_id: "FINISHED"}

    records = {r["explainer"]["name"]: r for r in LocalStore(config.results_location).read_all().documents}
    rma = records["with_zs"]["metrics"]["relative_mass_accuracy"]
    # the same attributions on both models: MA / MA_ZS = 1 on every sentence, log RMA 0
    assert rma["value"] == pytest.approx(0.0, abs=1e-12)
    assert records["with_zs"]["model"]["zero_shot_reference_source"] == "self-reported"
    assert records["without_zs"]["metrics"]["relative_mass_accuracy"]["value"] is None


def test_a_published_reference_made_on_other_geco_data_is_refused(tmp_path, geco_dir, bert_tokenizer):
    from submissions.worker import ZeroShotReferenceError, check_zero_shot_references

    zoo = _tiny_zoo(tmp_path / "zoo", bert_tokenizer)
    other_data = load_split("binary_subject", "test", geco_dir).fingerprint  # the right ZS model, other sentences
    stale = _published_bundle(tmp_path / "stale", zoo["ZS"], geco_dir, fingerprint=other_data)
    with pytest.raises(ZeroShotReferenceError, match="made on other GECO data than the worker scores") as raised:
        check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir, published_reference=str(stale)))
    assert other_data[:16] in str(raised.value) and stale.name in str(raised.value)
    requests = RequestStore(tmp_path / "requests")
    upload = submit_request(requests, "precomputed", {**META, "name": "oracle", "version": "1.0.0"}, "oracle.jsonl",
                            _precomputed_rows(zoo["CE"], geco_dir))
    config = _no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir, published_reference=str(stale))
    assert process_queue(requests, config) == {upload.request_id: "FAILED"}
    assert "made on other GECO data" in requests.get(upload.request_id).last_event["reason"]
    # beside a bundle of this data, the stale one is passed over
    both = tmp_path / "both"
    both.mkdir()
    import shutil

    shutil.copy(stale, both)
    shutil.copy(_published_bundle(tmp_path / "current", zoo["ZS"], geco_dir), both)
    lines = check_zero_shot_references(_no_sandbox_config(tmp_path, [zoo["CE"]], geco_dir,
                                                          published_reference=str(both)))
    assert lines == [f"binary_all binary_all/CE/seed0: zero-shot reference {zoo['ZS']}"]

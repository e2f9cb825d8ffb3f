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

"""The main job: sharding, checkpoints + resume, perturbed models, scoring, records, store, CLI, 1-vs-2 processes."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import (
    GRADIENT_NORM_SOURCE,
    REPO_ROOT,
    TINY_PROTOCOL,
    cli_flags,
    imported_plugin,
    make_tiny_bert_classifier,
)
from tolerances import ulp_tolerance

from gecobench.evaluation import (
    EvaluationSettings,
    ExplainerSpec,
    leaderboard_text,
    run_evaluation,
)
from gecobench.evaluation.checkpoints import CheckpointStore
from gecobench.evaluation.data import GecoRow, GecoSplit, load_split, scorable
from gecobench.evaluation.modelling import noisy_copy, other_targets, randomised_copy
from gecobench.evaluation.runner import rows_for_filter
from gecobench.evaluation.scoring import score_correctness
from gecobench.records import RecordValidationError, validate_record
from gecobench.store import LocalStore

torch.set_num_threads(1)

# A plug-in module the tests register explainers from, in-process and in subprocesses (via --import).
PLUGIN_SOURCE = GRADIENT_NORM_SOURCE + '''
import os
import time


@register_explainer
class EvalTestGradient(Explainer):
    """|d logit_target / d embedding| per token: depends on model, input and target."""
    name = "eval_test_gradient"
    version = "0.1"
    def explain(self, model, tokenizer, words, targets):
        time.sleep(float(os.environ.get("EVAL_TEST_DELAY", "0")))
        return gradient_norm(model, tokenizer, words, targets)

@register_explainer
class EvalTestRandom(Explainer):
    """Seeded random word scores (uses numpy's global RNG, which the evaluation seeds per chunk)."""
    name = "eval_test_random"
    version = "0.1"
    def explain(self, model, tokenizer, words, targets):
        return [np.random.rand(len(w)) for w in words]
'''

FAST = TINY_PROTOCOL


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("plugin")
    with imported_plugin(folder, "eval_test_plugin", PLUGIN_SOURCE):
        yield folder


def _metrics_without_time(record: dict) -> dict:
    """What must agree between runs: everything but provenance and wall-clock runtime."""
    return {k: v for k, v in record.items() if k not in ("provenance", "runtime")}


def _records(root: Path) -> dict[str, dict]:
    report = LocalStore(root).read_all("explainer_score")
    assert report.warnings == []
    return {r["record_id"]: r for r in report.documents}


# ---------------------------------------------------------------- small parts

def test_explainer_spec_parses_typed_params_and_rejects_garbage() -> None:
    spec = ExplainerSpec.parse("lime:num_samples=200,kernel_width=0.25,mode=fast")
    assert spec.name == "lime"
    assert spec.params == {"num_samples": 200, "kernel_width": 0.25, "mode": "fast"}
    assert ExplainerSpec.parse("saliency").params == {}
    assert spec.key() != ExplainerSpec.parse("lime:num_samples=100").key()
    with pytest.raises(ValueError, match="expected name:key=value"):
        ExplainerSpec.parse("lime:num_samples")


def test_other_targets() -> None:
    assert other_targets(0, 2) == [1]
    assert other_targets(2, 3) == [0, 1]
    with pytest.raises(ValueError, match="label 3"):
        other_targets(3, 3)


def test_randomised_copy_is_seeded_and_leaves_the_original_alone() -> None:
    model = make_tiny_bert_classifier(seed=0)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    a, b = randomised_copy(model, seed=7), randomised_copy(model, seed=7)
    c = randomised_copy(model, seed=8)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), f"original changed at {key}"
    w = "bert.encoder.layer.0.attention.self.query.weight"
    assert torch.equal(a.state_dict()[w], b.state_dict()[w])
    assert not torch.equal(a.state_dict()[w], c.state_dict()[w])
    assert not torch.equal(a.state_dict()[w], before[w])
    emb = "bert.embeddings.word_embeddings.weight"
    assert not torch.equal(a.state_dict()[emb], before[emb])


def test_noisy_copy_perturbs_embeddings_by_position_only(bert_tokenizer) -> None:
    model = make_tiny_bert_classifier(seed=0)
    noisy = noisy_copy(model, std=0.5, seed=3)
    ids = bert_tokenizer(["she runs", "he runs"], return_tensors="pt")["input_ids"]
    clean_emb = model.get_input_embeddings()(ids)
    noisy_emb = noisy.get_input_embeddings()(ids)
    delta = noisy_emb - clean_emb
    assert delta.abs().max() > 0
    # same perturbation for every sentence at a given position, independent of the batch: (e + n) - e rounds at
    # the scale of e + n, so the float32 check allows a few ulps there, not relative to the (possibly tiny) n
    atol = ulp_tolerance(np.float32, float(noisy_emb.abs().max()))
    assert torch.allclose(delta[0], delta[1], rtol=0, atol=atol)
    alone = noisy.get_input_embeddings()(ids[1:]) - model.get_input_embeddings()(ids[1:])
    assert torch.allclose(alone[0], delta[1], rtol=0, atol=atol)
    assert 0.3 < float(delta.detach().std()) < 0.7  # std 0.5 as asked
    assert torch.equal(noisy_copy(model, std=0.0, seed=3).get_input_embeddings()(ids), clean_emb)
    with pytest.raises(ValueError, match="std"):
        noisy_copy(model, std=-1.0, seed=0)


def _toy_split() -> GecoSplit:
    rows = [
        GecoRow(0, ("He", "runs"), (1, 0), 1, 10), GecoRow(1, ("She", "runs"), (1, 0), 0, 10),
        GecoRow(2, ("He", "sat"), (1, 0), 1, 11), GecoRow(3, ("She", "sat"), (1, 0), 0, 11),
        GecoRow(4, ("He", "ate"), (1, 0, 0), 1, 12), GecoRow(5, ("She", "ate"), (1, 0), 0, 12),
    ]
    return GecoSplit("binary_all", "test", rows, [[0, 1], [2, 3], [4, 5]], "fp", "toy")


def test_filter_keeps_only_groups_with_every_variant_correct() -> None:
    split = _toy_split()
    predictions = {0: 1, 1: 0, 2: 1, 3: 1, 4: 1, 5: 0}  # group 11 has one wrong variant
    kept, malformed = rows_for_filter(split, split.groups, predictions, "per_model")
    assert kept == [0, 1]
    assert malformed == 1  # group 12: words and ground truth differ in length
    kept_all, _ = rows_for_filter(split, split.groups, predictions, "none")
    assert kept_all == [0, 1, 2, 3]
    # the paper's filter keeps its shared subset's groups, whatever this model predicts (group 11 included)
    from gecobench.evaluation.filters import FilterSubset

    shared = FilterSubset("binary_all", "test", "fp", (11, 12))
    assert rows_for_filter(split, split.groups, predictions, "paper", shared) == ([2, 3], 1)
    with pytest.raises(ValueError, match="shared subset"):
        rows_for_filter(split, split.groups, predictions, "paper")


def test_score_correctness_groups_and_gap_by_hand() -> None:
    truth = [[1, 0], [1, 0], [1, 0, 0], [1, 0, 0]]
    # per-sentence MA: 1.0, 0.5 (female); 0.25, undefined (male, all-zero attribution)
    scores = [np.array([2.0, 0.0]), np.array([1.0, -1.0]), np.array([1.0, 1.0, 2.0]), np.zeros(3)]
    labels = [0, 0, 1, 1]
    metrics, groups, per_sentence = score_correctness(scores, truth, labels, None, "no ZS model", 50, 0,
                                                      source_sentences=[7, 8, 7, 8])
    assert np.allclose(per_sentence[:3], [1.0, 0.5, 0.25]) and np.isnan(per_sentence[3])
    assert metrics["mass_accuracy"]["value"] == pytest.approx((1.0 + 0.5 + 0.25) / 3)
    assert metrics["mass_accuracy"]["n_undefined"] == 1
    assert groups["female"]["mass_accuracy"] == pytest.approx(0.75)
    assert groups["male"]["mass_accuracy"] == pytest.approx(0.25)
    assert groups["male"]["n_scored"] == 1
    # signed, male minus female, over the source sentences with both variants defined (7 only: 0.25 - 1.0)
    gap = metrics["mass_accuracy_gap"]
    assert gap["value"] == pytest.approx(0.25 - 1.0)
    assert (gap["minuend"], gap["subtrahend"], gap["n_source_sentences"]) == ("male", "female", 1)
    assert gap["definition"] == "MA(male) − MA(female)"
    assert metrics["relative_mass_accuracy"]["value"] is None
    assert metrics["relative_mass_accuracy"]["reason"] == "no ZS model"
    ci = metrics["mass_accuracy"]
    assert ci["ci_low"] <= ci["value"] <= ci["ci_high"]
    # against a reference that is half as accurate on every sentence: median log ratio = ln 2
    reference = [np.array([1.0, 1.0]), np.array([1.0, 3.0]), np.array([1.0, 3.0, 4.0]), np.array([1.0, 0.0, 0.0])]
    metrics, _, _ = score_correctness(scores, truth, labels, reference, None, 20, 0, source_sentences=[7, 8, 7, 8])
    assert metrics["relative_mass_accuracy"]["value"] == pytest.approx(np.log(2.0))
    assert metrics["relative_mass_accuracy"]["n_scored"] == 3


def test_load_split_groups_variants_and_fingerprints(geco_dir) -> None:
    split = load_split("binary_all", "test", geco_dir)
    assert len(split.rows) == 644 and len(split.groups) == 322
    for group in split.groups[:20]:
        assert len({split.rows[i].sentence_id for i in group}) == 1
        assert sorted(split.rows[i].label for i in group) == [0, 1]
    assert load_split("binary_all", "test", geco_dir).fingerprint == split.fingerprint
    with pytest.raises(ValueError, match="unknown GECO config"):
        load_split("binary", "test", geco_dir)


# ---------------------------------------------------------------- records

def test_schema_rejects_broken_records(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    run_evaluation(["eval_test_random"], [tiny_models["CE"]], ["binary_all"],
                   EvaluationSettings(data_dir=str(geco_dir), properties=False, filter="none", **FAST),
                   store_location=str(tmp_path / "results"), checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = _records(tmp_path / "results").values()
    validate_record(record)
    broken = json.loads(json.dumps(record))
    del broken["metrics"]["mass_accuracy"]
    with pytest.raises(RecordValidationError, match="mass_accuracy"):
        validate_record(broken)
    broken = json.loads(json.dumps(record))
    broken["groups"]["males"] = broken["groups"]["male"]
    with pytest.raises(RecordValidationError, match="groups"):
        validate_record(broken)
    broken = json.loads(json.dumps(record))
    broken["metrics"]["sparsity"] = {"value": float("nan")}
    with pytest.raises(RecordValidationError, match="non-finite"):
        validate_record(broken)
    # a corrupted file in the store is reported on read, never returned
    path = next((tmp_path / "results" / "explainer_score").glob("*.json"))
    path.write_text(json.dumps({**record, "counts": {"n_sentences": -1, "n_scored": 0}}))
    report = LocalStore(tmp_path / "results").read_all()
    assert report.documents == [] and len(report.warnings) == 1


# ---------------------------------------------------------------- the whole job in-process

def test_run_writes_valid_records_rma_properties_and_never_duplicates(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", **FAST)
    models = [tiny_models["CE"], tiny_models["ZS"]]
    explainers = ["eval_test_gradient", "eval_test_random"]
    summary = run_evaluation(explainers, models, ["binary_all"], settings, store_location=str(tmp_path / "r"),
                             checkpoint_dir=tmp_path / "ck", progress=False)
    records = _records(tmp_path / "r")
    assert len(summary.written) == 4 and set(summary.written) == set(records)
    by = {(r["model"]["regime"], r["explainer"]["name"]): r for r in records.values()}
    ce = by[("CE", "eval_test_gradient")]
    assert ce["counts"]["n_sentences"] == 12 and ce["counts"]["n_scored"] == 12
    assert set(ce["groups"]) == {"female", "male"}
    assert ce["metrics"]["relative_mass_accuracy"]["value"] is not None
    assert ce["model"]["zero_shot_reference"] == "ZS"
    zs = by[("ZS", "eval_test_gradient")]
    assert zs["metrics"]["relative_mass_accuracy"]["value"] is None
    assert "zero-shot reference itself" in zs["metrics"]["relative_mass_accuracy"]["reason"]
    for name in ("model_randomisation_check", "small_noise_check", "label_difference", "methods_agreement",
                 "sparsity", "covariate_complexity", "relevance_rank_accuracy", "auprc"):
        assert ce["metrics"][name]["value"] is not None, name
    # a gradient explanation changes when the model's weights are re-initialised
    assert ce["metrics"]["model_randomisation_check"]["value"] > 0.01
    # the random explainer is seeded per chunk, so it ignores the model: identical on the random copy
    assert by[("CE", "eval_test_random")]["metrics"]["model_randomisation_check"]["value"] == pytest.approx(0.0)
    # group MA agrees with the headline when both groups are the same size
    groups = ce["groups"]
    assert (groups["female"]["mass_accuracy"] + groups["male"]["mass_accuracy"]) / 2 == pytest.approx(
        ce["metrics"]["mass_accuracy"]["value"])
    assert ce["model"]["accuracy_on_scored"] == ce["model"]["accuracy_on_evaluated"]
    # a second run finds every record and writes nothing
    again = run_evaluation(explainers, models, ["binary_all"], settings, store_location=str(tmp_path / "r"),
                           checkpoint_dir=tmp_path / "ck", progress=False)
    assert again.written == [] and sorted(again.existing) == sorted(records)
    assert len(list((tmp_path / "r" / "explainer_score").glob("*.json"))) == 4
    table = leaderboard_text(LocalStore(tmp_path / "r"))
    assert "eval_test_gradient" in table and "binary_all" in table and table.count("\n") >= 5


def test_filter_on_scores_only_fully_correct_groups(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="per_model", properties=False, **FAST)
    run_evaluation(["eval_test_random"], [tiny_models["CE"]], ["binary_all"], settings,
                   store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = _records(tmp_path / "r").values()
    counts = record["counts"]
    assert record["protocol"]["filter"] == "per_model"
    assert record["filter"]["name"] == "per_model" and record["filter"]["n_sentences"] == counts["n_scored"]
    assert counts["n_scored"] + counts["n_filtered_out"] == counts["n_sentences"] == 12
    assert counts["n_scored"] % 2 == 0  # whole groups only
    if counts["n_scored"]:
        assert record["model"]["accuracy_on_scored"] == 1.0
    else:
        assert record["metrics"]["mass_accuracy"]["value"] is None and record["metrics"]["mass_accuracy"]["reason"]


def test_pattern_variant_is_fitted_on_the_split_being_explained(tiny_models, geco_dir, binary_all_test, tmp_path,
                                                                 monkeypatch) -> None:
    """The paper's Pattern Variant learns from the split it explains (the whole split, its labels); the 1.x
    variant (fit_on=train) from the train split."""
    from gecobench.explainers.builtin import PatternVariantExplainer

    fitted = {}
    original_fit = PatternVariantExplainer.fit

    def recording_fit(self, words, labels):
        fitted[self.params()["fit_on"]] = (words, labels)
        original_fit(self, words, labels)

    monkeypatch.setattr(PatternVariantExplainer, "fit", recording_fit)
    settings = EvaluationSettings(data_dir=str(geco_dir), filter_correct=False, properties=False, **FAST)
    run_evaluation(["pattern_variant", "pattern_variant:fit_on=train,unit=word,label=one_hot"], [tiny_models["CE"]],
                   ["binary_all"], settings, store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck",
                   progress=False)
    test, train = binary_all_test, load_split("binary_all", "train", str(geco_dir))
    assert fitted["explained"] == ([list(r.words) for r in test.rows], [r.label for r in test.rows])
    assert fitted["train"][0] == [list(r.words) for r in train.rows if scorable(r)]
    records = {r["explainer"]["params"]["fit_on"]: r for r in _records(tmp_path / "r").values()}
    assert records.keys() == {"explained", "train"}
    assert records["explained"]["explainer"]["version"] == records["train"]["explainer"]["version"] == "2.0.0"


# ---------------------------------------------------------------- subprocesses: CLI, crash-resume, 2 processes

def _cli(models: list[str], geco_dir, store: Path, checkpoints: Path, explainers, extra=()) -> list[str]:
    return ["--explainers", *explainers, "--models", *models, "--configs", "binary_all",
            "--results", str(store), "--checkpoint-dir", str(checkpoints), "--data-dir", str(geco_dir),
            *cli_flags(FAST), "--no-filter",
            "--import", "eval_test_plugin", "--quiet", *extra]


def _env(plugin_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_dir), str(REPO_ROOT), env.get("PYTHONPATH", "")])
    env.update({"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **extra})
    return env


SCRIPT = str(REPO_ROOT / "scripts" / "evaluate_explainers.py")


def test_cli_help() -> None:
    out = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True, check=True).stdout
    assert "--explainers" in out and "--no-properties" in out and "--max-groups" in out


def _in_process_reference(tiny_models, geco_dir, store: Path, checkpoints: Path, explainers, models) -> dict:
    """The same run as the CLI arguments of :func:`_cli`, in this process (no interpreter start-up)."""
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", **FAST)
    run_evaluation(list(explainers), models, ["binary_all"], settings, store_location=str(store),
                   checkpoint_dir=checkpoints, progress=False)
    return _records(store)


def test_killed_run_resumes_from_checkpoints_without_duplicates(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    explainers, models = ["eval_test_gradient"], [tiny_models["CE"]]
    expected = _in_process_reference(tiny_models, geco_dir, tmp_path / "reference", tmp_path / "ck_ref", explainers, models)
    assert len(expected) == 1

    store, checkpoints = tmp_path / "store", tmp_path / "ck"
    args = [sys.executable, SCRIPT, *_cli(models, geco_dir, store, checkpoints, explainers)]
    # each explain call sleeps, so the run is still busy with chunk 2 of 3 when the first checkpoint lands
    process = subprocess.Popen(args, env=_env(plugin_dir, EVAL_TEST_DELAY="1.5"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and not list(checkpoints.rglob("chunk-*.json")):
        assert process.poll() is None, "the run ended before it wrote a checkpoint"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 1 <= len(list(checkpoints.rglob("chunk-*.json"))) < 6
    assert not list(store.rglob("*.json")), "no record may be written before every chunk is done"

    subprocess.run(args, env=_env(plugin_dir), check=True, capture_output=True, timeout=300)
    resumed = _records(store)
    assert sorted(resumed) == sorted(expected)
    for record_id, record in expected.items():
        assert _metrics_without_time(resumed[record_id]) == _metrics_without_time(record)
    # three chunks for the model, three for the ZS model found next to it (the RMA reference, shared per base)
    own = CheckpointStore(checkpoints).chunk_files()
    assert len(own) == 3 and len(list(checkpoints.rglob("chunk-*.json"))) == 6
    assert resumed[next(iter(resumed))]["model"]["zero_shot_reference"] == "ZS"
    assert not list(store.rglob("*.tmp")) and not list(checkpoints.rglob("*.tmp"))


@pytest.mark.slow
def test_two_processes_write_the_same_records_as_one(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    explainers, models = ["eval_test_gradient", "eval_test_random"], [tiny_models["CE"], tiny_models["ZS"]]
    records_one = _in_process_reference(tiny_models, geco_dir, tmp_path / "one", tmp_path / "ck1", explainers, models)
    # accelerate launch --cpu starts several CPU processes only through MPI; torchrun is the portable way and
    # Accelerate picks its environment up (MULTI_CPU, gloo).
    launch = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29517"]
    result = subprocess.run([*launch, SCRIPT, *_cli(models, geco_dir, tmp_path / "two", tmp_path / "ck2", explainers)],
                            env=_env(plugin_dir), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    records_two = _records(tmp_path / "two")
    assert sorted(records_one) == sorted(records_two) and len(records_one) == 4
    for record_id, record in records_one.items():
        assert _metrics_without_time(records_two[record_id]) == _metrics_without_time(record)
        assert records_two[record_id]["runtime"]["n_processes"] == 2
    # every chunk was explained exactly once across the two processes: 2 models × 2 explainers × 3 chunks,
    # plus the ZS reference's 2 explainers × 3 chunks for CE's RMA
    assert len(list((tmp_path / "ck2").rglob("chunk-*.json"))) == 2 * 2 * 3 + 2 * 3


def test_the_text_leaderboard_names_versions_only_when_a_store_holds_two() -> None:
    from gecobench.evaluation.leaderboard import explainer_rows
    from gecobench.records import explainer_score_identity, record_id_for

    def record(name: str, version: str, ma: float) -> dict:
        out = {"dataset": {"config": "binary_all", "split": "test", "fingerprint": "f"},
               "model": {"regime": "CE", "base_model": "minilm", "seed": 0},
               "explainer": {"name": name, "version": version, "params": {}}, "protocol": {},
               "metrics": {"mass_accuracy": {"value": ma}}, "counts": {"n_scored": 4},
               "runtime": {"seconds_per_sentence": 0.1}}
        out["record_id"] = record_id_for(explainer_score_identity(out))
        return out

    one = explainer_rows([record("lime", "2.0.0", 0.5), record("saliency", "1.0.0", 0.4)])
    assert [row[3] for row in one] == ["lime", "saliency"]
    both = explainer_rows([record("lime", "2.0.0", 0.5), record("lime", "1.0.0", 0.6), record("saliency", "1.0.0", 0.4)])
    assert [row[3] for row in both] == ["lime 1.0.0", "lime 2.0.0", "saliency"]
    # the two versions are two rows, each naming what tells it apart; saliency is set apart by nothing
    assert [row[-1] for row in both] == ["explainer.version=1.0.0", "explainer.version=2.0.0", ""]


def test_properties_on_a_subsample_of_whole_chunks(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    """MA on every scored sentence; the property metrics on the first N source sentences, stated in the protocol."""
    with pytest.raises(ValueError, match="multiple of chunk_size"):
        EvaluationSettings(chunk_size=2, properties_max_groups=3)
    fast = {**FAST, "chunk_size": 2, "max_groups": 4}
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties_max_groups=2, **fast)
    run_evaluation(["eval_test_gradient"], [tiny_models["CE"]], ["binary_all"], settings,
                   store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    (record,) = _records(tmp_path / "r").values()
    assert record["protocol"]["properties_max_sentence_groups"] == 2
    assert record["metrics"]["mass_accuracy"]["n_scored"] == 8  # 4 source sentences × 2 variants
    for name in ("model_randomisation_check", "small_noise_check", "label_difference", "sparsity"):
        assert record["metrics"][name]["n_scored"] == 4, name  # the first 2 source sentences × 2 variants
    everywhere = EvaluationSettings(data_dir=str(geco_dir), filter="none", **fast)
    run_evaluation(["eval_test_gradient"], [tiny_models["CE"]], ["binary_all"], everywhere,
                   store_location=str(tmp_path / "all"), checkpoint_dir=tmp_path / "ck", progress=False)
    (full,) = _records(tmp_path / "all").values()
    assert full["record_id"] != record["record_id"]
    assert full["metrics"]["model_randomisation_check"]["n_scored"] == 8


def test_both_filters_from_one_pass_equal_two_separate_runs(tiny_models, plugin_dir, geco_dir, binary_all_test,
                                                            tmp_path, monkeypatch) -> None:
    """filters=("paper", "none") computes every attribution once; its records are those of a filtered run and an
    unfiltered run made separately (same ids, same numbers). The models come in the other order there, so the
    zero-shot model's own attributions serving as CE's RMA reference are checked against a separate pass."""
    from gecobench.evaluation import chunks

    # Untrained tiny models classify every group's variants alike (one right, one wrong), so the filter would
    # keep nothing: predictions right on every other source sentence exercise a real subset.
    split = binary_all_test
    answer = {tuple(split.rows[i].words): split.rows[i].label if g % 2 == 1 else 1 - split.rows[i].label
              for g, group in enumerate(split.groups) for i in group}
    monkeypatch.setattr(chunks, "predict", lambda model, tokenizer, words, batch_size=16: np.array(
        [answer[tuple(w)] for w in words]))
    explainers = ["eval_test_gradient", "uniform_random"]  # deterministic, and random with per-sentence streams
    fast = {**FAST, "properties_max_groups": 2, "faithfulness_max_groups": 2}
    one_pass = run_evaluation(explainers, [tiny_models["ZS"], tiny_models["CE"]], ["binary_all"],
                              EvaluationSettings(data_dir=str(geco_dir), **fast), store_location=str(tmp_path / "one"),
                              checkpoint_dir=tmp_path / "ck1", progress=False, filters=("paper", "none"))
    for name in ("paper", "none"):
        run_evaluation(explainers, [tiny_models["CE"], tiny_models["ZS"]], ["binary_all"],
                       EvaluationSettings(data_dir=str(geco_dir), filter=name, **fast),
                       store_location=str(tmp_path / "two"), checkpoint_dir=tmp_path / "ck2", progress=False)
    shared, separate = _records(tmp_path / "one"), _records(tmp_path / "two")
    assert len(one_pass.written) == 8 and set(shared) == set(separate)
    filtered = [r for r in shared.values() if r["protocol"]["filter"] != "none"]
    assert any(0 < r["counts"]["n_filtered_out"] < r["counts"]["n_sentences"] for r in filtered), \
        "the tiny models must leave some groups out, or the filtered subset is not exercised"

    def numbers(value):
        if isinstance(value, dict):
            return {k: numbers(v) for k, v in value.items()}
        if isinstance(value, list):
            return [numbers(v) for v in value]
        # float32 attributions summed over a few words, then averaged: a few float32 ulps of values <= 1
        return pytest.approx(value, rel=0, abs=64 * float(np.finfo(np.float32).eps)) if isinstance(value, float) else value

    for record_id, record in shared.items():
        other = separate[record_id]
        assert record["counts"] == other["counts"] and record["groups"].keys() == other["groups"].keys()
        assert _metrics_without_time(record)["metrics"] == numbers(_metrics_without_time(other)["metrics"]), record_id
        assert record["metrics"]["comprehensiveness"]["n_scored"] <= 4  # faithfulness: first 2 groups only
    ce = [r for r in filtered if r["model"]["regime"] == "CE" and r["explainer"]["name"] == "eval_test_gradient"]
    assert ce and ce[0]["protocol"]["faithfulness_max_sentence_groups"] == 2
    if ce[0]["counts"]["n_scored"]:
        assert ce[0]["metrics"]["relative_mass_accuracy"]["value"] is not None


def test_filters_must_name_at_least_one(tiny_models, plugin_dir, geco_dir, tmp_path) -> None:
    with pytest.raises(ValueError, match="one filter"):
        run_evaluation(["eval_test_gradient"], [tiny_models["CE"]], ["binary_all"],
                       EvaluationSettings(data_dir=str(geco_dir), **FAST), store_location=str(tmp_path / "r"),
                       checkpoint_dir=tmp_path / "ck", progress=False, filters=())
    with pytest.raises(ValueError, match="faithfulness_max_groups"):
        EvaluationSettings(chunk_size=2, faithfulness_max_groups=3)


def test_partition_shap_label_difference_reuses_the_models_outputs(tiny_models, plugin_dir, geco_dir, tmp_path,
                                                                   monkeypatch) -> None:
    """The label-difference pass of Partition SHAP runs no model call of its own, and its record is the one a run
    without the reuse writes (same id, same numbers)."""
    from gecobench.explainers.partition import PartitionShapExplainer

    fast = {**FAST, "chunk_size": 2, "max_groups": 2}
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", **fast)
    calls: list[tuple[int, int]] = []
    explain = PartitionShapExplainer.explain

    def counting_explain(self, model, tokenizer, words, targets):
        # (model, number of sentences whose outputs were not kept) for every call
        store = self._reused or {}
        fresh = sum((id(model), id(tokenizer), tuple(w)) not in store for w in words)
        calls.append((id(model), fresh))
        return explain(self, model, tokenizer, words, targets)

    monkeypatch.setattr(PartitionShapExplainer, "explain", counting_explain)
    run_evaluation(["partition_shap"], [tiny_models["CE"]], ["binary_all"], settings,
                   store_location=str(tmp_path / "reused"), checkpoint_dir=tmp_path / "ck1", progress=False)
    main_model = calls[0][0]
    on_main = [fresh for model, fresh in calls if model == main_model]
    assert len(on_main) >= 2 and on_main[0] > 0 and all(fresh == 0 for fresh in on_main[1:]), calls

    monkeypatch.setattr(PartitionShapExplainer, "outputs_reused", None)
    run_evaluation(["partition_shap"], [tiny_models["CE"]], ["binary_all"], settings,
                   store_location=str(tmp_path / "fresh"), checkpoint_dir=tmp_path / "ck2", progress=False)
    (reused,) = _records(tmp_path / "reused").values()
    (fresh,) = _records(tmp_path / "fresh").values()
    assert reused["metrics"]["label_difference"]["n_scored"] > 0
    assert _metrics_without_time(reused) == _metrics_without_time(fresh)


def test_chunks_are_shared_out_by_cost_so_the_property_chunks_do_not_all_land_on_one_process() -> None:
    from gecobench.evaluation.scheduling import assign_chunks, chunk_cost

    settings = EvaluationSettings(chunk_size=2, max_groups=20, properties_max_groups=4, faithfulness_max_groups=4)
    costs = [chunk_cost(4, reference=True, properties=settings.properties_in_chunk(c),
                        faithfulness=settings.faithfulness_in_chunk(c), n_classes=2) for c in range(10)]
    assert costs[:2] == [4 * 6, 4 * 6] and set(costs[2:]) == {4 * 2}  # main, reference, 3 property, 1 faithfulness
    two = assign_chunks(costs, 2)
    assert sorted(two[0] + two[1]) == list(range(10))  # every chunk exactly once
    assert 0 in two[0] and 1 in two[1]  # the two property chunks on different processes
    loads = [sum(costs[c] for c in ids) for ids in two]
    assert max(loads) - min(loads) <= max(costs[2:])  # the contiguous halves differed by 2 × (24 − 8) = 32
    assert assign_chunks(costs, 2) == two and all(ids == sorted(ids) for ids in two)
    assert assign_chunks(costs, 1) == [list(range(10))]
    assert assign_chunks(costs[:1], 3) == [[0], [], []]  # more processes than chunks: the others idle
    with pytest.raises(ValueError, match="n_processes"):
        assign_chunks(costs, 0)
    with pytest.raises(ValueError, match="non-negative"):
        assign_chunks([1.0, float("nan")], 2)
    import doctest

    import gecobench.evaluation.scheduling

    failures, tried = doctest.testmod(gecobench.evaluation.scheduling)
    assert tried > 0 and failures == 0


def test_the_zero_shot_reference_is_keyed_by_what_attributions_depend_on_only() -> None:
    """Runs that differ in properties, faithfulness, bootstrap or filter share the reference's checkpoints;
    runs whose chunks, seeds or batches differ do not."""
    base = EvaluationSettings(chunk_size=4, max_groups=40)
    shared = [dataclasses.replace(base, properties_max_groups=4, faithfulness_max_groups=8),
              dataclasses.replace(base, bootstrap=50, filter="none", faithfulness=False, properties=False),
              dataclasses.replace(base, noise_std=0.5, randomisation_seed=7)]
    for settings in shared:
        assert settings.protocol() != base.protocol()
        assert settings.attribution_protocol() == base.attribution_protocol()
    for change in ({"seed": 1}, {"chunk_size": 8}, {"batch_size": 4}, {"max_groups": 20}, {"split": "train"}):
        assert dataclasses.replace(base, **change).attribution_protocol() != base.attribution_protocol(), change

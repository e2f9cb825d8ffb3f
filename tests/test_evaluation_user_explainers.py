"""User explainers in the main job: honest caching of edited code, fail-soft runs, refused parameters, records
independent of the companion explainers, ``source``, attentions for attention-based explainers, one scoring path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import MA_ONLY, TINY_PROTOCOL, cli_flags, make_tiny_bert_classifier, write_tiny_zoo

from gecobench.cli import evaluate as evaluate_cli
from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.by_gender import GenderBreakdown, ScoredSentences
from gecobench.evaluation.data import scorable
from gecobench.evaluation.modelling import LoadedModel
from gecobench.evaluation.runner import find_zero_shot_reference, split_into_chunks
from gecobench.evaluation.scoring import score_correctness
from gecobench.explainers.base import available_explainers, get_explainer, get_explainer_class
from gecobench.records import identity_mismatch
from gecobench.store import LocalStore

torch.set_num_threads(1)

SMALL = {**TINY_PROTOCOL, "max_groups": 4, "bootstrap": 10}
CLI_SMALL = [*cli_flags({**SMALL, **MA_ONLY}), "--quiet"]

# A user's explainer module; {order} is edited between runs while the version stays "1.0".
EDITABLE_SOURCE = '''
import numpy as np
from gecobench.explainers.base import Explainer, register_explainer

@register_explainer
class EditableWordOrder(Explainer):
    name = "editable_word_order"
    version = "1.0"
    def explain(self, model, tokenizer, words, targets):
        return [np.arange(len(w), dtype=float){order} + 1.0 for w in words]
'''

RAISING_SOURCE = '''
from gecobench.explainers.base import Explainer, register_explainer

TARGET = {target}

@register_explainer
class RaisesOnOneSentence(Explainer):
    name = "raises_on_one_sentence"
    version = "1.0"
    def explain(self, model, tokenizer, words, targets):
        if any(list(w) == TARGET for w in words):
            raise RuntimeError("cannot explain this sentence")
        return [[1.0] * len(w) for w in words]
'''

# Two explainers that learn from data (they override fit): one whose fit raises, one that explains with what it
# learnt (the share of class-1 rows of its fit split), so its scores exist only if it was fitted.
FITTING_SOURCE = '''
from gecobench.explainers.base import Explainer, register_explainer

@register_explainer
class RaisesInFit(Explainer):
    name = "raises_in_fit"
    version = "1.0"
    def fit(self, words, labels):
        raise RuntimeError("cannot learn from these rows")
    def explain(self, model, tokenizer, words, targets):
        raise AssertionError("an explainer whose fit raised was asked to explain")

@register_explainer
class LearnsFromLabels(Explainer):
    name = "learns_from_labels"
    version = "1.0"
    share = None
    def fit(self, words, labels):
        self.share = sum(labels) / len(labels)
    def explain(self, model, tokenizer, words, targets):
        if self.share is None:
            raise RuntimeError("explain before fit")
        return [[self.share + i for i in range(len(w))] for w in words]
'''

ATTENTION_SOURCE = '''
import torch
from gecobench.explainers.base import Explainer, TokenAttributions, register_explainer
from gecobench.words import tokenize_words

@register_explainer
class LastLayerClsAttention(Explainer):
    """The last layer's attention from [CLS] to every token, averaged over heads."""
    name = "last_layer_cls_attention"
    version = "1.0"
    def explain(self, model, tokenizer, words, targets):
        encoding, word_ids = tokenize_words(tokenizer, words)
        with torch.no_grad():
            out = model(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"],
                        output_attentions=True)
        if not out.attentions:
            raise RuntimeError("the model returned no attentions")
        cls_row = out.attentions[-1][:, :, 0, :].mean(dim=1).numpy()
        return [TokenAttributions(cls_row[i], word_ids[i]) for i in range(len(words))]
'''


def _explainer_records(store: Path) -> list[dict]:
    report = LocalStore(store).read_all("explainer_score")
    assert report.warnings == []
    return report.documents


def _evaluate(argv: list[str]) -> int:
    return evaluate_cli.main(argv)


def test_an_edited_user_explainer_module_with_an_unchanged_version_gets_new_scores(
        tiny_models, geco_dir, tmp_path) -> None:
    module = tmp_path / "editable.py"
    checkpoints = tmp_path / "ck"
    common = ["--explainers", "editable_word_order", "--models", tiny_models["CE"], "--data-dir", str(geco_dir),
              "--import", str(module), "--checkpoint-dir", str(checkpoints), *CLI_SMALL]
    module.write_text(EDITABLE_SOURCE.format(order=""))  # the last word scores highest
    assert _evaluate([*common, "--results", str(tmp_path / "store")]) == 0
    module.write_text(EDITABLE_SOURCE.format(order="[::-1]"))  # edited: the first word scores highest
    assert _evaluate([*common, "--results", str(tmp_path / "store")]) == 0
    # the truth: the edited module evaluated with fresh checkpoints
    assert _evaluate([*common[:-len(CLI_SMALL) - 2], "--checkpoint-dir", str(tmp_path / "fresh"), *CLI_SMALL,
                      "--results", str(tmp_path / "fresh_store")]) == 0

    records = _explainer_records(tmp_path / "store")
    assert len(records) == 2, "the edited code is a new record, not the old one found again"
    fingerprints = {r["explainer"]["source_sha256"] for r in records}
    assert len(fingerprints) == 2 and all(r["explainer"]["version"] == "1.0" for r in records)
    (truth,) = _explainer_records(tmp_path / "fresh_store")
    edited = next(r for r in records if r["explainer"]["source_sha256"] == truth["explainer"]["source_sha256"])
    original = next(r for r in records if r is not edited)
    assert edited["metrics"]["mass_accuracy"]["value"] == truth["metrics"]["mass_accuracy"]["value"]
    assert edited["metrics"]["mass_accuracy"]["value"] != original["metrics"]["mass_accuracy"]["value"]
    # two checkpoint folders for the explainer: one per version of its code
    keys = {p.parent.name for p in checkpoints.glob("*/editable_word_order-*/chunk-*.json")}
    assert len(keys) == 2 and all("-src" in key for key in keys)


def test_source_is_user_for_a_module_explainer_and_builtin_for_a_builtin(tiny_models, geco_dir, tmp_path) -> None:
    module = tmp_path / "editable_for_source.py"
    module.write_text(EDITABLE_SOURCE.format(order=""))
    assert _evaluate(["--explainers", "editable_word_order", "saliency", "--models", tiny_models["CE"],
                      "--data-dir", str(geco_dir), "--import", str(module), "--checkpoint-dir", str(tmp_path / "ck"),
                      "--results", str(tmp_path / "store"), *CLI_SMALL]) == 0
    by_name = {r["explainer"]["name"]: r for r in _explainer_records(tmp_path / "store")}
    assert by_name["editable_word_order"]["explainer"]["source"] == "user"
    assert len(by_name["editable_word_order"]["explainer"]["source_sha256"]) == 64
    assert by_name["saliency"]["explainer"]["source"] == "builtin"
    assert "source_sha256" not in by_name["saliency"]["explainer"]
    assert all(identity_mismatch(r) is None for r in by_name.values())
    # the Space shows the source as it reads it, with its label
    from leaderboard_space.tables import SOURCE_LABELS, records_frame

    frame = records_frame(list(by_name.values()))
    assert frame.warnings == [] and set(frame.frame["source"]) == {"user", "builtin"}
    assert SOURCE_LABELS["user"] == "user"


def test_a_raising_explainer_leaves_the_others_records_and_a_non_zero_cli_exit(
        tiny_models, geco_dir, binary_all_test, tmp_path, capsys) -> None:
    split = binary_all_test
    chunks = split_into_chunks(split, EvaluationSettings(**SMALL))
    # a sentence of the second chunk: the first chunk of the raising explainer completes and is checkpointed
    row = next(i for group in chunks[1] for i in group if scorable(split.rows[i]))
    target = list(split.rows[row].words)
    module = tmp_path / "raising.py"
    module.write_text(RAISING_SOURCE.format(target=json.dumps(target)))
    checkpoints = tmp_path / "ck"
    code = _evaluate(["--explainers", "raises_on_one_sentence", "saliency", "uniform_random",
                      "--models", tiny_models["CE"], "--data-dir", str(geco_dir), "--import", str(module),
                      "--checkpoint-dir", str(checkpoints), "--results", str(tmp_path / "store"), *CLI_SMALL])
    err = capsys.readouterr().err
    assert code != 0
    assert "raises_on_one_sentence" in err and "RuntimeError: cannot explain this sentence" in err
    assert f"sentence {split.rows[row].sentence_id}" in err
    names = sorted(r["explainer"]["name"] for r in _explainer_records(tmp_path / "store"))
    assert names == ["saliency", "uniform_random"]
    # nothing computed is lost: the raising explainer's first chunk is checkpointed
    assert list(checkpoints.glob("*/raises_on_one_sentence-*/chunk-00000.json"))
    assert not list(checkpoints.glob("*/raises_on_one_sentence-*/chunk-00001.json"))


def test_run_evaluation_reports_the_failure_with_sentence_and_error(tiny_models, geco_dir, binary_all_test,
                                                                     tmp_path) -> None:
    split = binary_all_test
    row = next(i for i in range(len(split.rows)) if scorable(split.rows[i]))
    module = tmp_path / "raising_api.py"
    module.write_text(RAISING_SOURCE.format(target=json.dumps(list(split.rows[row].words))))
    evaluate_cli.import_user_module(str(module))
    summary = run_evaluation(["raises_on_one_sentence", "saliency"], [tiny_models["CE"]], ["binary_all"],
                             EvaluationSettings(data_dir=str(geco_dir), **MA_ONLY, **SMALL),
                             store_location=str(tmp_path / "store"), checkpoint_dir=tmp_path / "ck", progress=False)
    (failure,) = summary.failures
    assert failure.explainer.startswith("raises_on_one_sentence")
    assert (failure.error_type, failure.message) == ("RuntimeError", "cannot explain this sentence")
    assert failure.sentence_found and failure.sentence_ids == [split.rows[row].sentence_id]
    assert len(summary.written) == 1


def test_an_explainer_raising_in_fit_is_skipped_with_a_failure_per_model_and_a_non_zero_cli_exit(
        tiny_models, geco_dir, tmp_path, capsys) -> None:
    module = tmp_path / "fitting.py"
    module.write_text(FITTING_SOURCE)
    checkpoints = tmp_path / "ck"
    code = _evaluate(["--explainers", "raises_in_fit", "learns_from_labels", "saliency",
                      "--models", tiny_models["CE"], tiny_models["ZS"], "--data-dir", str(geco_dir),
                      "--import", str(module), "--checkpoint-dir", str(checkpoints),
                      "--results", str(tmp_path / "store"), *CLI_SMALL])
    err = capsys.readouterr().err
    assert code == 1
    assert "raises_in_fit" in err and "failed to fit" in err and "RuntimeError: cannot learn from these rows" in err
    records = _explainer_records(tmp_path / "store")
    # the others, the other learner included, are evaluated on both models as if it had not been asked for
    assert sorted((r["explainer"]["name"], r["model"]["regime"]) for r in records) == [
        ("learns_from_labels", "CE"), ("learns_from_labels", "ZS"), ("saliency", "CE"), ("saliency", "ZS")]
    assert all(r["metrics"]["mass_accuracy"]["value"] is not None for r in records)
    assert all(len(r["agreement"]["compared_explainers"]) == 2 for r in records), "compared with the ones run"
    assert not list(checkpoints.glob("*/raises_in_fit-*")), "nothing was computed for it"


def test_run_evaluation_reports_a_raising_fit_per_model_without_chunk_or_sentence(tiny_models, geco_dir,
                                                                                   tmp_path) -> None:
    module = tmp_path / "fitting_api.py"
    module.write_text(FITTING_SOURCE)
    evaluate_cli.import_user_module(str(module))
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, faithfulness=False,
                                  **SMALL)
    summary = run_evaluation(["learns_from_labels", "raises_in_fit"], [tiny_models["CE"], tiny_models["ZS"]],
                             ["binary_all"], settings, store_location=str(tmp_path / "store"),
                             checkpoint_dir=tmp_path / "ck", progress=False)
    assert len(summary.failures) == 2 and len({f.model for f in summary.failures}) == 2, "one per model"
    for failure in summary.failures:
        assert failure.explainer.startswith("raises_in_fit") and failure.config == "binary_all"
        assert (failure.stage, failure.chunk, failure.sentence_ids) == ("fit", None, [])
        assert (failure.error_type, failure.message) == ("RuntimeError", "cannot learn from these rows")
        assert "failed to fit" in failure.describe() and failure.model in failure.describe()
    assert len(summary.written) == 2  # learns_from_labels on each model
    # a rerun fits again and reports it again, and finds the other explainer's record instead of writing it twice
    rerun = run_evaluation(["learns_from_labels", "raises_in_fit"], [tiny_models["CE"]], ["binary_all"], settings,
                           store_location=str(tmp_path / "store"), checkpoint_dir=tmp_path / "ck", progress=False)
    assert [f.stage for f in rerun.failures] == ["fit"] and rerun.written == [] and len(rerun.existing) == 1


def test_a_misspelt_parameter_is_refused_by_every_builtin_and_the_cli(tiny_models, geco_dir, tmp_path,
                                                                      capsys) -> None:
    builtins = [n for n in available_explainers() if get_explainer_class(n).__module__.startswith("gecobench.")]
    assert len(builtins) >= 10
    for name in builtins:
        with pytest.raises(ValueError, match=r"unknown parameter 'nsteps'; known: "):
            get_explainer(name, nsteps=8)
    code = _evaluate(["--explainers", "integrated_gradients:nsteps=8", "--models", tiny_models["CE"],
                      "--data-dir", str(geco_dir), "--checkpoint-dir", str(tmp_path / "ck"),
                      "--results", str(tmp_path / "store"), *CLI_SMALL])
    err = capsys.readouterr().err
    assert code == 2 and "'nsteps'" in err and "n_steps" in err
    assert not (tmp_path / "store").exists() or not _explainer_records(tmp_path / "store")


def test_rerunning_with_another_companion_set_writes_no_duplicate(tiny_models, geco_dir, tmp_path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", faithfulness=False, **SMALL)
    store = str(tmp_path / "store")
    first = run_evaluation(["saliency", "uniform_random"], [tiny_models["CE"]], ["binary_all"], settings,
                           store_location=store, checkpoint_dir=tmp_path / "ck", progress=False)
    second = run_evaluation(["saliency", "input_x_gradient"], [tiny_models["CE"]], ["binary_all"], settings,
                            store_location=store, checkpoint_dir=tmp_path / "ck", progress=False)
    records = _explainer_records(tmp_path / "store")
    names = sorted(r["explainer"]["name"] for r in records)
    assert names == ["input_x_gradient", "saliency", "uniform_random"], "saliency's record is written once"
    saliency = next(r for r in records if r["explainer"]["name"] == "saliency")
    assert saliency["record_id"] in first.written and saliency["record_id"] in second.existing
    assert "compared_explainers" not in saliency["protocol"]
    # its cross-explainer numbers say which companions they were computed against
    compared = [label.split()[0] for label in saliency["agreement"]["compared_explainers"]]
    assert compared == ["saliency", "uniform_random"]
    assert saliency["metrics"]["methods_agreement"]["compared_with"] == [
        k for k in saliency["metrics"]["methods_agreement"]["compared_with"] if "uniform_random" in k]
    newcomer = next(r for r in records if r["explainer"]["name"] == "input_x_gradient")
    assert [label.split()[0] for label in newcomer["agreement"]["compared_explainers"]] == [
        "input_x_gradient", "saliency"]
    assert newcomer["agreement"]["compared_set_sha256"] != saliency["agreement"]["compared_set_sha256"]


def test_an_attention_explainer_gets_attentions_from_an_evaluated_model(tiny_models, geco_dir, tmp_path) -> None:
    module = tmp_path / "attention_explainer.py"
    module.write_text(ATTENTION_SOURCE)
    evaluate_cli.import_user_module(str(module))
    summary = run_evaluation(["last_layer_cls_attention"], [tiny_models["CE"]], ["binary_all"],
                             EvaluationSettings(data_dir=str(geco_dir), **MA_ONLY, **SMALL),
                             store_location=str(tmp_path / "store"), checkpoint_dir=tmp_path / "ck", progress=False)
    assert summary.failures == []
    (record,) = _explainer_records(tmp_path / "store")
    assert record["metrics"]["mass_accuracy"]["value"] is not None
    # the zero-shot model (the RMA reference) was explained too: log RMA is defined
    assert record["metrics"]["relative_mass_accuracy"]["value"] is not None


@pytest.mark.parametrize("method", ["cosine", "mlm"])
def test_the_zero_shot_wrapper_passes_output_attentions_through(method) -> None:
    from gecobench.evaluation.modelling import use_eager_attention
    from gecobench.models.zero_shot import ZeroShotClassifier, ZeroShotConfig

    base = make_tiny_bert_classifier()
    extra = ({"label_descriptions": ["a", "b"]} if method == "cosine" else
             {"prompt_token_ids": [2000, 103, 2003], "mask_offset": 1, "label_token_ids": [2001, 2002],
              "label_words": ["a", "b"]})
    model = use_eager_attention(ZeroShotClassifier(ZeroShotConfig(method=method, base_config=base.config.to_dict(),
                                                                  num_labels=2, **extra))).eval()
    ids = torch.tensor([[101, 2000, 2001, 2002, 102]])
    out = model(input_ids=ids, output_attentions=True)
    assert len(out.attentions) == base.config.num_hidden_layers
    assert all(a.shape == (1, base.config.num_attention_heads, 5, 5) for a in out.attentions)
    assert all(torch.isfinite(a).all() and (a >= 0).all() for a in out.attentions)
    assert model(input_ids=ids).attentions is None


def test_a_zoo_layout_model_finds_its_zero_shot_reference_in_the_zoo(tmp_path, bert_tokenizer) -> None:
    zoo = tmp_path / "binary_all"
    paths = write_tiny_zoo(zoo, bert_tokenizer)  # <root>/CE, <root>/ZS
    for regime, folder in paths.items():  # move into the reference's layout: <config>/<regime>/seed0
        Path(folder).rename(Path(folder).with_name(regime + "_tmp"))
        (zoo / regime).mkdir()
        (zoo / (regime + "_tmp")).rename(zoo / regime / "seed0")
    info = json.loads((zoo / "CE" / "seed0" / "gecobench_model.json").read_text())
    facts = LoadedModel(model=None, tokenizer=None, info=info, path=str(zoo / "CE" / "seed0"))
    found, reason = find_zero_shot_reference(facts, [str(zoo / "CE" / "seed0")])
    assert reason is None and Path(found) == zoo / "ZS" / "seed0"


def test_per_group_mass_accuracy_and_gaps_are_the_per_gender_numbers() -> None:
    rng = np.random.default_rng(5)
    truth = [[1, 0, 0], [1, 0, 0]] * 6
    scores = [rng.random(3) for _ in truth]
    labels = [1, 0] * 6
    sources = [i // 2 for i in range(12)]
    breakdown = GenderBreakdown(bootstrap=30, seed=4)
    metrics, groups, _ = score_correctness(scores, truth, labels, None, "none", 30, 4, source_sentences=sources,
                                           by_gender=breakdown.on(ScoredSentences.of(labels, sources)))
    block = breakdown.block()["metrics"]["mass_accuracy"]
    for group in ("female", "male"):
        assert groups[group]["mass_accuracy"] == block["groups"][group]["value"]
        assert (groups[group]["ci_low"], groups[group]["ci_high"]) == (block["groups"][group]["ci_low"],
                                                                     block["groups"][group]["ci_high"])
    gap = metrics["mass_accuracy_gap"]
    assert (gap["value"], gap["ci_low"], gap["ci_high"]) == tuple(
        block["gaps"]["male_minus_female"][k] for k in ("value", "ci_low", "ci_high"))
    # the same numbers without a breakdown given (one is made for these sentences)
    alone, alone_groups, _ = score_correctness(scores, truth, labels, None, "none", 30, 4, source_sentences=sources)
    assert alone["mass_accuracy_gap"] == gap and alone_groups == groups
    with pytest.raises(ValueError, match="bootstrap and seed"):
        score_correctness(scores, truth, labels, None, "none", 30, 5, source_sentences=sources,
                          by_gender=GenderBreakdown(30, 4).on(ScoredSentences.of(labels, sources)))


def test_source_fingerprint_covers_user_classes_and_what_a_package_wrapper_wraps(tmp_path) -> None:
    from gecobench.evaluation.origin import explainer_source, source_fingerprint
    from gecobench.explainers.base import Explainer

    assert source_fingerprint(get_explainer("saliency")) is None
    assert explainer_source(get_explainer("saliency")) == "builtin"

    class Wrapper(Explainer):  # stands for a class of the package that wraps a user's function
        name = "wrapper_for_test"
        source = "user"

        def __init__(self, function) -> None:
            super().__init__()
            self.__wrapped__ = function

        def explain(self, model, tokenizer, words, targets):
            return [self.__wrapped__(w) for w in words]

    Wrapper.__module__ = "gecobench.some_wrapper"  # as if defined in gecobench: only what it wraps counts
    first, second = tmp_path / "first_fn.py", tmp_path / "second_fn.py"
    first.write_text("def scores(words):\n    return [1.0] * len(words)\n")
    second.write_text("def scores(words):\n    return [2.0] * len(words)\n")
    functions = [evaluate_cli.import_user_module(str(path)).scores for path in (first, second)]
    prints = [source_fingerprint(Wrapper(f)) for f in functions]
    assert all(p is not None and len(p) == 64 for p in prints) and prints[0] != prints[1]
    assert source_fingerprint(Wrapper(functions[0])) == prints[0]  # stable for the same code


@pytest.mark.slow  # two sandbox runs per model, each starting Python and torch: about 40 s to 100 s
def test_a_code_submission_gets_log_rma_from_the_zero_shot_model_of_a_zoo_layout(tmp_path, geco_dir,
                                                                                   bert_tokenizer) -> None:
    """The queue's model set holds one zoo-layout model (<config>/<regime>/seed0); the zero-shot model of its base
    sits at <config>/ZS/seed0 in the zoo, not in the set. The submission is run on it too, so its record has log
    RMA (before, the worker looked among the set and next to the model only, and the record had none)."""
    from submissions import RequestStore, submit_file
    from submissions.sandbox import SandboxLimits, sandbox_status
    from submissions.worker import WorkerConfig, process_queue
    from tests.test_submissions_sandbox import EXAMPLE

    zoo = tmp_path / "zoo" / "binary_all"
    for regime, folder in write_tiny_zoo(tmp_path / "flat", bert_tokenizer).items():
        (zoo / regime).mkdir(parents=True)
        Path(folder).rename(zoo / regime / "seed0")
    requests = RequestStore(tmp_path / "requests")
    meta = {"authors": "Ada", "description": "d", "license": "MIT", "contact": "ada@example.org",
            "name": "gradient_norm", "version": "1.0.0"}
    request = submit_file(requests, "code", meta, EXAMPLE)
    config = WorkerConfig(model_paths=[str(zoo / "CE" / "seed0")], configs=["binary_all"],
                          results_location=str(tmp_path / "results"), data_dir=str(geco_dir),
                          settings=EvaluationSettings(max_groups=2, bootstrap=10, filter="none", properties=False,
                                                      faithfulness=False, data_dir=str(geco_dir)),
                          checkpoint_dir=str(tmp_path / "ckpt"), unsafe_no_sandbox=not sandbox_status()[0],
                          limits=SandboxLimits(memory_bytes=3 << 30, cpu_seconds=120, wall_seconds=180))
    assert process_queue(requests, config) == {request.request_id: "FINISHED"}
    (record,) = _explainer_records(tmp_path / "results")
    assert record["explainer"]["source"] == "submission"
    assert record["model"]["zero_shot_reference"] is not None
    assert record["model"]["zero_shot_reference_source"] == "submission"
    assert record["metrics"]["relative_mass_accuracy"]["value"] is not None

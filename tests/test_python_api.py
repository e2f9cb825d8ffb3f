"""The Python front door (gecobench.evaluate / load_results / Results): the CLI's numbers on a model object, every
explainer form, clear errors for bad input, the table of a store."""

from __future__ import annotations

import inspect
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import (
    GRADIENT_NORM_SOURCE,
    MA_ONLY,
    REPO_ROOT,
    TINY_PROTOCOL,
    cli_flags,
    imported_plugin,
    make_tiny_bert_classifier,
)
from tolerances import ulp_tolerance

import gecobench
from gecobench.explainers.base import Explainer

torch.set_num_threads(1)

# A user's explainer as a plain function, and the same function registered for the command line (--import).
PLUGIN_SOURCE = GRADIENT_NORM_SOURCE + '''

@register_explainer
class GradientNorm(Explainer):
    name = "gradient_norm"
    version = "0.1"

    def explain(self, model, tokenizer, words, targets):
        return gradient_norm(model, tokenizer, words, targets)
'''

#: fast protocol settings, the CLI's and the front door's spelling (the front door's max_groups is max_sentences)
FAST_CLI = [*cli_flags({**TINY_PROTOCOL, **MA_ONLY}), "--quiet"]
FAST = {"max_sentences" if k == "max_groups" else k: v for k, v in TINY_PROTOCOL.items()}
FAST.update(MA_ONLY, progress=False)
#: MA and log RMA are float64 means of word-score shares computed from float32 attributions
TOLERANCE = ulp_tolerance(np.float32, 1.0)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    with imported_plugin(tmp_path_factory.mktemp("plugin"), "frontdoor_plugin", PLUGIN_SOURCE) as found:
        yield found


@pytest.fixture(scope="module")
def cli_store(tiny_models, plugin, geco_dir, tmp_path_factory) -> Path:
    """`gecobench evaluate` of saliency and the registered user explainer on the CE checkpoint (its ZS checkpoint
    lies next to it: the RMA reference)."""
    from gecobench.cli.evaluate import main

    root = tmp_path_factory.mktemp("cli")
    code = main(["--explainers", "saliency", "gradient_norm", "--models", tiny_models["CE"], "--configs", "binary_all",
                 "--data-dir", str(geco_dir), "--results", str(root / "store"), "--checkpoint-dir", str(root / "ck"),
                 "--import", str(plugin[1]), *FAST_CLI])
    assert code == 0
    return root / "store"


def _by_name(records: list[dict]) -> dict[str, dict]:
    return {r["explainer"]["name"]: r for r in records}


def _metric(record: dict, name: str) -> float:
    return record["metrics"][name]["value"]


def test_front_door_on_a_model_object_with_a_function_gives_the_cli_numbers(tiny_models, plugin, cli_store, geco_dir,
                                                                             bert_tokenizer) -> None:
    from transformers import BertForSequenceClassification

    cli = _by_name(gecobench.load_results(cli_store).records)
    model = BertForSequenceClassification.from_pretrained(tiny_models["CE"])
    zero_shot = BertForSequenceClassification.from_pretrained(tiny_models["ZS"])
    model.train()  # the front door evaluates without dropout and gives the model back as it was
    results = gecobench.evaluate(model, bert_tokenizer, explainers=["saliency", plugin[0].gradient_norm],
                                 config="binary_all", zero_shot=zero_shot, data_dir=geco_dir, **FAST)
    assert model.training
    ours = _by_name(results.records)
    assert set(ours) == set(cli) == {"saliency", "gradient_norm"}
    for name in ours:
        assert ours[name]["counts"]["n_scored"] == cli[name]["counts"]["n_scored"] == 12
        for metric in ("mass_accuracy", "relative_mass_accuracy"):
            assert _metric(ours[name], metric) is not None, (name, metric)
            assert _metric(ours[name], metric) == pytest.approx(_metric(cli[name], metric), abs=TOLERANCE)
        for group in ("female", "male"):
            assert ours[name]["groups"][group]["mass_accuracy"] == pytest.approx(
                cli[name]["groups"][group]["mass_accuracy"], abs=TOLERANCE)
    # the model object is recorded as what it is: no zoo regime, its own fingerprint, the zero-shot reference named
    assert ours["saliency"]["model"]["regime"] == "user"
    assert ours["saliency"]["model"]["checkpoint_sha256"] != cli["saliency"]["model"]["checkpoint_sha256"]
    assert ours["saliency"]["model"]["zero_shot_reference"] == "zero-shot reference"
    # the function's version is its source's fingerprint, so an edited function is a new explainer
    assert ours["gradient_norm"]["explainer"]["version"].startswith("src-")


def test_front_door_on_a_zoo_folder_writes_the_cli_records(tiny_models, plugin, cli_store, geco_dir) -> None:
    """A zoo folder and registered names are the CLI's run itself: the same record ids (same identity)."""
    results = gecobench.evaluate(tiny_models["CE"], explainers=["saliency", "gradient_norm"], data_dir=geco_dir, **FAST)
    cli = _by_name(gecobench.load_results(cli_store).records)
    for name, record in _by_name(results.records).items():
        assert record["record_id"] == cli[name]["record_id"]
        assert _metric(record, "mass_accuracy") == pytest.approx(_metric(cli[name], "mass_accuracy"), abs=TOLERANCE)


def test_every_explainer_form_runs_and_captum_saliency_is_the_builtin(tiny_models, geco_dir, bert_tokenizer) -> None:
    from captum.attr import IntegratedGradients, Saliency

    class Constant(Explainer):
        name = "constant"
        version = "1"

        def explain(self, model, tokenizer, words, targets):
            return [np.ones(len(w)) for w in words]

    model = make_tiny_bert_classifier(seed=5)
    results = gecobench.evaluate(model, bert_tokenizer,
                                 explainers=["saliency", Saliency, IntegratedGradients, Constant(), "uniform_random",
                                             lambda model, tokenizer, words, targets: [np.arange(len(w), dtype=float)
                                                                                       for w in words]],
                                 data_dir=geco_dir, **FAST)
    records = _by_name(results.records)
    assert set(records) == {"saliency", "captum_saliency", "captum_integrated_gradients", "constant",
                            "uniform_random", "lambda"}
    for name, record in records.items():
        assert 0.0 <= _metric(record, "mass_accuracy") <= 1.0, name
    # Captum's Saliency at the engine's attribution point, folded by the engine's rule, is the built-in saliency
    assert _metric(records["captum_saliency"], "mass_accuracy") == pytest.approx(
        _metric(records["saliency"], "mass_accuracy"), abs=TOLERANCE)
    # constant scores put on the ground truth the share of words it has: not what saliency gives
    assert _metric(records["constant"], "mass_accuracy") != pytest.approx(_metric(records["saliency"], "mass_accuracy"))
    # with no zero-shot model, log RMA is undefined and says why
    rma = records["saliency"]["metrics"]["relative_mass_accuracy"]
    assert rma["value"] is None and "zero-shot" in rma["reason"]


def test_table_show_and_save(tiny_models, geco_dir, bert_tokenizer, tmp_path) -> None:
    results = gecobench.evaluate(make_tiny_bert_classifier(seed=2), bert_tokenizer,
                                 explainers=["saliency", "input_x_gradient"], data_dir=geco_dir, **FAST)
    table = results.to_pandas()
    assert list(table["explainer"]) == [r["explainer"]["name"] for r in results.records]
    for column in ("mass_accuracy.value", "mass_accuracy.ci_low", "mass_accuracy.ci_high",
                   "mass_accuracy.female.value", "mass_accuracy.male_minus_female.value",
                   "mass_accuracy.male_minus_female.ci_low"):
        assert table[column].dtype == np.float64, column
    for i, record in enumerate(results.records):
        gap = record["by_gender"]["metrics"]["mass_accuracy"]["gaps"]["male_minus_female"]["value"]
        assert table["mass_accuracy.male_minus_female.value"].iloc[i] == pytest.approx(gap)
    # one sentence: its words as a heat map with the ground truth, one row per explainer; text when printed
    view = results.show(1)
    assert len(view.rows) == 2 and len(view.words) == len(view.ground_truth) == len(view.rows[0]["attributions"])
    assert any(view.ground_truth)
    page = view._repr_html_()
    assert "saliency" in page and "input_x_gradient" in page and "ground truth" in page
    assert all(word.split()[0] in page for word in view.words if word.isalpha())
    text = str(view)
    truth_word = view.words[view.ground_truth.index(1)]
    assert f"*{truth_word}" in text and "saliency" in text
    with pytest.raises(IndexError, match="out of range"):
        results.show(10_000)
    # saved: the validated records, read back the same; saving again writes nothing
    written = results.save(tmp_path / "store")
    assert sorted(written) == sorted(r["record_id"] for r in results.records)
    assert results.save(tmp_path / "store") == []
    again = gecobench.load_results(tmp_path / "store")
    assert again.warnings == []
    assert {r["record_id"]: r for r in again.records} == {r["record_id"]: r for r in results.records}
    by_explainer = lambda rows: sorted(rows, key=lambda row: row["explainer"])  # the store's order is by record id
    assert by_explainer(again.show(1).rows) == by_explainer(view.rows)


def test_load_results_table_has_float_columns_equal_to_the_records(cli_store) -> None:
    loaded = gecobench.load_results(cli_store)
    table = loaded.to_pandas()
    assert len(table) == len(loaded.records) == 2
    assert table["record_id"].tolist() == [r["record_id"] for r in loaded.records]
    for column in ("explainer", "explainer_version", "regime", "base_model", "config", "checkpoint_sha256"):
        assert column in table.columns
    checked = 0
    for i, record in enumerate(loaded.records):
        for metric, block in record["metrics"].items():
            for field in ("value", "ci_low", "ci_high"):
                column = f"{metric}.{field}"
                assert table[column].dtype == np.float64, column
                expected = block.get(field)
                if isinstance(expected, (int, float)):
                    assert table[column].iloc[i] == expected, column
                    checked += 1
                else:
                    assert math.isnan(table[column].iloc[i]), column
    assert checked >= 6


def test_bad_inputs_are_refused_naming_what_is_wrong(tiny_models, geco_dir, bert_tokenizer) -> None:
    from transformers import BertConfig, BertModel

    model = make_tiny_bert_classifier(seed=1)
    run = lambda **kw: gecobench.evaluate(**{"model": model, "tokenizer": bert_tokenizer, "data_dir": geco_dir,
                                             **FAST, **kw})
    with pytest.raises(ValueError, match="unknown explainer 'salency'.*saliency"):
        run(explainers=["salency"])
    with pytest.raises(ValueError, match="unknown parameter 'nsteps'.*n_steps"):
        run(explainers=["integrated_gradients:nsteps=8"])
    with pytest.raises(ValueError, match="given twice"):
        run(explainers=["saliency", "saliency"])
    with pytest.raises(ValueError, match=r"'one_short'.*expected \d+ word scores"):
        def one_short(model, tokenizer, words, targets):
            return [np.ones(len(w) - 1) for w in words]
        run(explainers=[one_short])
    with pytest.raises(TypeError, match="expected a built-in name"):
        run(explainers=[42])
    encoder = BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64))
    with pytest.raises(ValueError, match="BertModel is not a sequence classifier"):
        run(model=encoder)
    with pytest.raises(TypeError, match="transformers model object"):
        run(model=42)
    with pytest.raises(FileNotFoundError, match="no-such-owner/no-such-model"):
        run(model="no-such-owner/no-such-model", tokenizer=None)
    with pytest.raises(ValueError, match="regime is 'CE', not 'ZS'"):
        run(zero_shot=tiny_models["CE"])


def test_the_front_door_default_filter_is_the_clis() -> None:
    from gecobench.evaluation.filters import DEFAULT_FILTER

    assert inspect.signature(gecobench.evaluate).parameters["filter"].default == DEFAULT_FILTER


def test_import_gecobench_stays_cheap() -> None:
    code = ("import sys, gecobench; gecobench.Results; gecobench.evaluate; "
            "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'captum') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True,
                         cwd=REPO_ROOT, check=True, env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})
    assert json.loads(out.stdout) == []
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        gecobench.evaluat  # noqa: B018


def test_records_come_in_the_order_the_explainers_were_given(geco_dir, bert_tokenizer) -> None:
    order = ["uniform_random", "input_x_gradient", "saliency"]
    results = gecobench.evaluate(make_tiny_bert_classifier(seed=6), bert_tokenizer, explainers=order,
                                 data_dir=geco_dir, **FAST)
    assert [r["explainer"]["name"] for r in results.records] == order
    assert list(results.to_pandas()["explainer"]) == order


def test_a_transformers_folder_model_info_and_the_papers_filter(geco_dir, bert_tokenizer, tmp_path) -> None:
    """A transformers model folder (no zoo metadata) is a model object loaded from it; ``model_info`` says what it
    is; the default (paper's) filter runs on a model object: its shared subset is the groups it gets right."""
    folder = tmp_path / "my-classifier"
    make_tiny_bert_classifier(seed=7).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    fast = {**FAST}
    fast.pop("filter")
    results = gecobench.evaluate(folder, explainers=["saliency"], data_dir=geco_dir,
                                 model_info={"regime": "CE", "base_model": "tiny-bert", "seed": 7}, **fast)
    (record,) = results.records
    assert (record["model"]["regime"], record["model"]["base_model"], record["model"]["seed"]) == ("CE", "tiny-bert", 7)
    assert record["model"]["name"] == "my-classifier"
    assert record["protocol"]["filter"] == "paper" and record["filter"]["name"] == "paper"
    counts = record["counts"]
    assert counts["n_scored"] + counts["n_filtered_out"] == counts["n_sentences"] == 12
    if counts["n_scored"]:
        assert record["model"]["accuracy_on_scored"] == 1.0
    else:  # a random model may get no group right in both variants: then there is nothing to show
        assert record["metrics"]["mass_accuracy"]["value"] is None
        with pytest.raises(ValueError, match="no per-sentence scores"):
            results.show(0)
    with pytest.raises(ValueError, match="num_labels=3 but the model has 2 classes"):
        gecobench.evaluate(folder, explainers=["saliency"], data_dir=geco_dir, model_info={"num_labels": 3}, **fast)

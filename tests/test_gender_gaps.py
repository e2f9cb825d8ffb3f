"""Every metric by gender: the ``by_gender`` block of a record (per-group values, signed gaps with paired intervals),
recomputed here from the run's own attributions with each metric's function; the synthetic case of one metric
worse for one gender; old records without the block; the CLI and Space views of the gaps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier, write_tiny_zoo
from tolerances import ulp_tolerance

from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.by_gender import GenderBreakdown, ScoredSentences
from gecobench.evaluation.checkpoints import CheckpointStore
from gecobench.evaluation.data import load_split
from gecobench.evaluation.faithfulness import FAITHFULNESS_METRICS, faithfulness_scores, score_faithfulness
from gecobench.evaluation.leaderboard import explainer_rows, gender_rows, leaderboard_text
from gecobench.evaluation.leaderboard import main as leaderboard_main
from gecobench.evaluation.modelling import load_model
from gecobench.evaluation.properties import score_agreement, score_properties
from gecobench.evaluation.runner import spec_checkpoint_key
from gecobench.evaluation.scoring import score_correctness
from gecobench.formatting import format_number
from gecobench.gender import GAP_KEYS, GAP_PAIRS, METRIC_SYMBOLS, gap_key, gender_value
from gecobench.metrics import METRICS_META
from gecobench.metrics import properties as prop
from gecobench.metrics import ranking as rank
from gecobench.metrics.mass_accuracy import mass_accuracy_per_sentence
from gecobench.metrics.relative_mass_accuracy import relative_mass_accuracy
from gecobench.records import RecordValidationError, load_stored_record, validate_record
from gecobench.store import LocalStore

torch.set_num_threads(1)
# Metrics in [-1, 1] summarised in float64 from the same per-sentence arrays. The faithfulness values are recomputed
# on the model, in this process, on the same rows in the same order as the run (one thread): the same kernels, so
# the same float64 tolerance holds for them.
F64 = ulp_tolerance(np.float64, 1.0)
EXPLAINERS = ("saliency", "input_x_gradient")


def _settings(geco_dir: Path, **extra) -> EvaluationSettings:
    # 4 source sentences in chunks of 2; properties and faithfulness on the first 2 only (a real subsample)
    base = {"data_dir": str(geco_dir), "filter_correct": False, "max_groups": 4, "chunk_size": 2, "bootstrap": 60,
            "batch_size": 4, "properties_max_groups": 2, "faithfulness_max_groups": 2}
    return EvaluationSettings(**{**base, **extra})


@pytest.fixture(scope="module")
def binary_run(tmp_path_factory, bert_tokenizer, geco_dir):
    """A tiny CE model (its ZS reference beside it) explained by two built-ins on binary_all."""
    root = tmp_path_factory.mktemp("gender_run")
    zoo = write_tiny_zoo(root / "models", bert_tokenizer)
    settings = _settings(geco_dir)
    run_evaluation(list(EXPLAINERS), [zoo["CE"]], ["binary_all"], settings, store_location=str(root / "store"),
                   checkpoint_dir=root / "ck", progress=False)
    report = LocalStore(root / "store").read_all("explainer_score")
    assert report.warnings == []
    records = {r["explainer"]["name"]: r for r in report.documents}
    return {"root": root, "model": zoo["CE"], "settings": settings, "records": records}


def _chunks(checkpoints: Path, explainer: str) -> list[dict]:
    """The model's own chunk checkpoints of one explainer (rows and scores of every kind), in chunk order."""
    key = spec_checkpoint_key(explainer)
    files = [p for p in CheckpointStore(checkpoints).chunk_files() if p.parent.name == key]
    return [json.loads(p.read_text()) | {"chunk": int(p.stem.split("-")[1])} for p in sorted(files)]


def _by_group(values: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    return {group: values[labels == label] for label, group in enumerate(("female", "male", "non-binary"))
            if (labels == label).any()}


def _expected_per_sentence(run: dict, split, explainer: str) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each metric's per-sentence values computed here, from the checkpointed attributions, with the metric's own
    function: ``{metric: (values, labels, sources)}`` on the sentences the metric is defined on."""
    settings, chunks = run["settings"], _chunks(run["root"] / "ck", explainer)
    other = _chunks(run["root"] / "ck", next(e for e in EXPLAINERS if e != explainer))

    def gather(selected: list[dict], kind: str) -> list[np.ndarray]:
        return [np.asarray(s, dtype=np.float64) for c in selected for s in c["scores"][kind]]

    def rows_of(selected: list[dict]) -> tuple[list[int], np.ndarray, np.ndarray]:
        rows = [i for c in selected for i in c["rows"]]
        return rows, np.array([split.rows[i].label for i in rows]), np.array([split.rows[i].sentence_id for i in rows])

    rows, labels, sources = rows_of(chunks)
    truth = [list(split.rows[i].ground_truth) for i in rows]
    main = gather(chunks, "main")
    ma = mass_accuracy_per_sentence(main, truth)
    reference_ma = mass_accuracy_per_sentence(gather(chunks, "reference"), truth)
    out = {"mass_accuracy": (ma, labels, sources),
           "relative_mass_accuracy": (relative_mass_accuracy(list(ma), list(reference_ma))["log_rma"], labels, sources),
           "methods_agreement": (prop.methods_agreement_per_sentence(main, [gather(other, "main")]), labels, sources)}
    sub = [c for c in chunks if c["chunk"] * settings.chunk_size < settings.properties_max_groups]
    sub_rows, sub_labels, sub_sources = rows_of(sub)
    sub_main, sub_truth = gather(sub, "main"), [list(split.rows[i].ground_truth) for i in sub_rows]
    for name, values in {
        "model_randomisation_check": prop.model_randomisation_check_per_sentence(sub_main, gather(sub, "randomised")),
        "small_noise_check": prop.small_noise_check_per_sentence(sub_main, gather(sub, "noisy")),
        "label_difference": prop.label_difference_per_sentence(sub_main, gather(sub, "other_target")),
        "sparsity": prop.sparsity_per_sentence(sub_main),
        "covariate_complexity": prop.covariate_complexity_per_sentence(sub_main),
        "relevance_rank_accuracy": rank.relevance_rank_accuracy_per_sentence(sub_main, sub_truth),
        "auprc": rank.auprc_per_sentence(sub_main, sub_truth),
    }.items():
        out[name] = (values, sub_labels, sub_sources)
    # faithfulness recomputed on the model itself (the same subsample: the first faithfulness_max_groups)
    lm = load_model(run["model"])
    faithful = faithfulness_scores(lm.model, lm.tokenizer, [list(split.rows[i].words) for i in sub_rows],
                                   [split.rows[i].label for i in sub_rows], sub_main)
    for name in FAITHFULNESS_METRICS:
        out[name] = (np.array([getattr(f, name) for f in faithful]), sub_labels, sub_sources)
    return out


def _statistic(name: str, values: np.ndarray) -> float:
    defined = values[np.isfinite(values)]
    return float(np.median(defined) if name == "relative_mass_accuracy" else defined.mean())


def _assert_interval_holds(block: dict, where: str) -> None:
    assert block["ci_low"] is not None and block["ci_high"] is not None, where
    assert block["ci_low"] <= block["value"] <= block["ci_high"], where


@pytest.mark.parametrize("explainer", EXPLAINERS)
def test_every_metric_of_a_record_has_per_gender_values_and_gaps_recomputed_here(binary_run, geco_dir, explainer):
    record = binary_run["records"][explainer]
    validate_record(record)
    split = load_split("binary_all", "test", geco_dir)
    expected = _expected_per_sentence(binary_run, split, explainer)
    held = record["by_gender"]["metrics"]
    # every metric the record holds (the MA gaps themselves are gaps, not metrics) has a per-gender entry
    scored = {k for k, v in record["metrics"].items() if v.get("value") is not None and not k.startswith("mass_accuracy_gap")}
    assert set(held) == scored == set(expected)
    for name, (values, labels, sources) in expected.items():
        entry = held[name]
        tolerance = F64
        groups = _by_group(values, labels)
        assert set(entry["groups"]) == {"female", "male"} == set(groups), name
        for group, group_values in groups.items():
            block = entry["groups"][group]
            assert block["value"] == pytest.approx(_statistic(name, group_values), abs=tolerance), (name, group)
            assert block["n_scored"] == int(np.isfinite(group_values).sum()) and block["n_undefined"] == 0, name
            _assert_interval_holds(block, f"{name}/{group}")
        # the gap: male − female of the per-gender values (every sentence is defined, so every pair takes part)
        gap = entry["gaps"]["male_minus_female"]
        assert set(entry["gaps"]) == {"male_minus_female"}  # a binary config has no non-binary group
        assert gap["value"] == pytest.approx(_statistic(name, groups["male"]) - _statistic(name, groups["female"]),
                                             abs=2 * tolerance), name
        assert gap["value"] == pytest.approx(entry["groups"]["male"]["value"] - entry["groups"]["female"]["value"],
                                             abs=2 * F64), name
        assert gap["n_source_sentences"] == len(set(sources.tolist())), name
        _assert_interval_holds(gap, f"{name} gap")
        # the sentences are the metric's own: the properties and faithfulness subsamples are said so
        subsample = {"properties": "properties", "faithfulness": "faithfulness"}
        kind = ("faithfulness" if name in FAITHFULNESS_METRICS else
                None if name in ("mass_accuracy", "relative_mass_accuracy", "methods_agreement") else "properties")
        assert entry["sentences"]["subsample"] == subsample.get(kind), name
        assert entry["sentences"]["n_sentences"] == len(values), name
        assert entry["sentences"]["n_source_sentences"] == len(set(sources.tolist())), name
        assert entry["sentences"]["max_sentence_groups"] == (2 if kind else None), name
        assert entry["statistic"] == ("median" if name == "relative_mass_accuracy" else "mean")
        assert entry["direction"] == METRICS_META[name]["direction"], name
    # the per-gender MA is the record's older MA blocks, and the overall MA the evaluate module's answer
    ma = held["mass_accuracy"]
    for group in ("female", "male"):
        assert ma["groups"][group]["value"] == record["groups"][group]["mass_accuracy"]
    assert ma["gaps"]["male_minus_female"]["value"] == record["metrics"]["mass_accuracy_gap"]["value"]
    assert ma["gaps"]["male_minus_female"]["ci_low"] == record["metrics"]["mass_accuracy_gap"]["ci_low"]
    from gecobench.evaluation.scoring import load_metric_module

    chunks = _chunks(binary_run["root"] / "ck", explainer)
    module = load_metric_module("mass_accuracy").compute(
        attributions=[s for c in chunks for s in c["scores"]["main"]],
        ground_truth=[list(split.rows[i].ground_truth) for c in chunks for i in c["rows"]])
    assert record["metrics"]["mass_accuracy"]["value"] == pytest.approx(module["mass_accuracy"], abs=F64)


def test_a_non_binary_config_has_the_gaps_to_non_binary(tmp_path, bert_tokenizer, geco_dir):
    folder = tmp_path / "CE3"
    make_tiny_bert_classifier(num_labels=3, seed=2).save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    (folder / "gecobench_model.json").write_text(json.dumps({
        "regime": "CE", "base_model": "tiny-bert", "base_revision": None, "geco_config": "nonbinary_all", "seed": 0,
        "num_labels": 3}))
    settings = _settings(geco_dir, faithfulness=False, bootstrap=40)
    run_evaluation(["saliency", "uniform_random"], [str(folder)], ["nonbinary_all"], settings,
                   store_location=str(tmp_path / "store"), checkpoint_dir=tmp_path / "ck", progress=False)
    records = {r["explainer"]["name"]: r for r in LocalStore(tmp_path / "store").read_all("explainer_score").documents}
    record = records["saliency"]
    split = load_split("nonbinary_all", "test", geco_dir)
    chunks = _chunks(tmp_path / "ck", "saliency")
    rows = [i for c in chunks for i in c["rows"]]
    ma = mass_accuracy_per_sentence([np.asarray(s) for c in chunks for s in c["scores"]["main"]],
                                    [list(split.rows[i].ground_truth) for i in rows])
    labels = np.array([split.rows[i].label for i in rows])
    for name, entry in record["by_gender"]["metrics"].items():
        assert set(entry["groups"]) == {"female", "male", "non-binary"}, name
        assert set(entry["gaps"]) == set(GAP_KEYS), name
        for minuend, subtrahend in GAP_PAIRS:
            gap = entry["gaps"][gap_key(minuend, subtrahend)]
            assert gap["value"] == pytest.approx(
                entry["groups"][minuend]["value"] - entry["groups"][subtrahend]["value"], abs=2 * F64), name
            _assert_interval_holds(gap, f"{name} {minuend}-{subtrahend}")
    groups = _by_group(ma, labels)
    ma_gaps = record["by_gender"]["metrics"]["mass_accuracy"]["gaps"]
    assert ma_gaps["male_minus_nonbinary"]["value"] == pytest.approx(groups["male"].mean() - groups["non-binary"].mean(),
                                                                     abs=2 * F64)
    assert ma_gaps["female_minus_nonbinary"]["value"] == pytest.approx(
        groups["female"].mean() - groups["non-binary"].mean(), abs=2 * F64)
    # the headline blocks carry the same numbers
    assert record["metrics"]["mass_accuracy_gap_male_minus_nonbinary"]["value"] == ma_gaps["male_minus_nonbinary"]["value"]
    # a model-independent baseline explains every variant alike: no gap in anything computed from its scores alone
    baseline = records["uniform_random"]["by_gender"]["metrics"]["sparsity"]["gaps"]
    assert all(abs(gap["value"]) < 1.0 for gap in baseline.values())


def test_one_metric_worse_for_one_gender_gives_a_gap_there_only():
    """60 source sentences whose male and female variants get the same attributions on the model, its
    re-initialised copy, the other class and the reference; only under small noise does the female variant's
    explanation move more. Every metric's gap is exactly 0 but the small-noise check's, which is negative
    (male − female: the female explanations are less stable) with an interval excluding 0."""
    rng = np.random.default_rng(5)
    n_sources, n_words = 60, 6
    labels, sources, main, randomised, other, reference, noisy, truth = [], [], [], [], [], [], [], []
    for source in range(n_sources):
        scores = rng.uniform(0.05, 1.0, n_words)
        shared = {"randomised": rng.uniform(0.05, 1.0, n_words), "other": rng.uniform(0.05, 1.0, n_words),
                  "reference": rng.uniform(0.05, 1.0, n_words)}
        for label in (0, 1):  # female, male
            labels.append(label)
            sources.append(source)
            truth.append([1, 1] + [0] * (n_words - 2))
            main.append(scores)
            randomised.append(shared["randomised"])
            other.append(shared["other"])
            reference.append(shared["reference"])
            shake = 0.6 if label == 0 else 0.05
            noisy.append(scores * rng.uniform(1 - shake, 1 + shake, n_words))
    settings = EvaluationSettings(bootstrap=300, seed=0)
    breakdown = GenderBreakdown(settings.bootstrap, settings.seed)
    view = breakdown.on(ScoredSentences.of(labels, sources))
    score_correctness(main, truth, labels, reference, None, settings.bootstrap, settings.seed,
                      source_sentences=sources, by_gender=view)
    score_properties(main, truth, randomised, noisy, other, settings, by_gender=view)
    per_sentence: dict[str, np.ndarray] = {}
    score_agreement({"a": main, "b": randomised}, truth, settings, per_sentence)
    view.add("methods_agreement", per_sentence["a"])
    same = [float(p) for p in rng.uniform(0.5, 0.9, n_sources) for _ in (0, 1)]  # faithfulness alike per pair
    part = {name: same for name in FAITHFULNESS_METRICS} | {
        "full_probability": same, "comprehensiveness_curve": [[v] for v in same],
        "sufficiency_curve": [[v] for v in same]}
    score_faithfulness([part], [1.0], settings.bootstrap, settings.seed, by_gender=view)
    block = breakdown.block()
    validate_record_block(block)
    assert set(block["metrics"]) == set(METRIC_SYMBOLS)
    for name, entry in block["metrics"].items():
        gap = entry["gaps"]["male_minus_female"]
        if name == "small_noise_check":
            assert gap["value"] < 0 and gap["ci_high"] < 0, gap
            assert entry["groups"]["female"]["value"] > entry["groups"]["male"]["value"]
        else:
            assert gap["value"] == 0.0 and gap["ci_low"] == 0.0 and gap["ci_high"] == 0.0, (name, gap)


def validate_record_block(block: dict) -> None:
    """The block passes the record schema (inside a minimal valid record)."""
    from _sample_records import make_explainer_record

    record = make_explainer_record("saliency", "CE", "binary_all", "base-a") | {"by_gender": block}
    validate_record(record)


def test_the_schema_checks_the_block(binary_run):
    record = json.loads(json.dumps(binary_run["records"]["saliency"]))
    broken = json.loads(json.dumps(record))
    broken["by_gender"]["metrics"]["mass_accuracy"]["groups"]["female"]["value"] = 1.5
    with pytest.raises(RecordValidationError, match="by_gender"):
        validate_record(broken)
    broken = json.loads(json.dumps(record))
    broken["by_gender"]["metrics"]["sparsity"]["gaps"]["male_minus_males"] = {"value": 0.0}
    with pytest.raises(RecordValidationError, match="by_gender"):
        validate_record(broken)
    broken = json.loads(json.dumps(record))
    del broken["by_gender"]["metrics"]["auprc"]["sentences"]
    with pytest.raises(RecordValidationError, match="sentences"):
        validate_record(broken)
    # on read, too: a stored record with a broken block is refused
    text = json.dumps(broken)
    with pytest.raises(RecordValidationError):
        load_stored_record(text)
    assert load_stored_record(json.dumps(record))["by_gender"] == record["by_gender"]


# ---------------------------------------------------------------- old records, the CLI and the Space


# two records of the 0.5.0 reference store (seed 0, Integrated Gradients), kept as written then:
# the store itself holds the current major version's records since the first 1.0 seed was promoted
OLD_STORE = Path(__file__).parent / "fixtures" / "store-0.5.0"


def _reference_record(config: str) -> dict:
    for path in sorted((OLD_STORE / "explainer_score").glob("*.json")):
        record = load_stored_record(path.read_text(encoding="utf-8"))
        if record["dataset"]["config"] == config and record["explainer"]["name"] == "integrated_gradients":
            return record
    raise AssertionError(f"no {config} record in {OLD_STORE}")


def test_old_records_without_the_block_still_read_and_show_their_ma_gaps():
    report = LocalStore(OLD_STORE).read_all("explainer_score")
    assert report.warnings == [] and len(report.documents) == 2
    assert {r["provenance"]["package_version"] for r in report.documents} == {"0.5.0"}
    assert not any("by_gender" in r for r in report.documents)  # written before the block existed
    old = _reference_record("nonbinary_all")
    rows = gender_rows([old])
    assert [row[5] for row in rows] == ["MA"]
    gap = old["metrics"]["mass_accuracy_gap_male_minus_nonbinary"]
    assert rows[0][11].startswith(format_number(gap["value"], 3, signed=True))
    assert rows[0][7].startswith(format_number(old["groups"]["female"]["mass_accuracy"]))
    assert explainer_rows([old])[0][3] == "integrated_gradients"

    from leaderboard_space import gaps, ranking

    table = gaps.gender_gaps([old])
    assert table["Metric"].tolist() == ["MA"]
    assert table.loc[0, "Gap female−non-binary"] == old["metrics"]["mass_accuracy_gap_female_minus_nonbinary"]["value"]
    main = ranking.model_ranking([old])
    assert main.loc[0, "Gap m−nb"] == gap["value"]
    assert main.loc[0, ranking.LARGEST_GAP] == max(abs(old["metrics"][k]["value"]) for k in (
        "mass_accuracy_gap", "mass_accuracy_gap_male_minus_nonbinary", "mass_accuracy_gap_female_minus_nonbinary"))
    binary = ranking.model_ranking([_reference_record("binary_all")])
    assert "Gap m−nb" not in binary.columns and ranking.LARGEST_GAP not in binary.columns


def test_the_cli_gap_view_shows_every_metric_with_its_gap(binary_run, capsys):
    store = binary_run["root"] / "store"
    text = leaderboard_text(LocalStore(store), gaps=True)
    record = binary_run["records"]["saliency"]
    for name, entry in record["by_gender"]["metrics"].items():
        symbol = METRIC_SYMBOLS[name]
        line = next(line for line in text.splitlines() if " saliency " in line and f" {symbol} " in line)
        digits = 2 if name == "relative_mass_accuracy" else 3
        gap = entry["gaps"]["male_minus_female"]
        assert f"{format_number(gap['value'], digits, signed=True)} [" in line, (name, line)
        assert f"[{format_number(gap['ci_low'], digits, signed=True)},{format_number(gap['ci_high'], digits, signed=True)}]" in line
    assert "male−female [95% CI]" in text and "first 2 (properties)" in text and "first 2 (faithfulness)" in text
    assert leaderboard_main(["--results", str(store), "--gaps", "--metric", "small_noise_check"]) == 0
    printed = capsys.readouterr().out
    table_rows = [line.split() for line in printed.splitlines() if line.startswith("binary_all ")]
    assert {row[5] for row in table_rows} == {"SNC"} and len(table_rows) == 2  # one per explainer
    with pytest.raises(ValueError, match="unknown metric"):
        gender_rows(list(binary_run["records"].values()), ["mass_acuracy"])


def test_the_space_gap_view_shows_every_gap_with_its_interval(binary_run, tmp_path):
    from leaderboard_space import gaps, sources
    from leaderboard_space.app import GAPS_VIEW, build_app, event_functions

    store = binary_run["root"] / "store"
    functions = event_functions(build_app(str(store), str(tmp_path / "requests"), show_reference=False))
    page = functions["open_page"](None, sources.USER, sources.PAPER_FILTER)
    cell = [u["value"] for u in functions["ranking_choices"](None, None, None, None, sources.USER, page[2]["value"])]
    styled, notes, files, _ = functions["ranking_view"](*cell, GAPS_VIEW, sources.USER, page[2]["value"])
    table = styled.data
    record = binary_run["records"]["saliency"]
    rows = table[table["Explainer"] == "saliency"].set_index("Metric")
    from leaderboard_space.tables import METRIC_LABELS

    assert set(rows.index) == {METRIC_LABELS[m] for m in record["by_gender"]["metrics"]}
    for name, entry in record["by_gender"]["metrics"].items():
        gap = entry["gaps"]["male_minus_female"]
        row = rows.loc[METRIC_LABELS[name]]
        assert row["Gap male−female"] == pytest.approx(gap["value"], abs=5e-4)  # shown rounded to 3 decimals
        assert row["Gap male−female 95% CI"] == f"[{format_number(gap['ci_low'])}, {format_number(gap['ci_high'])}]"
        assert row["female"] == pytest.approx(entry["groups"]["female"]["value"], abs=5e-4)
    assert "Gap male−non-binary" not in table.columns  # a binary config
    assert "Every metric by gender" in notes and len(files) == 2
    api = functions["gender_gaps_api"](*cell, sources.USER, page[2]["value"])
    assert api["headers"] == [str(c) for c in table.columns] and len(api["data"]) == len(table)
    # the best gap of each metric is the non-baseline row whose largest |gap| is smallest
    numbers = gaps.gender_gaps(list(binary_run["records"].values()))
    for metric, position in gaps.best_gap_rows(numbers).items():
        same = numbers[numbers["Metric"] == metric]
        assert numbers.loc[position, gaps.LARGEST] == same[gaps.LARGEST].min()
    assert gender_value(record, "sparsity", "gaps", "male_minus_female")["value"] == \
        record["by_gender"]["metrics"]["sparsity"]["gaps"]["male_minus_female"]["value"]


def test_the_paired_median_gap_is_the_median_over_the_drawn_source_sentences():
    """log RMA's gap is a difference of medians: each draw's medians equal np.median of the drawn clusters' values
    (with multiplicity), and the clusters drawn are those of the mean version for the same seed."""
    from gecobench.metrics.paired_bootstrap import clustered_difference, clustered_median_difference

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=41), rng.normal(size=41) + 0.4
    a[[4, 17]] = np.nan  # undefined: their clusters leave both sides
    clusters = [f"s{i}" for i in range(41)]
    result = clustered_median_difference(a, clusters, b, clusters, 400, 7)
    shared = np.flatnonzero(np.isfinite(a))
    assert result["n_clusters"] == result["n_a"] == result["n_b"] == 39
    assert result["value"] == np.median(a[shared]) - np.median(b[shared])
    draws = np.random.default_rng(7).integers(0, shared.size, size=(400, shared.size))
    brute = [np.median(a[shared[d]]) - np.median(b[shared[d]]) for d in draws]
    low, high = np.quantile(brute, [0.025, 0.975])
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((low, high), abs=F64)
    assert clustered_difference(a, clusters, b, clusters, 400, 7, statistic="median") == result
    with pytest.raises(ValueError, match="statistic"):
        clustered_difference(a, clusters, b, clusters, statistic="mode")

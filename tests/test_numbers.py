"""Numbers a researcher can trust: signed gender gaps with paired intervals, paired explainer
comparisons, common random numbers for the zero-shot reference, record identity, and no silent pooling."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from _sample_records import make_explainer_record
from conftest import write_tiny_zoo

from gecobench.evaluation import EvaluationSettings, run_evaluation
from gecobench.evaluation.leaderboard import explainer_rows, leaderboard_text
from gecobench.evaluation.modelling import training_fingerprint
from gecobench.evaluation.scoring import (
    gap_block,
    paired_comparisons,
    score_correctness,
)
from gecobench.formatting import format_number
from gecobench.metrics.paired_bootstrap import clustered_mean_difference, verdict
from gecobench.pooling import (
    across_seeds,
    distinguishing_fields,
    identity_fields,
    pooling_key,
)
from gecobench.records import explainer_score_identity, identity_mismatch, record_id_for
from gecobench.store import LocalStore
from leaderboard_space import tables

torch.set_num_threads(1)
EPS = np.finfo(np.float64).eps


# ---------------------------------------------------------------- the paired bootstrap


def test_paired_interval_is_narrower_than_resampling_each_side_alone() -> None:
    rng = np.random.default_rng(0)
    difficulty = rng.uniform(0.1, 0.9, 200)  # shared by both variants of a source sentence: a strong pairing
    male = np.clip(difficulty + 0.02 + rng.normal(0, 0.01, 200), 0, 1)
    female = np.clip(difficulty + rng.normal(0, 0.01, 200), 0, 1)
    sources = list(range(200))
    paired = clustered_mean_difference(male, sources, female, sources, 500, 1)
    assert paired["value"] == pytest.approx(male.mean() - female.mean(), abs=50 * EPS)
    assert paired["n_clusters"] == 200 and paired["ci_low"] > 0  # a 0.02 shift is detected when paired
    # unpaired: female variants carry their own ids, so each side is resampled on its own
    unpaired_low, unpaired_high = [], []
    for b in range(500):
        draw = np.random.default_rng(b)
        unpaired = male[draw.integers(0, 200, 200)].mean() - female[draw.integers(0, 200, 200)].mean()
        (unpaired_low if unpaired < paired["value"] else unpaired_high).append(unpaired)
    unpaired_width = np.quantile(unpaired_low + unpaired_high, 0.975) - np.quantile(unpaired_low + unpaired_high, 0.025)
    assert paired["ci_high"] - paired["ci_low"] < unpaired_width / 5


def test_paired_difference_by_hand_skips_undefined_and_unshared_sentences() -> None:
    # source 3 has no defined b value and source 4 no b at all: only sources 1 and 2 are compared
    out = clustered_mean_difference([0.9, 0.5, 0.7, 0.4], [1, 2, 3, 4], [0.4, 0.3, float("nan")], [1, 2, 3], 0, 0)
    assert out["value"] == pytest.approx((0.9 + 0.5) / 2 - (0.4 + 0.3) / 2)
    assert (out["n_clusters"], out["n_a"], out["n_b"], out["ci_low"]) == (2, 2, 2, None)
    assert clustered_mean_difference([0.5], [1], [0.5], [2], 10, 0)["value"] is None
    with pytest.raises(ValueError, match="clusters_a has 1 entries for 2 values_a"):
        clustered_mean_difference([0.5, 0.6], [1], [0.5], [1])
    with pytest.raises(ValueError, match="values_b: sentence 1 is infinite"):
        clustered_mean_difference([0.5], [1], [0.5, float("inf")], [1, 1])
    assert verdict({"ci_low": -0.1, "ci_high": 0.2}) == "tie"
    assert verdict({"ci_low": 0.1, "ci_high": 0.2}) == "higher"
    assert verdict({"ci_low": -0.3, "ci_high": -0.2}) == "lower"
    assert verdict({"ci_low": None, "ci_high": None}) is None


def test_swapping_the_sides_mirrors_value_and_interval() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.uniform(0, 1, 80), rng.uniform(0, 1, 80)
    sources = [i // 4 for i in range(80)]
    forward = clustered_mean_difference(a, sources, b, sources, 300, 2)
    backward = clustered_mean_difference(b, sources, a, sources, 300, 2)  # same seed: the same draws
    scale = 50 * EPS * max(1.0, float(np.abs(a).max()), float(np.abs(b).max()))
    assert backward["value"] == pytest.approx(-forward["value"], abs=scale)
    assert (backward["ci_low"], backward["ci_high"]) == pytest.approx((-forward["ci_high"], -forward["ci_low"]), abs=scale)
    assert forward["n_clusters"] == 20


# ---------------------------------------------------------------- the signed gap


def _paired_groups(n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Per-sentence MA of n (even) source sentences × (female, male) variants; male = female + shift + noise."""
    rng = np.random.default_rng(seed)
    female = rng.uniform(0.3, 0.7, n)
    noise = rng.normal(0, 0.05, n // 2)
    male = female + shift + np.concatenate([noise, -noise])  # noise of mean exactly 0: the gap is the shift
    per_sentence = np.empty(2 * n)
    per_sentence[0::2], per_sentence[1::2] = female, male
    labels = np.tile([0, 1], n)
    return per_sentence, labels, [i // 2 for i in range(2 * n)]


def test_gap_is_signed_male_minus_female_and_can_include_zero() -> None:
    per_sentence, labels, sources = _paired_groups(150, -0.08, 3)
    block = gap_block(per_sentence, labels, sources, "male", "female", 400, 0)
    expected = per_sentence[1::2].mean() - per_sentence[0::2].mean()
    assert block["value"] == pytest.approx(expected, abs=50 * EPS) and block["value"] < 0
    assert block["ci_low"] < block["value"] < block["ci_high"] < 0
    assert (block["definition"], block["n_source_sentences"]) == ("MA(male) − MA(female)", 150)
    # the other order is the mirror image, not the same unsigned number
    mirrored = gap_block(per_sentence, labels, sources, "female", "male", 400, 0)
    assert mirrored["value"] == pytest.approx(-block["value"], abs=50 * EPS)
    # no gap in the data: the interval includes 0 (an unsigned max − min gap never could)
    none = gap_block(*_paired_groups(150, 0.0, 4), "male", "female", 400, 0)
    assert none["ci_low"] < 0 < none["ci_high"]


def test_non_binary_configs_get_each_binary_group_minus_non_binary() -> None:
    truth = [[1, 0]] * 6
    scores = [np.array(s) for s in ([3.0, 1.0], [1.0, 1.0], [1.0, 3.0], [3.0, 1.0], [1.0, 1.0], [1.0, 3.0])]
    labels = [0, 1, 2, 0, 1, 2]  # female 0.75, male 0.5, non-binary 0.25 in both source sentences
    metrics, _, _ = score_correctness(scores, truth, labels, None, "none", 50, 0, source_sentences=[1, 1, 1, 2, 2, 2])
    assert metrics["mass_accuracy_gap"]["value"] == pytest.approx(0.5 - 0.75)
    assert metrics["mass_accuracy_gap_male_minus_nonbinary"]["value"] == pytest.approx(0.5 - 0.25)
    assert metrics["mass_accuracy_gap_female_minus_nonbinary"]["value"] == pytest.approx(0.75 - 0.25)
    assert metrics["mass_accuracy_gap_female_minus_nonbinary"]["definition"] == "MA(female) − MA(non-binary)"
    with pytest.raises(ValueError, match="source_sentences has 2 entries for 6 sentences"):
        score_correctness(scores, truth, labels, None, "none", 0, 0, source_sentences=[1, 2])


def test_paired_comparisons_mirror_and_mark_ties() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0.2, 0.8, 120)
    per = {"a 1": base + 0.1, "b 1": base + rng.normal(0, 0.02, 120), "c 1": base + rng.normal(0, 0.02, 120)}
    sources = [i // 2 for i in range(120)]
    out = paired_comparisons(per, sources, 300, 0)
    assert out["a 1"]["b 1"]["verdict"] == "higher" and out["b 1"]["a 1"]["verdict"] == "lower"
    assert out["b 1"]["a 1"]["value"] == -out["a 1"]["b 1"]["value"]
    assert out["b 1"]["a 1"]["ci_low"] == -out["a 1"]["b 1"]["ci_high"]
    assert out["b 1"]["c 1"]["verdict"] == "tie" and out["b 1"]["c 1"]["n_source_sentences"] == 60
    with pytest.raises(ValueError, match="not scored on the same 120 sentences"):
        paired_comparisons({"a": base, "b": base[:10]}, sources, 0, 0)


# ---------------------------------------------------------------- identity


def _record(**changes) -> dict:
    record = make_explainer_record("integrated_gradients", "CE", "binary_all", rng=random.Random(0))
    record["model"]["training_fingerprint"] = "aaaa"
    record["protocol"] = {"split": "test", "seed": 0, "filter": "all_gender_variants_correct",
                          "max_sentence_groups": None, "compared_explainers": ["integrated_gradients 1.0.0"]}
    for path, value in changes.items():
        section, _, name = path.partition("__")
        record[section][name] = value
    record["record_id"] = record_id_for(explainer_score_identity(record))
    return record


@pytest.mark.parametrize("change", [
    {"explainer__params": {"n_steps": 8}}, {"explainer__version": "2.0.0"}, {"model__seed": 1},
    {"model__training_fingerprint": "bbbb"}, {"model__base_revision": "sha256:1"}, {"dataset__split": "validation"},
    {"protocol__max_sentence_groups": 8}, {"protocol__filter": "none"},
    {"protocol__compared_explainers": ["integrated_gradients 1.0.0", "saliency 1.0.0"]},
])
def test_every_input_of_a_number_changes_the_record_id(change) -> None:
    assert _record(**change)["record_id"] != _record()["record_id"]


def test_an_edited_record_no_longer_matches_its_id() -> None:
    record = _record()
    assert identity_mismatch(record) is None
    edited = copy.deepcopy(record)
    edited["explainer"]["params"] = {"n_steps": 64}
    assert "not the hash of the record's identity" in identity_mismatch(edited)
    assert "cannot compute its identity" in identity_mismatch({"record_id": "x"})


def test_training_fingerprint_tracks_the_schedule_not_the_seed() -> None:
    info = {"regime": "CE", "seed": 0, "learning_rate": 2e-5, "schedule": {"epochs": 8, "batch_size": 32}}
    assert training_fingerprint({**info, "seed": 1}) == training_fingerprint(info)
    assert training_fingerprint({**info, "schedule": {"epochs": 2, "batch_size": 32}}) != training_fingerprint(info)
    assert training_fingerprint({**info, "learning_rate": 1e-4}) != training_fingerprint(info)


# ---------------------------------------------------------------- no silent pooling


def _ma(record: dict, value: float, low: float, high: float) -> dict:
    record["metrics"]["mass_accuracy"].update(value=value, ci_low=low, ci_high=high)
    return record


def test_only_seeds_are_pooled_and_every_other_difference_is_shown() -> None:
    seeds = [_ma(_record(model__seed=s, protocol__seed=s), v, v - 0.05, v + 0.05) for s, v in enumerate((0.6, 0.7, 0.8))]
    assert len({pooling_key(r) for r in seeds}) == 1 and len({r["record_id"] for r in seeds}) == 3
    tiny = _ma(_record(explainer__params={"n_steps": 8}, protocol__max_sentence_groups=8), 0.47, 0.3, 0.6)
    assert pooling_key(tiny) != pooling_key(seeds[0])
    other_model = _ma(_record(model__regime="C"), 0.3, 0.25, 0.35)
    records = [*seeds, tiny, other_model]

    summary = tables.explainer_summary(records)
    assert len(summary) == 3  # the tutorial's tiny run is not averaged into the demo's, nor C into CE
    pooled = summary[(summary["Regime"] == "CE") & (summary["Seeds"] == 3)].iloc[0]
    mean, low, high, n = across_seeds([0.6, 0.7, 0.8])
    half = 4.303 * 0.1 / np.sqrt(3)  # t(0.975, 2 dof) · sd / sqrt(n)
    assert (pooled["MA"], pooled["MA lo"], pooled["MA hi"]) == pytest.approx((0.7, 0.7 - half, 0.7 + half))
    assert (mean, low, high, n) == pytest.approx((0.7, 0.7 - half, 0.7 + half, 3))
    single = summary[summary["Seeds"] == 1].set_index("Regime")
    assert (single.loc["CE", "MA lo"], single.loc["CE", "MA hi"]) == (0.3, 0.6)  # one seed keeps its own interval
    assert "explainer.params.n_steps=8" in single.loc["CE", "Differs by"]
    assert "max_sentence_groups=8" in single.loc["CE", "Differs by"]
    assert "explainer.params.n_steps=default" in pooled["Differs by"]

    # the command line shows the same rows, the same differences and the number of seeds
    rows = explainer_rows(records)
    assert sorted(row[4] for row in rows) == ["1", "1", "3"]
    by_seeds = {row[4] + row[1]: row for row in rows}
    assert by_seeds["3CE"][5] == "0.700" and "max_sentence_groups=null" in by_seeds["3CE"][-1]
    assert "max_sentence_groups=8" in by_seeds["1CE"][-1]


def test_an_interval_across_two_seeds_is_cut_to_the_metric_s_range_everywhere_it_is_shown() -> None:
    """With two seeds the t-interval (t = 12.7) passes [0, 1] for MA; the Space's summary and ranking, the CLI and
    the comparison with the paper all show the interval cut to the metric's range, the mean unchanged."""
    from gecobench.paper_comparison import index_records, mean_index
    from gecobench.pooling import metric_bounds
    from leaderboard_space import ranking

    seeds = [_ma(_record(model__seed=s, protocol__seed=s), v, v - 0.05, v + 0.05) for s, v in enumerate((0.2, 0.9))]
    plain = across_seeds([0.2, 0.9])
    assert plain[1] < 0 and plain[2] > 1  # the plain interval says nothing
    assert across_seeds([0.2, 0.9], bounds=metric_bounds("mass_accuracy")) == pytest.approx((0.55, 0.0, 1.0, 2))
    assert across_seeds([0.50, 0.52, 0.54], bounds=(0.0, 1.0)) == across_seeds([0.50, 0.52, 0.54])  # inside: as is
    summary = tables.explainer_summary(seeds)
    assert (summary["MA"].iloc[0], summary["MA lo"].iloc[0], summary["MA hi"].iloc[0]) == pytest.approx((0.55, 0.0, 1.0))
    table = ranking.model_ranking(seeds)
    assert (table["MA lo"].iloc[0], table["MA hi"].iloc[0]) == pytest.approx((0.0, 1.0))
    row = explainer_rows(seeds)[0]
    assert "[0.000,1.000]" in " ".join(row).replace(" ", "")
    indices = {s: index_records(seeds, seed=s) for s in (0, 1)}
    cell = next(iter(mean_index(indices).values()))["metrics"]["mass_accuracy"]
    assert cell["value_seed_interval"] == pytest.approx((0.0, 1.0))
    # a gap is a difference of two MAs: its range is -1 … 1; a metric without a numeric range is not cut
    assert metric_bounds("mass_accuracy", "gaps") == (-1.0, 1.0) and metric_bounds("no_such_metric") is None
    with pytest.raises(ValueError, match="unknown part"):
        metric_bounds("mass_accuracy", "median")


def test_distinguishing_fields_compare_each_field_among_its_peers() -> None:
    a = identity_fields(_record())
    b = identity_fields(_record(explainer__name="saliency", explainer__params={"abs": True}))
    # saliency's parameters are not compared with integrated gradients' (different explainers)…
    assert distinguishing_fields([a, b]) == ["", ""]
    # …but a protocol difference is, across the whole view
    c = identity_fields(_record(explainer__name="saliency", protocol__filter="none"))
    assert distinguishing_fields([a, c]) == ["filter=all_gender_variants_correct", "filter=none"]
    # a digest (a data or subset fingerprint) is shown by its first 12 digits, as git shows commits
    d = identity_fields(_record(explainer__name="saliency", protocol__filter_subset_sha256="ab" * 32))
    e = identity_fields(_record(explainer__name="saliency", protocol__filter_subset_sha256="cd" * 32))
    assert distinguishing_fields([d, e]) == [f"filter_subset_sha256={'ab' * 6}…", f"filter_subset_sha256={'cd' * 6}…"]


def test_vs_best_marks_ties_from_the_recorded_paired_comparison() -> None:
    best = _ma(_record(), 0.7, 0.65, 0.75)
    close = _ma(_record(explainer__name="saliency"), 0.68, 0.63, 0.73)
    far = _ma(_record(explainer__name="lime"), 0.4, 0.35, 0.45)
    unrelated = _ma(_record(explainer__name="deeplift"), 0.5, 0.45, 0.55)
    best["comparisons"] = {"saliency 1.0.0": {"value": 0.02, "ci_low": -0.01, "ci_high": 0.05},
                           "lime 1.0.0": {"value": 0.3, "ci_low": 0.25, "ci_high": 0.35}}
    summary = tables.explainer_summary([best, close, far, unrelated]).set_index("Explainer")
    assert summary["vs best"].to_dict() == {"integrated_gradients": "best", "saliency": "tie", "lime": "lower",
                                            "deeplift": "–"}
    marks = {row[3]: row[7] for row in explainer_rows([best, close, far, unrelated])}
    assert marks == {"integrated_gradients": "best", "saliency": "tie", "lime": "lower", "deeplift": "—"}


# ---------------------------------------------------------------- end to end: common random numbers


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, bert_tokenizer) -> dict[str, str]:
    """A tiny 'CE' model and its 'ZS' reference of one base, in zoo layout."""
    return write_tiny_zoo(tmp_path_factory.mktemp("crn_models"), bert_tokenizer, schedule={"epochs": 1})


def test_model_independent_explainers_get_rma_exactly_zero_and_signed_gaps(zoo, geco_dir, tmp_path: Path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, max_groups=8,
                                  chunk_size=4, bootstrap=50, batch_size=8)
    run_evaluation(["uniform_random", "pattern_variant", "saliency"], [zoo["CE"], zoo["ZS"]], ["binary_all"],
                   settings, store_location=str(tmp_path / "r"), checkpoint_dir=tmp_path / "ck", progress=False)
    report = LocalStore(tmp_path / "r").read_all("explainer_score")
    assert report.warnings == []
    by = {(r["model"]["regime"], r["explainer"]["name"]): r for r in report.documents}
    for name in ("uniform_random", "pattern_variant"):
        rma = by[("CE", name)]["metrics"]["relative_mass_accuracy"]
        assert (rma["value"], rma["ci_low"], rma["ci_high"]) == (0.0, 0.0, 0.0), name
    assert by[("CE", "saliency")]["metrics"]["relative_mass_accuracy"]["value"] != 0.0
    for record in report.documents:
        assert identity_mismatch(record) is None
        gap = record["metrics"]["mass_accuracy_gap"]
        male, female = record["groups"]["male"]["mass_accuracy"], record["groups"]["female"]["mass_accuracy"]
        assert gap["value"] == pytest.approx(male - female, abs=1e3 * EPS)  # every variant is defined here
        assert gap["ci_low"] <= gap["value"] <= gap["ci_high"]
        assert "compared_explainers" not in record["protocol"]  # schema 2.2: outside the identity
        compared = record["agreement"]["compared_explainers"]
        assert [label.split()[0] for label in compared] == ["pattern_variant", "saliency", "uniform_random"]
        assert len(record["comparisons"]) == 2
    text = leaderboard_text(LocalStore(tmp_path / "r"))
    assert "MA(male) − MA(female)" in text and "seeds" in text
    # every number with its interval, as in the Space: log RMA, the gap, MRC and SNC
    for column in ("log RMA [95% CI]", "Gap m−f [95% CI]", "MRC [95% CI]", "SNC [95% CI]"):
        assert column in text, column
    rows = {(row[1], row[3]): row for row in explainer_rows(report.documents)}
    assert rows[("CE", "uniform_random")][8] == "0.00 [0.00,0.00]"  # exactly 0, interval included
    saliency = by[("CE", "saliency")]["metrics"]["relative_mass_accuracy"]
    assert rows[("CE", "saliency")][8] == (f"{format_number(saliency['value'], 2, True)} "
                                           f"[{format_number(saliency['ci_low'], 2, True)},"
                                           f"{format_number(saliency['ci_high'], 2, True)}]")


@pytest.mark.slow
def test_another_explainer_set_keeps_the_records_and_reuses_chunk_checkpoints(zoo, geco_dir, tmp_path: Path) -> None:
    settings = EvaluationSettings(data_dir=str(geco_dir), filter="none", properties=False, max_groups=4,
                                  chunk_size=2, bootstrap=20, batch_size=8)
    kwargs = {"store_location": str(tmp_path / "r"), "checkpoint_dir": tmp_path / "ck", "progress": False}
    alone = run_evaluation(["uniform_random"], [zoo["CE"]], ["binary_all"], settings, **kwargs)
    chunks = {p: p.stat().st_mtime_ns for p in (tmp_path / "ck").rglob("chunk-*.json")}
    pair = run_evaluation(["uniform_random", "saliency"], [zoo["CE"]], ["binary_all"], settings, **kwargs)
    # schema 2.2: the compared set is outside the identity (the `agreement` block), so a rerun beside another
    # explainer finds uniform_random's record instead of writing a duplicate of it, and writes saliency's alone
    assert pair.existing == alone.written and len(pair.written) == 1
    for path, mtime in chunks.items():  # uniform_random's chunks (and its ZS reference's) were read, not redone
        assert path.stat().st_mtime_ns == mtime
    records = LocalStore(tmp_path / "r").read_all("explainer_score").documents
    assert sorted(r["explainer"]["name"] for r in records) == ["saliency", "uniform_random"]
    (saliency,) = [r for r in records if r["explainer"]["name"] == "saliency"]
    assert saliency["record_id"] == pair.written[0]
    # ... and saliency's cross-explainer numbers name the set they were computed in
    assert {label.split()[0] for label in saliency["agreement"]["compared_explainers"]} == {"saliency", "uniform_random"}

"""The Space's data side over synthetic records: gaps on the Ranking, baselines apart, All models' vs best."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
from _sample_records import make_explainer_record

from leaderboard_space import ranking, tables


def _nonbinary_cell() -> list[dict]:
    rng = random.Random(7)
    records = [make_explainer_record(name, "CE", "nonbinary_all", "base-a", rng=rng, with_gender=True,
                                     is_baseline=name == "pattern_variant", model_independent=name == "pattern_variant")
               for name in ("saliency", "lime", "deeplift", "pattern_variant")]
    gaps = {"saliency": (0.01, 0.09, 0.02), "lime": (0.04, 0.03, -0.05), "deeplift": (-0.20, 0.0, 0.01),
            "pattern_variant": (0.0, 0.0, 0.0)}
    for record in records:
        block = record["by_gender"]["metrics"]["mass_accuracy"]["gaps"]
        mf, mnb, fnb = gaps[record["explainer"]["name"]]
        record["metrics"]["mass_accuracy_gap"].update(value=mf, ci_low=mf - 0.01, ci_high=mf + 0.01)
        block["male_minus_nonbinary"].update(value=mnb, ci_low=mnb - 0.01, ci_high=mnb + 0.01)
        block["female_minus_nonbinary"].update(value=fnb, ci_low=fnb - 0.01, ci_high=fnb + 0.01)
    return records


def test_the_ranking_shows_every_gap_and_the_best_gap_over_all_of_them():
    table = ranking.model_ranking(_nonbinary_cell())
    for column in ("Gap m−f", "Gap m−nb", "Gap f−nb", ranking.LARGEST_GAP):
        assert column in table.columns
    largest = dict(zip(table["Explainer"], table[ranking.LARGEST_GAP]))
    assert largest["saliency"] == 0.09 and largest["lime"] == 0.05 and largest["deeplift"] == 0.20
    best = ranking.best_per_column(table)
    # lime's largest |gap| (0.05) is the smallest among the real explainers; Pattern Variant's 0 does not count,
    # and on m−f alone saliency would win (0.01): the best gap reads every gap of the config
    assert table.loc[best[ranking.LARGEST_GAP], "Explainer"] == "lime"
    assert table.loc[best["Gap m−f"], "Explainer"] == "saliency"
    assert table.loc[best["Gap m−nb"], "Explainer"] == "deeplift"


def test_binary_configs_have_one_gap():
    rng = random.Random(8)
    cell = [make_explainer_record(name, "CE", "binary_all", "base-a", rng=rng, with_gender=True)
            for name in ("saliency", "lime")]
    table = ranking.model_ranking(cell)
    assert "Gap m−f" in table.columns and "Gap m−nb" not in table.columns and ranking.LARGEST_GAP not in table.columns


def test_all_models_vs_best_never_names_a_baseline_best():
    rng = random.Random(9)
    records = []
    for regime in ("CE", "C"):
        for name in ("saliency", "lime", "pattern_variant", "uniform_random"):
            baseline = name in ("pattern_variant", "uniform_random")
            record = make_explainer_record(name, regime, "binary_all", "base-a", rng=rng, is_baseline=baseline,
                                           model_independent=baseline)
            if name == "pattern_variant":  # the oracle: the highest MA of every model
                record["metrics"]["mass_accuracy"].update(value=0.99, ci_low=0.98, ci_high=1.0)
            records.append(record)
    summary = tables.explainer_summary(records)
    for _, cell in summary.groupby(tables.MODEL_COLUMNS):
        best = cell[cell["vs best"] == "best"]
        assert len(best) == 1 and not best["Kind"].iloc[0].startswith("baseline")
        real = cell[~cell["Kind"].str.startswith("baseline")]
        assert best["MA"].iloc[0] == real["MA"].max()
    # the text above the table says what the rows are: per explainer and model, pooled over seeds only
    assert "One row per explainer and model" in tables.ACROSS_MODELS_TEXT
    assert "averaged over the records" not in tables.ACROSS_MODELS_TEXT
    assert (summary["Seeds"] == 1).all() and len(summary) == len(records)  # one seed each: one row per record


def test_all_models_pools_only_seeds_and_keeps_the_record_ids():
    rng = random.Random(10)
    records = [make_explainer_record("saliency", "CE", "binary_all", "base-a", seed=s, rng=rng) for s in (0, 1, 2)]
    summary = tables.explainer_summary(records)
    assert len(summary) == 1 and summary["Seeds"].iloc[0] == 3
    values = np.array([r["metrics"]["mass_accuracy"]["value"] for r in records])
    assert np.isclose(summary["MA"].iloc[0], values.mean(), rtol=0, atol=1e-12)
    assert set(summary["record_id"].iloc[0].split(";")) == {r["record_id"] for r in records}
    assert "record_id" not in tables.display_table(summary).columns
    assert "record_id" not in tables.sort_keys(summary)


def test_analysis_download_of_all_models_has_numbers_and_ids():
    from leaderboard_space.downloads import analysis_table

    records = [make_explainer_record(n, "CE", "binary_all", "base-a", rng=random.Random(11)) for n in ("saliency", "lime")]
    download = analysis_table(tables.explainer_summary(records))
    assert download.columns[0] == "record_id"
    for name in ("mass_accuracy", "mass_accuracy_ci_low", "mass_accuracy_ci_high", "ma_gap_male_minus_female",
                 "seconds_per_sentence", "n_seeds"):
        assert name in download.columns, name
    by_id = {r["record_id"]: r for r in records}
    for _, row in download.iterrows():
        assert row["mass_accuracy_ci_high"] == by_id[row["record_id"]]["metrics"]["mass_accuracy"]["ci_high"]
    assert pd.api.types.is_float_dtype(download["mass_accuracy"])


# ------------------------------------------------------------------------------------------------ drill-down

def _sentence(sentence_id: int, label: int, words: list[str], truth: list[int], scores: list[float]) -> dict:
    mass = sum(abs(s) for s in scores)
    return {"sentence_id": sentence_id, "label": label, "words": words, "ground_truth": truth, "attributions": scores,
            "mass_accuracy": sum(abs(s) for s, t in zip(scores, truth) if t) / mass}


def _documents(n_sentences: int = 450) -> list[dict]:
    sentences = []
    for i in range(n_sentences):
        sentences.append(_sentence(i, 0, ["She", "said", "the", "rest", "."], [1, 0, 0, 0, 0], [0.4, 0.1, 0.2, 0.2, 0.1]))
        sentences.append(_sentence(i, 1, ["He", "said", "the", "rest", "."], [1, 0, 0, 0, 0], [0.1, 0.5, 0.2, 0.1, 0.1]))
    sentences.append(_sentence(9999, 1, ["Ask", "him,", "then", "leave"], [0, 1, 0, 0], [1.0, 2.0, 0.5, 0.5]))
    return [{"format_version": 1, "record_id": "r", "explainer": "x", "sentences": sentences}]


def test_search_matches_whole_words_only():
    from leaderboard_space import drilldown

    documents = _documents(3)
    he = drilldown.sentence_page(documents, "he")
    assert {key.split(":")[1] for _, key in he.options} == {"1"}  # "He …" only: never "she" or "the"
    him = drilldown.sentence_page(documents, "him").options
    assert [key for _, key in him] == ["9999:1"] and "him," in him[0][0]  # punctuation does not hide a word
    assert drilldown.sentence_page(documents, "said rest").total == 6  # every word of the search
    nothing = drilldown.sentence_page(documents, "doctor")
    assert nothing.total == 0 and nothing.options == []
    message = nothing.message("doctor")
    assert "No sentence variant" in message and "doctor" in message and "0.3" not in message


def test_every_sentence_is_reachable_by_page_or_id():
    from leaderboard_space import drilldown

    documents = _documents()
    assert len(drilldown.sentence_page(documents).options) == 901  # one page at the Space's page size
    first = drilldown.sentence_page(documents, page_size=200)
    assert first.total == 901 and first.pages == 5
    reached = {key for page in range(1, first.pages + 1)
               for _, key in drilldown.sentence_page(documents, page=page, page_size=200).options}
    assert len(reached) == 901
    assert "page 1 of 5" in first.message()
    assert [key for _, key in drilldown.sentence_page(documents, "#417").options] == ["417:0", "417:1"]


def test_drilldown_shows_shares_and_every_variant_side_by_side(tmp_path):
    import gzip
    import json

    from leaderboard_space import drilldown

    rng = random.Random(12)
    records = [make_explainer_record(name, "CE", "binary_all", "base-a", rng=rng) for name in ("saliency", "lime")]
    folder = tmp_path / "sentence_scores"
    folder.mkdir()
    scale = {"saliency": 1.0, "lime": 40.0}  # raw scores of very different size: the shares agree
    for record in records:
        factor = scale[record["explainer"]["name"]]
        first = 0.9 if record["explainer"]["name"] == "lime" else 0.2
        sentences = [_sentence(5, 0, ["She", "runs"], [1, 0], [first * factor, (1 - first) * factor]),
                     _sentence(5, 1, ["He", "runs"], [1, 0], [0.5 * factor, 0.5 * factor])]
        document = {"format_version": 1, "record_id": record["record_id"], "explainer": "x", "sentences": sentences}
        (folder / f"{record['record_id']}.json.gz").write_bytes(gzip.compress(json.dumps(document).encode()))
    side = drilldown.SideFiles(str(tmp_path))
    rows = drilldown.sentence_rows(records, side, "5:0")
    # best MA on the chosen (female) variant first; each explainer's female and male variants adjacent
    assert [(r["explainer"], r["variant"]) for r in rows] == [
        ("lime", "female"), ("lime", "male"), ("saliency", "female"), ("saliency", "male")]
    for row in rows:
        assert sum(row["shares"]) == pytest.approx(1.0, abs=1e-12)
    assert rows[1]["shares"] == pytest.approx([0.5, 0.5], abs=1e-12)  # lime's raw 20 and 20
    page = drilldown.heatmap_html(rows)
    assert "90%" in page and "50%" in page and "linear-gradient" in page
    header = page.split("<tbody>")[0]
    assert header.index(">MA<") < header.index("Words")  # the sentence's MA first
    assert "No sentence" in drilldown.heatmap_html([], "No sentence chosen.")


def test_every_shade_of_the_scale_has_readable_text():
    from leaderboard_space import drilldown
    from leaderboard_space.colours import contrast_ratio

    for step in range(101):
        background, text = drilldown.share_colours(step / 100)
        assert contrast_ratio(background, text) >= 4.5, step


# ------------------------------------------------------------------------------------------------ Spanish tab

def _bias_records_with_other_and_unknown() -> list[dict]:
    from _sample_records import make_bias_record

    records = []
    for i in range(2):
        record = make_bias_record(f"model/{i}", rng=random.Random(20 + i))
        block = record["schemes"]["supersenses_top10"]
        block["bias"]["bpi"]["???"] = 3.0 + i
        block["bias"]["bpi"]["unknown"] = 95.0  # the largest value: must not set the colour scale
        records.append(record)
    return records


def test_spanish_names_the_catch_all_and_greys_unknown():
    import re

    from leaderboard_space import spanish_view
    from leaderboard_space.colours import GREY, contrast_ratio, css

    records = _bias_records_with_other_and_unknown()
    table = spanish_view.scheme_table(records, "supersenses_top10", "bpi")
    assert spanish_view.OTHER_LABEL in table.columns and "???" not in table.columns
    assert spanish_view.UNKNOWN_LABEL in table.columns
    for record, (_, row) in zip(sorted(records, key=lambda r: r["masked_lm"]["model_id"]),
                                table.sort_values("Model").iterrows()):
        bias = {k: v for k, v in record["schemes"]["supersenses_top10"]["bias"]["bpi"].items() if k != "unknown"}
        assert row[spanish_view.OVERALL] == pytest.approx(sum(abs(v) for v in bias.values()), abs=0.01)  # ??? counted
    page = spanish_view.scheme_table_html(table, "supersenses_top10", "bpi")
    assert f"background: {css(GREY)}" in page  # unknown in grey
    # the colour scale is the counted categories': some category reaches the darkest shade although unknown is 95
    backgrounds = re.findall(r"background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6})", page)
    assert backgrounds
    for background, text in backgrounds:
        rgb = [int(background[i:i + 2], 16) for i in (1, 3, 5)]
        fg = [int(text[i:i + 2], 16) for i in (1, 3, 5)]
        assert contrast_ratio(rgb, fg) >= 4.5
    assert "rgba(" not in page  # solid shades: the same in light and dark mode
    assert "???" in spanish_view.CATEGORY_TEXT and "not counted" in spanish_view.CATEGORY_TEXT


def test_spanish_published_comparison_speaks_for_every_scheme(tmp_path):
    from leaderboard_space import spanish_view

    records = _bias_records_with_other_and_unknown()
    assert spanish_view.published_comparison(records, tmp_path, "bpi", "supersenses_top29").empty
    note = spanish_view.published_note("supersenses_top29")
    assert "No published values" in note and "supersenses_top10" in note
    assert "published" in spanish_view.published_note("supersenses_top10")
    line = spanish_view.store_line("the reference results", "reference/store", 3)
    assert "reference results" in line and "reference/store" in line


# ------------------------------------------------------------------------------------------------ through the app

def test_the_app_s_spanish_tab_follows_the_source_and_its_ranking_download_is_numeric(tmp_path):
    from _sample_records import make_bias_record

    from gecobench.store import LocalStore
    from leaderboard_space import sources
    from leaderboard_space.app import build_app, event_functions

    rng = random.Random(30)
    reference, user = LocalStore(tmp_path / "reference"), LocalStore(tmp_path / "user")
    cell = [make_explainer_record(name, "CE", "binary_all", "base-a", seed=seed, rng=rng)
            for name in ("saliency", "lime") for seed in (0, 1, 2)]
    for record in cell:
        reference.append(record)
    reference.append(make_bias_record("model/reference-lm", rng=rng))
    user.append(make_explainer_record("deeplift", "CE", "binary_all", "base-b", rng=rng))
    functions = event_functions(build_app(str(user.root), str(tmp_path / "requests"),
                                          reference_location=str(reference.root)))
    shown = functions["spanish_view"]("supersenses_top10", "bpi", None, sources.REFERENCE)
    assert "model/reference-lm" in shown[0] and "reference results" in shown[3]
    mine = functions["spanish_view"]("supersenses_top10", "bpi", None, sources.USER)
    assert "No Spanish" in mine[0] and "your results" in mine[0]
    # the ranking of three seeds: mean over seeds offered first; its CSV download holds the numbers
    choices = functions["ranking_choices"](None, None, None, None, sources.REFERENCE, None)
    assert choices[3]["value"] == "mean over seeds"
    _, _, files, _ = functions["ranking_view"]("binary_all", "base-a", "CE", "mean over seeds",
                                               "Ranking (one row per explainer)", sources.REFERENCE, None)
    download = pd.read_csv(next(f for f in files if f.endswith(".csv")))
    assert set(download["n_seeds"]) == {3}
    for _, row in download.iterrows():
        ids = set(row["record_id"].split(";"))
        values = [r["metrics"]["mass_accuracy"]["value"] for r in cell if r["record_id"] in ids]
        assert len(values) == 3 and row["mass_accuracy"] == pytest.approx(np.mean(values), abs=1e-12)
        assert row["mass_accuracy_ci_low"] < row["mass_accuracy"] < row["mass_accuracy_ci_high"]


# ------------------------------------------------------------------------------------------------ plots

def test_radar_and_bars_encode_by_more_than_colour():
    from leaderboard_space import plots

    styles = [plots.trace_style(p) for p in range(len(plots.SYMBOLS) * len(plots.DASHES))]
    assert len({(s["symbol"], s["dash"]) for s in styles}) == len(styles)
    assert len({s["colour"] for s in styles[:10]}) == 10  # no colour repeated among ten explainers

    rng = random.Random(40)
    records = [make_explainer_record(name, regime, "binary_all", "base-a", seed=seed, rng=rng)
               for name in ("saliency", "lime", "deeplift", "kernel_shap", "gradient_shap", "integrated_gradients",
                            "occlusion", "shap", "input_x_gradient", "guided_backprop")
               for regime in ("CE", "C") for seed in (0, 1)]
    cell = ranking.cell_records(records, "binary_all", "base-a", "CE", "0")
    radar = plots.properties_radar(ranking.model_ranking(cell), "binary_all · base-a · CE · seed 0")
    assert len(radar.data) == 10
    assert len({(t.marker.symbol, t.line.dash) for t in radar.data}) == 10
    assert all("markers" in t.mode for t in radar.data)
    bars = plots.ma_by_regime_plot(records, "binary_all", "base-a", ranking.ALL_SEEDS)
    assert len({t.marker.pattern.shape for t in bars.data}) == len(bars.data) == 2
    assert all(set(t.text) == {t.name} for t in bars.data)  # the regime written on its bars
    # the mean over the two seeds, not one seed's value
    saliency_ce = [r["metrics"]["mass_accuracy"]["value"] for r in records
                   if r["explainer"]["name"] == "saliency" and r["model"]["regime"] == "CE"]
    ce = next(t for t in bars.data if t.name == "CE")
    assert ce.y[list(ce.x).index("saliency")] == pytest.approx(np.mean(saliency_ce), abs=1e-12)


def test_group_bars_pool_the_seeds_of_an_explainer():
    from leaderboard_space import plots

    rng = random.Random(41)
    records = [make_explainer_record(name, "CE", "binary_all", "base-a", seed=seed, rng=rng)
               for name in ("saliency", "lime") for seed in (0, 1, 2)]
    figure = plots.ma_by_group_plot(records, "binary_all · base-a · CE · mean over seeds")
    male = next(t for t in figure.data if t.name == "male")
    assert sorted(male.x) == ["lime", "saliency"]  # one bar per explainer, not per record
    values = [r["groups"]["male"]["mass_accuracy"] for r in records if r["explainer"]["name"] == "lime"]
    assert male.y[list(male.x).index("lime")] == pytest.approx(np.mean(values), abs=1e-12)
    assert male.marker.pattern.shape != next(t for t in figure.data if t.name == "female").marker.pattern.shape


def test_the_gap_view_pools_seeds_like_the_ranking():
    from leaderboard_space import gaps

    rng = random.Random(42)
    records = [make_explainer_record("saliency", "CE", "nonbinary_all", "base-a", seed=seed, rng=rng, with_gender=True)
               for seed in (0, 1, 2)]
    table = gaps.gender_gaps(records)
    ma = table[table["Metric"] == "MA"]
    assert len(ma) == 1 and ma["Seeds"].iloc[0] == 3
    values = [r["by_gender"]["metrics"]["mass_accuracy"]["gaps"]["male_minus_nonbinary"]["value"] for r in records]
    assert ma["Gap male−non-binary"].iloc[0] == pytest.approx(np.mean(values), abs=1e-12)
    assert set(ma["record_id"].iloc[0].split(";")) == {r["record_id"] for r in records}

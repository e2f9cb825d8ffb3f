"""The Space's readable layout without a browser: per-model ranking, pivot, adapters, downloads, drill-down,
Spanish tables, the Submit form's checks."""

from __future__ import annotations

import copy
import gzip
import json
import math
import random
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _sample_records import make_bias_record, make_explainer_record

from leaderboard_space import drilldown, ranking, spanish_view, submit_seam
from leaderboard_space.downloads import table_files


def _with_ma(record: dict, value: float, low: float, high: float) -> dict:
    record = copy.deepcopy(record)
    record["metrics"]["mass_accuracy"].update(value=value, ci_low=low, ci_high=high)
    return record


@pytest.fixture
def cell_records() -> list[dict]:
    rng = random.Random(1)
    make = lambda name, **kw: make_explainer_record(name, "CE", "binary_all", "base-a", rng=rng, **kw)
    return [
        _with_ma(make("saliency"), 0.40, 0.35, 0.45),
        _with_ma(make("integrated_gradients"), 0.80, 0.70, 0.90),
        _with_ma(make("deeplift"), 0.78, 0.72, 0.84),
        _with_ma(make("uniform_random", is_baseline=True, model_independent=True), 0.95, 0.91, 0.99),
    ]


def test_ranking_orders_by_ma_and_marks_overlapping_neighbours(cell_records):
    table = ranking.model_ranking(cell_records)
    # real explainers ranked by MA; the baseline (here with the highest MA) below them, ranked apart, no rank
    assert table["Explainer"].tolist() == ["integrated_gradients", "deeplift", "saliency", "uniform_random [baseline]"]
    assert table["Rank"].tolist()[:3] == [1, 2, 3] and table["Rank"].isna().tolist() == [False] * 3 + [True]
    assert table["Kind"].tolist() == ["explainer"] * 3 + ["baseline"]
    assert table["MA"].tolist() == [0.80, 0.78, 0.40, 0.95]
    assert table["Seeds"].tolist() == [1, 1, 1, 1]
    marks = dict(zip(table["Explainer"], table["vs next"]))
    # IG [0.70, 0.90] overlaps DeepLift [0.72, 0.84]; DeepLift does not overlap Saliency [0.35, 0.45]
    assert marks["integrated_gradients"] == ranking.NOT_SEPARATED_MARK
    assert marks["deeplift"] == "" and marks["saliency"] == ""
    assert marks["uniform_random [baseline]"] == ""  # last of its own list
    assert ranking.ranking_display(table)["Rank"].tolist() == [1, 2, 3, "–"]


def test_a_paired_result_of_the_same_run_wins_over_the_interval_check(cell_records):
    from gecobench.pooling import record_comparison_label

    better, worse = cell_records[1], cell_records[2]
    assert ranking.separated_from_next(better, worse) is False  # overlapping intervals
    verdict = {record_comparison_label(worse): {"value": 0.02, "ci_low": 0.005, "ci_high": 0.03, "verdict": "higher"}}
    paired = {**better, "comparisons": verdict, "protocol": worse["protocol"], "model": worse["model"]}
    assert ranking.separated_from_next(paired, worse) is True
    tie = {**paired, "comparisons": {record_comparison_label(worse): {**verdict[record_comparison_label(worse)],
                                                                      "verdict": "tie"}}}
    assert ranking.separated_from_next(tie, worse) is False
    # a comparison made in another run (other protocol) does not count: back to the interval check
    other_run = {**paired, "protocol": {**worse["protocol"], "seed": 99}}
    assert ranking.separated_from_next(other_run, worse) is False


def test_best_per_column_skips_baselines_and_respects_direction(cell_records):
    for record, snc in zip(cell_records, (0.3, 0.1, 0.2, 0.0)):
        record["metrics"]["small_noise_check"]["value"] = snc
    table = ranking.model_ranking(cell_records)
    best = ranking.best_per_column(table)
    assert table.loc[best["MA"], "Explainer"] == "integrated_gradients"  # the baseline's 0.95 is not a result
    assert table.loc[best["SNC"], "Explainer"] == "integrated_gradients"  # lower is better; baseline's 0.0 skipped


def test_one_seed_chosen_gives_its_record_no_pooling_across_regimes():
    rng = random.Random(2)
    records = [make_explainer_record("saliency", regime, "binary_all", "base-a", seed=seed, rng=rng)
               for regime in ("CE", "OLA") for seed in (0, 1)]
    choices = ranking.cell_choices(records)
    # several seeds: their mean comes first, then each seed
    assert choices.regimes == ["OLA", "CE"] and choices.seeds == [ranking.ALL_SEEDS, "0", "1"]
    cell = ranking.cell_records(records, "binary_all", "base-a", "CE", "1")
    assert len(cell) == 1 and cell[0]["model"]["seed"] == 1
    table = ranking.model_ranking(cell)
    assert table["MA"].tolist() == [cell[0]["metrics"]["mass_accuracy"]["value"]]
    ma = cell[0]["metrics"]["mass_accuracy"]  # one seed: that record's bootstrap interval, n = 1
    assert (table["MA lo"].iloc[0], table["MA hi"].iloc[0], table["Seeds"].iloc[0]) == (ma["ci_low"], ma["ci_high"], 1)
    assert table["Interval"].iloc[0] == ranking.BOOTSTRAP_INTERVAL
    single = [r for r in records if r["model"]["seed"] == 0]
    assert ranking.cell_choices(single).seeds == ["0"]  # one seed: no mean offered


def test_three_seeds_give_their_mean_and_the_t_interval_across_seeds():
    from gecobench.pooling import across_seeds_t

    rng = random.Random(4)
    records = [make_explainer_record(name, "CE", "nonbinary_all", "base-a", seed=seed, rng=rng, with_gender=True,
                                     is_baseline=name == "pattern_variant")
               for name in ("saliency", "lime", "pattern_variant") for seed in (0, 1, 2)]
    cell = ranking.cell_records(records, "nonbinary_all", "base-a", "CE", ranking.ALL_SEEDS)
    assert len(cell) == 9
    table = ranking.model_ranking(cell).set_index("Explainer")
    assert len(table) == 3 and set(table["Seeds"]) == {3}
    for name in ("saliency", "lime"):
        mine = [r for r in records if r["explainer"]["name"] == name]
        values = np.array([r["metrics"]["mass_accuracy"]["value"] for r in mine])
        half = across_seeds_t(3) * values.std(ddof=1) / np.sqrt(3)
        tolerance = 1e-12 * max(1.0, float(np.abs(values).max()))
        assert table.loc[name, "MA"] == pytest.approx(values.mean(), abs=tolerance)
        # the t-interval, cut to MA's range [0, 1] (gecobench.pooling.metric_bounds)
        assert table.loc[name, "MA lo"] == pytest.approx(max(values.mean() - half, 0.0), abs=tolerance)
        assert table.loc[name, "MA hi"] == pytest.approx(min(values.mean() + half, 1.0), abs=tolerance)
        gaps = np.array([r["by_gender"]["metrics"]["mass_accuracy"]["gaps"]["female_minus_nonbinary"]["value"]
                         for r in mine])
        assert table.loc[name, "Gap f−nb"] == pytest.approx(gaps.mean(), abs=tolerance)
        assert table.loc[name, "Interval"] == "95% t-interval across 3 seeds"
        assert table.loc[name, "Seed"] == "0, 1, 2"
        assert set(table.loc[name, "record_id"].split(";")) == {r["record_id"] for r in mine}
    # the baseline below the real explainers, without a rank, whatever its MA
    assert table.index[-1] == "pattern_variant [baseline]" and pd.isna(table["Rank"].iloc[-1])
    assert table["Rank"].iloc[:2].tolist() == [1, 2]


def test_signed_gap_is_oriented_male_minus_female():
    record = make_explainer_record("saliency", rng=random.Random(3))
    record["metrics"]["mass_accuracy_gap"] = {"value": 0.09, "ci_low": 0.01, "ci_high": 0.2, "minuend": "male",
                                              "subtrahend": "female", "definition": "MA(male) − MA(female)"}
    assert ranking.signed_gender_gap(record) == (0.09, 0.01, 0.2, "male − female")
    record["metrics"]["mass_accuracy_gap"].update(minuend="female", subtrahend="male")
    assert ranking.signed_gender_gap(record) == (-0.09, -0.2, -0.01, "male − female")
    del record["metrics"]["mass_accuracy_gap"]
    assert "no gap" in ranking.signed_gender_gap(record)[3]


def test_display_has_intervals(cell_records):
    shown = ranking.ranking_display(ranking.model_ranking(cell_records))
    assert shown.loc[0, "MA 95% CI"] == "[0.700, 0.900]"
    assert "MA lo" not in shown.columns and "record_id" not in shown.columns


def test_the_downloaded_csv_parses_to_the_records_numbers(tmp_path):
    """The ranking download is analysis-ready: value, ci_low, ci_high per metric at full precision, the record id."""
    from gecobench import columns
    from leaderboard_space.downloads import analysis_table

    rng = random.Random(5)
    records = [make_explainer_record(name, "CE", "nonbinary_all", "base-a", rng=rng, with_gender=True)
               for name in ("saliency", "lime", "deeplift")]
    for record in records:  # numbers that three decimals (the screen) would not carry
        record["metrics"]["mass_accuracy"].update(value=rng.random() / 3 + 0.3, ci_low=0.1 + rng.random() / 10,
                                                  ci_high=0.9 - rng.random() / 10)
    numbers = ranking.model_ranking(records)
    csv_path, json_path = table_files(analysis_table(numbers), "ranking: nonbinary_all/CE", folder=tmp_path)
    assert Path(csv_path).name == "ranking_nonbinary_all_CE.csv"
    from_csv = pd.read_csv(csv_path)
    assert from_csv.columns[0] == "record_id"
    by_id = {r["record_id"]: r for r in records}
    assert set(from_csv["record_id"]) == set(by_id)
    checked = 0
    for _, row in from_csv.iterrows():
        record = by_id[row["record_id"]]
        for key in ("mass_accuracy", "relative_mass_accuracy", "mass_accuracy_gap_male_minus_nonbinary",
                    "mass_accuracy_gap_female_minus_nonbinary", *ranking.RANK_COLUMNS_METRICS):
            col = columns.METRICS[key]
            for suffix, end in (("", "value"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high")):
                expected = col.record_value(record, end)
                got = row[col.name + suffix]
                assert (np.isnan(got) if expected is None else got == expected), (key, end)  # exact: full precision
                checked += 1
    assert checked >= 3 * 3 * 12
    rows = json.loads(Path(json_path).read_text(encoding="utf-8"))
    assert [r["mass_accuracy"] for r in rows] == from_csv["mass_accuracy"].tolist()


def test_every_metric_of_the_ranking_shows_its_interval_in_the_table_and_on_the_radar(cell_records):
    from gecobench.formatting import format_interval, format_number
    from leaderboard_space import plots
    from leaderboard_space.tables import METRIC_LABELS, PROPERTY_KEYS

    numbers = ranking.model_ranking(cell_records)
    shown = ranking.ranking_display(numbers)
    by_explainer = {r["explainer"]["name"]: r for r in cell_records}
    for key in ranking.RANK_COLUMNS_METRICS:
        label = METRIC_LABELS[key]
        assert f"{label} lo" not in shown.columns and shown[label].dtype.kind == "f"  # numeric: it sorts
        columns = list(shown.columns)
        assert columns[columns.index(label) + 1] == f"{label} 95% CI"
        for position, name in enumerate(shown["Explainer"].str.split(" ").str[0]):
            metric = by_explainer[name]["metrics"][key]
            expected = ("–" if metric.get("ci_low") is None else
                        f"[{format_number(metric['ci_low'])}, {format_number(metric['ci_high'])}]")
            assert shown.loc[position, f"{label} 95% CI"] == expected, (key, name)
    # the radar's radius is rescaled across explainers; its hover text is the record's value with its interval
    figure = plots.properties_radar(numbers, "binary_all · base-a · CE · seed 0")
    first = figure.data[0]
    record = by_explainer[numbers.loc[0, "Explainer"].split(" ")[0]]
    axes = list(first.theta[:-1])
    assert len(axes) >= 3
    for axis, text in zip(axes, first.text):
        key = next(k for k in PROPERTY_KEYS if METRIC_LABELS[k] == axis)
        metric = record["metrics"][key]
        assert text == format_interval(metric["value"], metric.get("ci_low"), metric.get("ci_high"))
        assert "[" in text or metric.get("ci_low") is None


def test_pivot_has_one_column_per_regime_and_names_doubled_cells():
    rng = random.Random(4)
    records = [make_explainer_record("saliency", regime, "binary_all", "base-a", rng=rng) for regime in ("CE", "OLA")]
    newer = make_explainer_record("saliency", "CE", "binary_all", "base-a", version="2.0.0", rng=rng)
    newer["provenance"]["created_at"] = "2999-01-01T00:00:00Z"
    pivot = ranking.pivot_by_regime([*records, newer], "binary_all", "base-a")
    assert [c for c in pivot.columns if not c.endswith((" lo", " hi"))] == ["Explainer", "OLA", "CE", "Note"]
    assert pivot.loc[0, "CE"] == newer["metrics"]["mass_accuracy"]["value"]
    assert pivot.loc[0, "CE hi"] == newer["metrics"]["mass_accuracy"]["ci_high"]  # every value with its interval
    assert "CE: 2 records" in pivot.loc[0, "Note"]
    shown = ranking.ranking_display(pivot)  # one number of decimals, the interval beside each value
    assert "CE 95% CI" in shown.columns and shown.loc[0, "CE"] == round(pivot.loc[0, "CE"], 3)


def test_pivot_is_ranked_not_alphabetical():
    rng = random.Random(6)
    records = []
    for name, ma in (("a_worst", 0.2), ("b_best", 0.9), ("c_middle", 0.5), ("pattern_variant", 0.99)):
        for regime in ("CE", "C"):
            record = make_explainer_record(name, regime, "binary_all", "base-a", rng=rng,
                                           is_baseline=name == "pattern_variant")
            value = ma if regime == "CE" else 1 - ma  # C ranks them the other way round
            record["metrics"]["mass_accuracy"].update(value=value, ci_low=value - 0.01, ci_high=value + 0.01)
            records.append(record)
    by_ce = ranking.pivot_by_regime(records, "binary_all", "base-a", rank_by="CE")
    assert by_ce["Explainer"].tolist() == ["b_best", "c_middle", "a_worst", "pattern_variant [baseline]"]
    assert "CE" in by_ce.attrs["order"]
    by_c = ranking.pivot_by_regime(records, "binary_all", "base-a", rank_by="C")
    assert by_c["Explainer"].tolist() == ["a_worst", "c_middle", "b_best", "pattern_variant [baseline]"]


def test_chance_level_is_uniform_random(cell_records):
    value, label = ranking.chance_level(cell_records)
    assert value == 0.95 and "Uniform Random" in label
    assert math.isnan(ranking.chance_level(cell_records[:3])[0])


def _side(tmp_path: Path, record_id: str, scores: list[float]) -> None:
    folder = tmp_path / "sentence_scores"
    folder.mkdir(parents=True, exist_ok=True)
    document = {"format_version": 1, "record_id": record_id, "explainer": "x", "sentences": [
        {"sentence_id": 3, "label": 1, "words": ["He", "runs", "fast"], "ground_truth": [1, 0, 0],
         "attributions": scores, "mass_accuracy": abs(scores[0]) / sum(abs(s) for s in scores)},
        {"sentence_id": 4, "label": 0, "words": ["She", "sings"], "ground_truth": [1, 0],
         "attributions": [0.5, 0.5], "mass_accuracy": 0.5}]}
    (folder / f"{record_id}.json.gz").write_bytes(gzip.compress(json.dumps(document).encode()))


def test_drilldown_searches_words_and_shows_every_explainer(cell_records, tmp_path):
    for record, scores in zip(cell_records[:2], ([0.2, 0.6, 0.2], [0.9, 0.05, 0.05])):
        _side(tmp_path, record["record_id"], scores)
    side = drilldown.SideFiles(str(tmp_path))
    documents = [side.get(r["record_id"]) for r in cell_records[:2]]
    options = drilldown.sentence_options(documents, "SINGS")
    assert options == [("#4 (female): She sings", "4:0")]
    rows = drilldown.sentence_rows(cell_records, side, "3:1")
    assert [r["explainer"] for r in rows] == ["integrated_gradients", "saliency"]  # best per-sentence MA first
    assert [r["variant"] for r in rows] == ["male", "male"]  # sentence 3 has one variant in these files
    html = drilldown.heatmap_html(rows)
    assert html.count('class="gt"') == 2 and ">He<br>" in html  # one ground-truth word per row
    assert "0.900" in html and "0.200" in html  # the sentence's MA
    assert side.get("no_such_record") is None


def test_spanish_table_ordered_by_overall_bias_two_decimals_and_radar_choices():
    records = [make_bias_record(f"model/{i}", rng=random.Random(i)) for i in range(3)]
    records.append(make_bias_record("model/top29", rng=random.Random(9), schemes=("supersenses_top29",)))
    table = spanish_view.scheme_table(records, "supersenses_top10", "bpi")
    assert len(table) == 3
    overall = table["Overall |m−f|"].tolist()
    assert overall == sorted(overall, reverse=True)
    numbers = table.drop(columns=["Model"]).to_numpy(dtype=float)
    assert np.allclose(numbers, np.round(numbers, 2))
    html = spanish_view.scheme_table_html(table, "supersenses_top10", "bpi")
    assert "overflow-x: auto" in html and html.count("<tr>") == 4
    assert [r["masked_lm"]["model_id"] for r in spanish_view.records_with_scheme(records, "supersenses_top29")] == [
        "model/top29"]
    assert spanish_view.category_label("Cuerpo") == "BODY" and "Cuerpo → BODY" in spanish_view.legend_markdown(
        "supersenses_top29")
    figure = spanish_view.radar_plot(records[3], "supersenses_top29", "bpi")
    assert len(figure.data) == 2 and all(len(trace.r) > 2 for trace in figure.data)


def test_published_values_beside_the_recomputation(tmp_path, spanish_dir):
    from gecobench.spanish import import_recorded_predictions
    from gecobench.store import LocalStore

    store = LocalStore(tmp_path / "r")
    import_recorded_predictions(spanish_dir / "predictions", store, k=10, progress=False)
    records = store.read_all("model_bias").documents
    table = spanish_view.published_comparison(records, spanish_dir / "published", "bpi")
    assert set(table["Category"]) == {"BODY", "FEELING", "MIND", "BEHAVIOR", "SOCIAL"}
    assert len(table) == 5 * 20
    # the recorded predictions are the authors': the recomputation reproduces their table to its two decimals
    assert (table["Difference"].abs() < 0.01).all()


def test_submit_form_lists_every_problem_at_once():
    problems = submit_seam.form_problems("code", {"name": "Bad Name", "version": "one", "authors": "",
                                                  "description": "", "license": "", "contact": ""}, "x.jsonl")
    text = "\n".join(problems)
    for expected in ("**authors** is required", "**description** is required", "**license** is required",
                     "**contact** is required", "**name** 'Bad Name'", "**version** 'one'", "must end with .py"):
        assert expected in text, expected
    assert submit_seam.form_problems("precomputed", {"name": "ok_name", "version": "1.0.0", "authors": "A",
                                                     "description": "d", "license": "MIT", "contact": "a@b"},
                                     "x.jsonl") == []


def test_queue_shows_the_score_of_a_finished_request(tmp_path):
    from submissions.requests import RequestStore
    from submissions.submit import submit_file

    store = RequestStore(tmp_path / "requests")
    code = tmp_path / "y_explainer.py"
    code.write_text("class Y:\n    name = 'y_explainer'\n    def explain(self, model, tokenizer, words, targets):\n"
                    "        return []\n")
    metadata = {"name": "y_explainer", "version": "1.0.0", "authors": "A", "description": "d", "license": "MIT",
                "contact": "a@b"}
    view = submit_file(store, "code", metadata, code)
    asked = []

    def score_of(record_ids):
        asked.append(list(record_ids))
        return "MA 0.512"

    table, _ = submit_seam.queue_frame(str(tmp_path / "requests"), score_of)
    assert table.loc[0, "score"] == "" and asked == []  # pending: no score, nothing looked up
    store.transition(view.request_id, "RUNNING")
    store.transition(view.request_id, "FINISHED", result_record_ids=["abc", "def"])
    table, _ = submit_seam.queue_frame(str(tmp_path / "requests"), score_of)
    assert table.loc[0, "score"] == "MA 0.512" and asked == [["abc", "def"]]
    assert list(table.columns[:2]) == ["status", "score"]


def test_every_ranking_row_carries_its_provenance(cell_records):
    record = cell_records[1]
    record["model"].update(name="CE-binary_all-s0", checkpoint_sha256="ab" * 32, hub_id="owner/gecobench-ce")
    record["explainer"]["params"] = {"n_steps": 16}
    # IG ranks first (the baseline is ranked apart, below)
    row = ranking.model_ranking(cell_records, lambda r: f"explainer_score/{r['record_id']}.json").iloc[0]
    assert row["Explainer"] == "integrated_gradients"
    assert row["Parameters"] == '{"n_steps": 16}' and row["Version"] == record["explainer"]["version"]
    assert row["Seed"] == "0" and row["Sentences scored"] == record["counts"]["n_scored"]
    assert row["Model"] == f"CE-binary_all-s0 sha256:{'ab' * 6} (https://huggingface.co/owner/gecobench-ce)"
    assert row["Dataset"].startswith("geco/binary_all/test")
    assert row["Record"] == f"explainer_score/{record['record_id']}.json"


def test_figures_download_as_pages_that_save_svg(cell_records, tmp_path):
    from leaderboard_space import plots
    from leaderboard_space.downloads import figure_files

    figure = plots.ma_by_group_plot(cell_records, "binary_all · base-a · CE · seed 0")
    assert any(shape.line.dash == "dash" for shape in figure.layout.shapes)  # the chance line
    [path] = figure_files({"ma by group": figure}, folder=tmp_path)
    page = Path(path).read_text(encoding="utf-8")
    assert Path(path).name == "ma_by_group.html"
    assert '"format": "svg"' in page and "binary_all · base-a · CE · seed 0" in page

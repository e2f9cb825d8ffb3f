"""The column model (gecobench.columns): one declaration read by the Space's tables, its downloads and the CLI."""

from __future__ import annotations

import pytest
from _sample_records import make_explainer_record

from gecobench import columns
from gecobench.gender import METRIC_SYMBOLS
from leaderboard_space import ranking, tables


def test_every_metric_direction_agrees_with_the_metric_registry():
    from gecobench.metrics import METRICS_META

    for key, col in columns.METRICS.items():
        if key in METRICS_META:
            assert col.direction == METRICS_META[key]["direction"], key


def test_the_space_and_the_gender_view_use_the_declared_labels():
    assert tables.METRIC_LABELS == columns.METRIC_LABELS
    for key, symbol in METRIC_SYMBOLS.items():  # the gap view and the CLI name a metric as its column does
        assert columns.METRICS[key].label == symbol, key
    assert ranking.GAP == columns.METRICS["mass_accuracy_gap"].label
    assert ranking.LARGEST_GAP == columns.LARGEST_GAP.label


def test_every_ranking_header_is_declared_and_defined():
    record = make_explainer_record("saliency", config="nonbinary_all", with_gender=True)
    numbers = ranking.model_ranking([record])
    declared = columns.definitions()
    for header in ranking.interval_columns(numbers):
        assert declared.get(header), header


def test_record_value_reads_the_declared_source_and_the_older_paths():
    record = make_explainer_record("saliency", config="nonbinary_all", with_gender=True)
    ma = columns.METRICS["mass_accuracy"]
    assert ma.record_value(record) == record["metrics"]["mass_accuracy"]["value"]
    gap = columns.METRICS["mass_accuracy_gap_male_minus_nonbinary"]
    assert gap.record_value(record, "ci_high") == (
        record["by_gender"]["metrics"]["mass_accuracy"]["gaps"]["male_minus_nonbinary"]["ci_high"])
    old = make_explainer_record("saliency", config="binary_all")  # no by_gender block: the groups block is read
    assert columns.GROUP_COLUMNS["male"].record_value(old) == old["groups"]["male"]["mass_accuracy"]
    with pytest.raises(ValueError, match="computed by the table"):
        columns.LARGEST_GAP.record_value(old)


def test_format_follows_the_column():
    assert columns.METRICS["relative_mass_accuracy"].format(0.5, 0.25, 0.75) == "+0.50 [+0.25, +0.75]"
    assert columns.METRICS["mass_accuracy"].format(float("nan")) == "–"
    with pytest.raises(KeyError, match="unknown column 'nope'"):
        columns.column("nope")


def test_the_terminal_leaderboard_never_names_a_baseline_best():
    import random

    from gecobench.evaluation.leaderboard import _COLUMNS, explainer_rows

    rng = random.Random(3)
    records = [make_explainer_record(name, "CE", "binary_all", "base-a", rng=rng, is_baseline=name == "pattern_variant")
               for name in ("saliency", "lime", "pattern_variant")]
    records[-1]["metrics"]["mass_accuracy"].update(value=0.99, ci_low=0.98, ci_high=1.0)
    header = [name for name, _ in _COLUMNS]
    rows = {row[header.index("explainer")]: row for row in explainer_rows(records)}
    assert rows["pattern_variant"][header.index("vs best")] != "best"
    best = max(("saliency", "lime"), key=lambda n: next(r for r in records if r["explainer"]["name"] == n)
               ["metrics"]["mass_accuracy"]["value"])
    assert rows[best][header.index("vs best")] == "best"
    assert f"{columns.METRICS['mass_accuracy_gap'].label} [95% CI]" in header  # the CLI's headers are the columns'

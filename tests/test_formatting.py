"""One way to write a number everywhere: no signed zero, signs where asked, the same digits in CLI and Space."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import gecobench.formatting
from gecobench.evaluation.leaderboard import _interval
from gecobench.formatting import format_interval, format_number


def test_the_module_examples_hold():
    failures, tried = doctest.testmod(gecobench.formatting)
    assert tried > 0 and failures == 0


@pytest.mark.parametrize("value", [-1e-17, -0.0, 0.0, 1e-17, -0.00049, 0.00049])
def test_a_value_that_rounds_to_zero_has_no_sign(value):
    assert format_number(value) == "0.000"
    assert format_number(value, signed=True) == "0.000"
    assert format_number(value * 10, 2, signed=True) == "0.00"


@pytest.mark.parametrize("value, digits, signed, text", [
    (0.0005, 3, False, "0.001"), (-0.0006, 3, True, "-0.001"), (0.25, 2, True, "+0.25"), (-1.5, 2, False, "-1.50"),
    (0.87749, 3, False, "0.877"),
])
def test_other_values_keep_their_sign_and_digits(value, digits, signed, text):
    assert format_number(value, digits, signed) == text


def test_the_cli_and_the_space_write_a_float_rounding_gap_the_same_way():
    # a gap of exactly zero up to float rounding (Pattern Variant scores both genders' sentences alike)
    gap, low, high = -2.7e-17, -0.0123, 0.0116
    assert format_interval(gap, low, high) == "0.000 [-0.012, 0.012]"
    assert _interval(low, high, signed=True) == "[-0.012,+0.012]"
    assert format_interval(-1e-18, -0.001, 0.004, digits=2, signed=True) == "0.00 [0.00, 0.00]"
    assert format_interval(np.nan) == "–"


def test_the_space_ranking_of_the_committed_reference_shows_no_signed_zero(tmp_path):
    """A gap that is 0 up to float rounding (0.5.0's Pattern Variant scored both genders alike: -2.7e-17) must be
    written 0.000 in the ranking, as the CLI does. The committed reference's OLA records of one cell, with Pattern
    Variant's MA gap set to such a value (1.0's Pattern Variant, fitted on the explained split, has a gap of its own)."""
    import shutil
    from pathlib import Path

    from gecobench.evaluation.sentence_scores import find_side_file, side_file_path
    from gecobench.store import LocalStore
    from leaderboard_space import sources
    from leaderboard_space.app import build_app, event_functions

    reference = Path(sources.default_reference_location())
    records = LocalStore(reference).read_all("explainer_score").documents  # its parts' records too
    seed = min(r["model"]["seed"] for r in records)
    cell = [r for r in records if (r["dataset"]["config"], r["model"]["regime"], r["model"]["seed"],
                                   r["protocol"]["filter"]) == ("binary_all", "OLA", seed, "paper")]
    assert len(cell) == 11
    store = LocalStore(tmp_path / "reference")
    for record in cell:
        if record["explainer"]["name"] == "pattern_variant":
            # 0.5.0's Pattern Variant gap on this cell, interval included
            record["metrics"]["mass_accuracy_gap"].update(value=-2.7e-17, ci_low=-0.0123, ci_high=0.0116)
        store.append(record)
        side = find_side_file(reference, record["record_id"])
        if side is not None:
            side_file_path(store.root, record["record_id"]).parent.mkdir(exist_ok=True)
            shutil.copy2(side, side_file_path(store.root, record["record_id"]))
    base = cell[0]["model"]["base_model"]
    demo = build_app(str(tmp_path / "empty"), str(tmp_path / "requests"), reference_location=str(tmp_path / "reference"))
    table, *_ = event_functions(demo)["ranking_view"]("binary_all", base, "OLA", str(seed), None, sources.REFERENCE,
                                                       sources.PAPER_FILTER)
    gaps = table.data["Gap m−f"]
    assert (gaps.abs() < 5e-4).any(), "the check needs a gap that rounds to zero"
    shown = table.to_html()
    assert "pattern_variant" in shown and "-0.000" not in shown and "0.000" in shown
    assert ">1</td>" in shown and ">2</td>" in shown  # the rank stays an integer

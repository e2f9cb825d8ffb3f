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
    """Pattern Variant scores both genders alike, so its gap is 0 up to float rounding in the reference records;
    the ranking must write it 0.000, as the CLI does."""
    import json
    from pathlib import Path

    from leaderboard_space import sources
    from leaderboard_space.app import build_app, event_functions

    reference = sources.default_reference_location()
    records = [json.loads(f.read_text()) for f in Path(reference, "explainer_score").glob("*.json")]
    base = next(r["model"]["base_model"] for r in records if r["model"]["regime"] == "CE")
    demo = build_app(str(tmp_path / "empty"), str(tmp_path / "requests"), reference_location=reference)
    table, *_ = event_functions(demo)["ranking_view"]("binary_all", base, "OLA", "0", None, sources.REFERENCE,
                                                       sources.PAPER_FILTER)
    gaps = table.data["Gap m−f"]
    assert (gaps.abs() < 5e-4).any(), "the check needs a gap that rounds to zero"
    shown = table.to_html()
    assert "pattern_variant" in shown and "-0.000" not in shown and "0.000" in shown
    assert ">1</td>" in shown and ">2</td>" in shown  # the rank stays an integer

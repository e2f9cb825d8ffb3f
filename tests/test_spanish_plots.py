"""Pictures of model_bias records: colour convention, shares, files written."""

from __future__ import annotations

import re

import pytest

from gecobench.spanish.plots import (
    colour_for,
    group_shares,
    heat_table_figure,
    heat_table_html,
    radar_figure,
    scheme_table_html,
    write_pictures,
)


def _record(model_id: str, record_id: str, bias_body: float) -> dict:
    bpi = {"BODY": {"male": 10.0, "female": 10.0 - bias_body}, "MIND": {"male": 30.0, "female": 10.0},
           "unknown": {"male": 60.0, "female": 80.0 + bias_body}}
    bias = {"bpi": {c: v["male"] - v["female"] for c, v in bpi.items()}, "bri": {"BODY": None, "MIND": 0.0, "unknown": 0.0}}
    return {
        "record_id": record_id,
        "masked_lm": {"model_id": model_id, "source": "live"},
        "protocol": {"k": 10},
        "schemes": {
            "supersenses_top10": {"bpi": bpi, "bri": bpi, "bias": bias},
            "wiggins": {"bpi": {"Status": {"male": 5.0, "female": 7.0}}, "bri": {}, "bias": {"bpi": {"Status": -2.0}, "bri": {}}},
        },
    }


def test_colour_convention():
    blue = colour_for(2.0, 4.0)
    red = colour_for(-4.0, 4.0)
    assert blue[2] > blue[0] and blue[3] == pytest.approx(0.5)
    assert red[0] > red[2] and red[3] == pytest.approx(1.0)
    assert colour_for(None, 4.0)[3] == 0.0


def test_heat_table_html_cells_and_colours():
    record = _record("m/one", "a" * 32, bias_body=-5.0)
    page = heat_table_html(record)
    assert "m/one" in page and "supersenses_top10" in page and "wiggins" in page
    # MIND bias +20 is the largest magnitude: full-intensity blue; BODY −5: red at a quarter of the intensity
    assert re.search(r"rgba\(31, 119, 180, 1\.000\)[^>]*>\+20\.0000<", page)
    assert re.search(r"rgba\(214, 39, 40, 0\.250\)[^>]*>-5\.0000<", page)
    # a category absent from a scheme shows a dash, not a number
    assert "–" in page


def test_group_shares_sum_to_one_without_unknown():
    record = _record("m/one", "a" * 32, bias_body=4.0)
    shares = group_shares(record, "supersenses_top10")
    for group in ("male", "female"):
        assert set(shares[group]) == {"BODY", "MIND"}
        assert sum(shares[group].values()) == pytest.approx(1.0)
    assert shares["male"]["MIND"] == pytest.approx(30.0 / 40.0)


def test_figures_and_files(tmp_path):
    records = [_record("m/one", "a" * 32, -5.0), _record("m/two", "b" * 32, 3.0)]
    assert heat_table_figure(records[0]).axes
    assert radar_figure(records[0], "supersenses_top10").axes
    with pytest.raises(ValueError, match="no scheme 'nope'"):
        radar_figure(records[0], "nope")
    with pytest.raises(ValueError, match="index must be one of"):
        heat_table_html(records[0], index="xyz")
    table = scheme_table_html(records, "supersenses_top10")
    assert "m/one" in table and "m/two" in table
    written = write_pictures(records, tmp_path)
    names = {p.split("/")[-1] for p in written}
    assert "all_models_supersenses_top10.png" in names and "all_models_wiggins.html" in names
    assert sum(n.endswith("_heat.png") for n in names) == 2
    assert sum("_radar_" in n for n in names) == 4
    assert all((tmp_path / n).stat().st_size > 0 for n in names)

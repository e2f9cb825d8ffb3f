"""The Space's page without a browser: contrast of every shaded cell, the view in the URL, the glossary's
definitions of every header, the default model, the texts and links (no host path)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from gecobench.spanish.plots import FEMALE_RGB, MALE_RGB
from leaderboard_space import contrast, glossary, texts
from leaderboard_space.contrast import AA_CONTRAST, BLACK, WHITE, contrast_ratio

#: the page's grounds: light mode, and Gradio's dark-mode background (neutral 950)
GROUNDS = {"light": WHITE, "dark": (0x0B, 0x0F, 0x19)}
#: every translucent shade the Space draws: the drill-down's attribution red, the Spanish tab's male and female
DRILL_RGB = (214, 96, 77)
SHADES = {"drill-down": DRILL_RGB, "spanish male": MALE_RGB, "spanish female": FEMALE_RGB,
          "best cell": contrast.BEST_CELL}
ALPHAS = np.round(np.linspace(0.0, 1.0, 101), 2)


def test_wcag_contrast_of_known_pairs():
    assert contrast_ratio(BLACK, WHITE) == pytest.approx(21.0)
    assert contrast_ratio(WHITE, WHITE) == pytest.approx(1.0)
    assert contrast_ratio((118, 118, 118), WHITE) == pytest.approx(4.54, abs=0.01)  # the AA grey on white
    assert contrast_ratio(WHITE, (118, 118, 118)) == contrast_ratio((118, 118, 118), WHITE)
    with pytest.raises(ValueError, match="0…255"):
        contrast.relative_luminance((256, 0, 0))


def test_the_translucent_shades_with_one_text_colour_fail_somewhere():
    """Why the cells are made opaque: a shade over the dark ground with either fixed text colour drops below AA
    for some alpha (the issue's dark-mode and darkest-red complaints), so the check below can fail."""
    for rgb in (DRILL_RGB, FEMALE_RGB):
        for text in (BLACK, WHITE):
            worst = min(contrast_ratio(text, contrast.composite(rgb, a, ground))
                        for a in ALPHAS for ground in GROUNDS.values())
            assert worst < AA_CONTRAST


@pytest.mark.parametrize("mode", sorted(GROUNDS))
@pytest.mark.parametrize("shade", sorted(SHADES))
def test_every_shaded_cell_reaches_aa_contrast_in_light_and_dark_mode(shade, mode):
    """The page's rule (an opaque shade, composited over white, with the better of black and white text) gives
    the same cell on either ground; its contrast is at least 4.5:1 for every alpha the Space draws."""
    for alpha in ALPHAS:
        style = contrast.shaded_style(SHADES[shade], alpha)
        (text, background), = contrast.shaded_cells(f'<td style="{style}">x</td>')
        # opaque: the page's ground (light or dark) does not show through, so the cell is the same in both modes
        assert background == contrast.composite(SHADES[shade], alpha, WHITE)
        assert background == contrast.composite(background, 1.0, GROUNDS[mode])
        assert contrast_ratio(text, background) >= AA_CONTRAST, (shade, mode, alpha)


def test_the_ground_truth_header_is_dark_on_yellow():
    assert contrast_ratio(contrast.GROUND_TRUTH_TEXT, contrast.GROUND_TRUTH_HEADER) >= AA_CONTRAST
    from leaderboard_space.page_assets import CSS

    assert "th.gt {color: #1a1a1a" in CSS  # the colour tested is the one the page sets, in both modes


def test_readable_shading_rewrites_the_heat_maps_markup():
    from leaderboard_space import drilldown

    attributions = [0.9, 0.1, None]
    row = {"explainer": "saliency", "variant": "female", "chosen": True, "words": ["She", "runs", "home"],
           "ground_truth": [1, 0, 0], "attributions": attributions,
           "shares": drilldown.attribution_shares(attributions), "mass_accuracy": 0.9}
    markup = contrast.readable_shading(drilldown.heatmap_html([row]))
    cells = contrast.shaded_cells(markup)
    assert len(cells) >= 3 and "rgba(" not in markup
    assert all(contrast_ratio(text, background) >= AA_CONTRAST for text, background in cells)
    # the largest share: the scale's darkest shade, a word without a score: none
    darkest = drilldown.share_colours(1.0)[0]
    assert darkest in [background for _, background in cells]
    assert drilldown.share_colours(0.0)[0] != darkest


def test_the_view_in_the_url_round_trips_and_rejects_what_the_page_does_not_offer():
    from leaderboard_space.app import GAPS_VIEW, view_from_query
    from leaderboard_space.page_assets import URL_KEYS

    asked = {"tab": "drilldown", "source": "reference", "filter": "per_model", "config": "binary_all",
             "base": "some base", "regime": "CEf", "seed": "0", "view": GAPS_VIEW, "search": "she",
             "sentence": "3:1", "columns": "gaps,provenance"}
    assert view_from_query(asked) == {**asked, "columns": ["Gaps", "Provenance"]}
    assert set(URL_KEYS) | {"tab"} == set(asked)
    odd = view_from_query({"tab": "nonsense", "source": "elsewhere", "view": "x", "regime": "", "columns": "x,y"})
    assert odd["tab"] is None and odd["source"] is None and odd["view"] is None and odd["regime"] is None
    assert odd["columns"] is None  # no known group: the default columns
    assert view_from_query({}) == dict.fromkeys(asked)


def test_the_chosen_columns_go_into_the_url_only_when_they_differ_from_the_default_and_come_back():
    from leaderboard_space.page_assets import NO_COLUMNS, columns_from_query, columns_to_query
    from leaderboard_space.ranking import COLUMN_GROUPS, DEFAULT_COLUMN_GROUPS

    # the default, in any order, writes nothing: a first visit's URL stays as short as before
    assert columns_to_query(DEFAULT_COLUMN_GROUPS) is None
    assert columns_to_query(reversed(DEFAULT_COLUMN_GROUPS)) is None
    assert columns_to_query(COLUMN_GROUPS) == "faithfulness,gaps,properties,provenance"
    assert columns_to_query(["Provenance", "Gaps"]) == "gaps,provenance"  # the chooser's order
    assert columns_to_query([]) == NO_COLUMNS
    # every choice of groups (all 2^4) comes back from its value as the chooser holds it
    groups = list(COLUMN_GROUPS)
    for mask in range(2 ** len(groups)):
        chosen = [g for i, g in enumerate(groups) if mask >> i & 1]
        value = columns_to_query(chosen)
        back = columns_from_query(value)
        assert (back if value is not None else list(DEFAULT_COLUMN_GROUPS)) == chosen, (chosen, value, back)
    # what a hand-edited or older URL may hold: other case, other separators, unknown words
    assert columns_from_query("Provenance+GAPS") == ["Gaps", "Provenance"]
    assert columns_from_query("gaps provenance") == ["Gaps", "Provenance"]
    assert columns_from_query("gaps,retired_group") == ["Gaps"]
    assert columns_from_query("retired_group") is None and columns_from_query(None) is None
    assert columns_from_query(",,") is None


def test_the_page_script_writes_the_columns_as_the_python_rule_does():
    """The URL's client half repeats :func:`columns_to_query` (a page event has no server call): its table of words,
    default and empty marker come from the Python side."""
    import json
    import re

    from leaderboard_space.page_assets import NO_COLUMNS, URL_JS, column_token
    from leaderboard_space.ranking import COLUMN_GROUPS, DEFAULT_COLUMN_GROUPS

    table = json.loads(re.search(r"const columns = (\{.*?\});", URL_JS).group(1))
    assert table == {"order": list(COLUMN_GROUPS), "defaults": list(DEFAULT_COLUMN_GROUPS),
                     "tokens": {g: column_token(g) for g in COLUMN_GROUPS}, "none": NO_COLUMNS}
    assert "__COLUMNS__" not in URL_JS and "__KEYS__" not in URL_JS


def test_every_regime_baseline_and_metric_is_defined():
    for code in ("C", "CE", "CEf", "CEfAf", "ZS", "OLA"):
        assert glossary.definition(code).startswith(f"Regime {code}:")
    assert set(glossary.BASELINES) == {"Pattern Variant", "Uniform Random"}
    for header in ("MA", "MA 95% CI", "log RMA", "Gap m−nb", "Compr.", "Suff.", "LOO tau", "vs best", "Differs by",
                   "s / sentence", "MA gap female−non-binary"):
        assert glossary.definition(header), header
    assert glossary.definition("no such column") is None
    markdown = glossary.glossary_markdown()
    assert "**Pattern Variant**" in markdown and "**CEfAf**" in markdown and "**Differs by**" in markdown


@pytest.fixture(scope="module")
def reference_app(tmp_path_factory):
    """The Space's callbacks over its state, called directly: no Blocks, no server, no browser."""
    from leaderboard_space.app import SpaceViews

    root = tmp_path_factory.mktemp("page")
    views = SpaceViews(str(root / "results"), str(root / "requests"),
                       reference_location=str(REPO_ROOT / "reference" / "store"))
    return {name: getattr(views, name) for name in ("open_page", "ranking_choices", "ranking_view", "across_models",
                                                     "view_from_url")}


@pytest.mark.skipif(not (REPO_ROOT / "reference" / "store").is_dir(), reason="no committed reference store")
def test_every_header_of_the_reference_views_is_defined_and_the_default_model_has_every_column(reference_app):
    from leaderboard_space import sources
    from leaderboard_space.app import VIEWS

    page = reference_app["open_page"](None, sources.REFERENCE, sources.PAPER_FILTER)
    chosen = page[2]["value"]
    cell = [c["value"] for c in reference_app["ranking_choices"](None, None, None, None, sources.REFERENCE, chosen)]
    assert cell[2] not in ("OLA", "ZS")  # those have no log RMA (no zero-shot reference / the reference itself)
    for view in VIEWS:
        shown, notes, *_ = reference_app["ranking_view"](*cell, view, sources.REFERENCE, chosen)
        table = getattr(shown, "data", shown)
        undefined = [c for c in table.columns if glossary.definition(str(c)) is None]
        assert not undefined, (view, undefined)
        assert "is empty for this model" not in notes
    across = reference_app["across_models"]([], [], [], "", "MA", True, True, sources.REFERENCE, chosen)[4]
    assert not [c for c in across.columns if glossary.definition(str(c)) is None]
    ola = [c["value"] for c in reference_app["ranking_choices"](cell[0], cell[1], "OLA", cell[3],
                                                                  sources.REFERENCE, chosen)]
    _, notes, *_ = reference_app["ranking_view"](*ola, VIEWS[0], sources.REFERENCE, chosen)
    assert "**log RMA** is empty for this model" in notes and "from scratch" in notes


def test_about_links_the_paper_the_code_and_the_hub_never_a_host_path():
    about = texts.about_markdown("test-org", glossary.glossary_markdown(), "1.0", "2.0", "6.0")
    for link in ("https://arxiv.org/abs/2406.11547", "https://github.com/braindatalab/gecobench",
                 "https://huggingface.co/datasets/test-org/geco", "https://huggingface.co/datasets/test-org/gecobench-reference"):
        assert f"({link})" in about
    assert "Frontiers in Artificial Intelligence" in about and "@article{wilming2025gecobench" in about
    local = texts.about_markdown(None, "", "1.0", "2.0", "6.0")
    assert "huggingface.co/datasets" not in local and str(REPO_ROOT) not in local
    app_source = (REPO_ROOT / "leaderboard_space" / "app.py").read_text(encoding="utf-8")
    assert "@article" not in app_source and "## The protocol" not in app_source  # the prose lives in texts.py


def test_public_location_never_shows_a_host_path(tmp_path):
    from leaderboard_space.app import public_location

    card = tmp_path / "zoo" / "binary_all" / "CE" / "seed0" / "README.md"
    card.parent.mkdir(parents=True)
    card.write_text("card")
    assert public_location(str(card), [tmp_path / "zoo"]) == "binary_all/CE/seed0/README.md"
    assert public_location(str(card), [tmp_path / "elsewhere"]) == "README.md"
    assert public_location("https://huggingface.co/org/model", []) == "https://huggingface.co/org/model"
    assert public_location("", []) == ""


@pytest.mark.skipif(not (REPO_ROOT / "reference" / "store").is_dir(), reason="no committed reference store")
def test_the_column_chooser_hides_column_groups_and_the_downloads_keep_every_column(reference_app):
    import pandas as pd

    from leaderboard_space import ranking, sources
    from leaderboard_space.app import VIEWS

    page = reference_app["open_page"](None, sources.REFERENCE, sources.PAPER_FILTER)
    chosen = page[2]["value"]
    # a non-binary config: its extra gaps belong to the Gaps group too
    cell = [c["value"] for c in reference_app["ranking_choices"]("nonbinary_subject", None, None, None,
                                                                  sources.REFERENCE, chosen)]
    assert cell[0] == "nonbinary_subject"

    def shown(groups):
        table, _, files, radar = reference_app["ranking_view"](*cell, VIEWS[0], sources.REFERENCE, chosen, groups)
        # the radar's title names the seed choice as the page does ("mean over seeds", not "seed mean over seeds")
        assert f"{cell[2]} · {ranking.ALL_SEEDS}" in radar.layout.title.text, radar.layout.title.text
        return list(getattr(table, "data", table).columns), files

    every, _ = shown(None)
    always = ["Rank", "Explainer", "MA", "MA 95% CI", "Seeds", "vs next"]
    grouped = {name: [c for c in every if c in cols or c.removesuffix(" 95% CI") in cols]
               for name, cols in ranking.COLUMN_GROUPS.items()}
    assert all(grouped.values()), grouped  # every group has columns on this model
    assert len(grouped["Gaps"]) >= 6  # male−female and each binary group − non-binary, with intervals, and the largest
    assert shown(list(ranking.COLUMN_GROUPS))[0] == every
    none, files = shown([])
    assert none == always
    for name, columns in grouped.items():
        only, _ = shown([name])
        assert only == [c for c in every if c in always or c in columns], name
    default, _ = shown(ranking.DEFAULT_COLUMN_GROUPS)
    assert "Record" not in default and ranking.GAP in default and len(default) < len(every)
    # the downloads are the full analysis table whatever is shown: every group's values and the record id
    from leaderboard_space.downloads import column_name

    csv_path = next(f for f in files if str(f).endswith(".csv"))
    # the seed choice as a file name says it (the reference has several seeds: it opens on their mean)
    assert cell[3] == ranking.ALL_SEEDS and Path(csv_path).name.endswith(f"-{cell[2]}-all-seeds.csv"), csv_path
    csv = pd.read_csv(csv_path)
    wanted = {"record_id", *[column_name(c) for cols in grouped.values() for c in cols
                             if not c.endswith("95% CI") and c != "Record"]}
    assert wanted <= set(csv.columns), wanted - set(csv.columns)
    assert "record_link" in csv.columns  # the Record column, hidden by default, is in the download
    with pytest.raises(ValueError, match="unknown column group"):
        ranking.chosen_columns(pd.DataFrame(columns=every), ["Colours"])


def test_a_url_naming_columns_sets_the_column_chooser_and_one_without_keeps_it(reference_app):
    from types import SimpleNamespace

    from leaderboard_space.page_assets import URL_KEYS

    def outputs(query):  # what a page load's first step sends to (tabs, *the URL_KEYS components)
        sent = reference_app["view_from_url"](SimpleNamespace(query_params=query))
        assert len(sent) == 1 + len(URL_KEYS)
        return dict(zip(("tab", *URL_KEYS), sent))

    assert outputs({"columns": "provenance,faithfulness"})["columns"]["value"] == ["Faithfulness", "Provenance"]
    assert outputs({"columns": "none"})["columns"]["value"] == []
    for query in ({}, {"columns": "no_such_group"}):
        assert "value" not in outputs(query)["columns"], query  # the chooser keeps its default

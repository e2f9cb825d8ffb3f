"""The Space's two sources — the reference results it opens on, and your results beside them — never pooled;
the correctness filter shown and never mixed; model card, dataset card and record file on every row."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _sample_records import make_explainer_record

from gecobench.records import explainer_score_identity, record_id_for, validate_record
from gecobench.store import LocalStore
from leaderboard_space import drilldown, ranking, sources

REFERENCE_BASE = "tiny-minilm==0.1 (local)"  # deliberately not the paper's bert-base-uncased
USER_BASE = "user-base"
REFRESH_DEFAULTS = ([], [], [], "", "MA", True, True, None, "bpi", None)  # the /refresh inputs before the scope


def geco_record(explainer: str, base_model: str, correctness_filter: str | None, ma: float,
                name: str = "binary_all/CE/seed0") -> dict:
    """A valid record of the CE model on binary_all with a given filter (None: the protocol names none)."""
    record = make_explainer_record(explainer, "CE", "binary_all", base_model, rng=random.Random(explainer),
                                   validate=False)
    record["protocol"] = {"split": "test", **({"filter": correctness_filter} if correctness_filter else {})}
    record["model"]["name"] = name
    record["metrics"]["mass_accuracy"].update(value=ma, ci_low=ma - 0.05, ci_high=ma + 0.05)
    record["record_id"] = record_id_for(explainer_score_identity(record))
    return validate_record(record)


def write_store(root: Path, records: list[dict]) -> Path:
    store = LocalStore(root)
    for record in records:
        store.append(record)
    return store.root


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sources")
    reference = write_store(root / "reference", [
        geco_record("saliency", REFERENCE_BASE, sources.PAPER_FILTER, 0.61),
        geco_record("lime", REFERENCE_BASE, sources.PAPER_FILTER, 0.55),
        geco_record("saliency", REFERENCE_BASE, sources.UNFILTERED, 0.52),
        geco_record("lime", REFERENCE_BASE, sources.UNFILTERED, 0.48),
    ])
    user = write_store(root / "user", [geco_record("deeplift", USER_BASE, None, 0.7, name="my-checkpoint")])
    checkpoints = root / "checkpoints"
    (checkpoints / "binary_all" / "CE" / "seed0").mkdir(parents=True)
    (checkpoints / "binary_all" / "CE" / "seed0" / "README.md").write_text("# model card\n")
    return {"reference": reference, "user": user, "empty": root / "empty", "root": root, "checkpoints": checkpoints}


def app_functions(demo) -> dict:
    """The Blocks' event functions by name (the views are private events; calling them is what a click does)."""
    from leaderboard_space.app import event_functions

    return event_functions(demo)


@pytest.fixture(scope="module")
def app(stores):
    from leaderboard_space.app import build_app

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(sources.CHECKPOINTS_ENV, str(stores["checkpoints"]))
        demo = build_app(str(stores["user"]), str(stores["root"] / "requests"),
                         reference_location=str(stores["reference"]))
    return app_functions(demo)


def explainers_of(api_answer: dict) -> list[str]:
    return [row[api_answer["headers"].index("Explainer")] for row in api_answer["data"]]


def test_the_space_opens_on_the_reference_labelled_with_the_records_base_model(app, stores):
    status, source, correctness, note, *_ = app["refresh"](*REFRESH_DEFAULTS)
    assert source["value"] == sources.REFERENCE
    assert "Reference results — gecobench-hub" in status and f"base model {REFERENCE_BASE}" in status
    assert f"not the paper's {sources.PAPER_BASE_MODEL}" in status
    assert str(stores["reference"]) in status and str(stores["user"]) not in status
    labels = {value: label for label, value in source["choices"]}
    assert REFERENCE_BASE in labels[sources.REFERENCE] and str(stores["user"]) in labels[sources.USER]
    assert correctness["value"] == sources.PAPER_FILTER
    assert [value for _, value in correctness["choices"]] == [sources.PAPER_FILTER, sources.UNFILTERED]
    assert "2 record(s) shown" in note and "Unfiltered" in note


def test_switching_the_source_shows_only_that_store_s_rows(app, stores):
    opened = app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0")
    assert sorted(explainers_of(opened)) == ["lime", "saliency"]
    records = [row[opened["headers"].index("Record")] for row in opened["data"]]
    # each row's record is a file of the reference store (named relative to it: no host path on the page)
    assert all((stores["reference"] / path).is_file() and not (stores["user"] / path).exists() for path in records)

    status, source, correctness, *_ = app["refresh"](*REFRESH_DEFAULTS, sources.USER, sources.PAPER_FILTER)
    assert source["value"] == sources.USER and "Your results" in status and REFERENCE_BASE not in status
    assert correctness["value"] == sources.NOT_RECORDED  # the user's record names no filter: its own choice
    mine = app["ranking_api"]("binary_all", USER_BASE, "CE", "0", sources.USER, correctness["value"])
    assert explainers_of(mine) == ["deeplift"]
    # the reference's cell does not exist in the user store, and the other way round: nothing leaks across
    assert app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0", sources.USER)["data"] == []
    assert app["ranking_api"]("binary_all", USER_BASE, "CE", "0", sources.REFERENCE)["data"] == []
    table = app["explainer_table_api"]([], [], [], "", "MA", True, True, sources.USER, sources.NOT_RECORDED)
    assert [row[0] for row in table["data"]] == ["deeplift"]
    choices = app["ranking_choices"](None, None, None, None, sources.USER, None)
    assert choices[1]["choices"] == [USER_BASE]


def test_filters_are_never_mixed_in_one_ranking(app):
    paper = app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0", sources.REFERENCE, sources.PAPER_FILTER)
    unfiltered = app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0", sources.REFERENCE, sources.UNFILTERED)
    protocol = paper["headers"].index("Protocol")
    assert {row[protocol] for row in paper["data"]} == {f"split=test; filter={sources.PAPER_FILTER}"}
    assert {row[protocol] for row in unfiltered["data"]} == {f"split=test; filter={sources.UNFILTERED}"}
    ma = paper["headers"].index("MA")
    assert [row[ma] for row in paper["data"]] == [0.61, 0.55]
    assert [row[ma] for row in unfiltered["data"]] == [0.52, 0.48]
    # the All models table averages within one filter only: two explainers, not four or a pooled two
    table = app["explainer_table_api"]([], [], [], "", "MA", True, True, sources.REFERENCE, sources.UNFILTERED)
    assert sorted(row[0] for row in table["data"]) == ["lime", "saliency"]
    assert any("0.520" in str(cell) for cell in table["data"][0])
    # the pivot and the downloads follow the same choice, and the files name the source and the filter
    from leaderboard_space.app import PIVOT_VIEW

    pivot, _, files, _ = app["ranking_view"]("binary_all", REFERENCE_BASE, "CE", "0", PIVOT_VIEW, sources.REFERENCE,
                                             sources.UNFILTERED)
    assert sorted(pivot.data["CE"]) == [0.48, 0.52]  # a Styler now (intervals formatted beside the values)
    assert all(Path(f).name.startswith(f"reference-{sources.UNFILTERED}-pivot") for f in files)
    # a filter the source does not have falls back to the paper's
    assert app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0", sources.REFERENCE, "other")["data"] == \
        paper["data"]


def test_every_ranking_row_and_the_drill_down_link_model_card_dataset_card_and_record(app, stores):
    answer = app["ranking_api"]("binary_all", REFERENCE_BASE, "CE", "0")
    row = dict(zip(answer["headers"], answer["data"][0]))
    # the cards and the record by their place in their checkpoint root, the package and the store: the page never
    # shows a path of the machine that serves it
    assert row["Model card"] == "binary_all/CE/seed0/README.md"
    assert (stores["checkpoints"] / row["Model card"]).is_file()
    assert row["Dataset card"] == "geco_dataset/cards/geco_README.md" and (REPO_ROOT / row["Dataset card"]).is_file()
    assert row["Record"].startswith("explainer_score/") and not Path(row["Record"]).is_absolute()
    mine = app["ranking_api"]("binary_all", USER_BASE, "CE", "0", sources.USER, sources.NOT_RECORDED)
    assert dict(zip(mine["headers"], mine["data"][0]))["Model card"] == ""  # no checkpoint found: no dead link
    heat = app["drill_view"]("binary_all", REFERENCE_BASE, "CE", "0", None, sources.REFERENCE, sources.PAPER_FILTER)
    assert "Provenance of these rows" in heat and row["Record"] in heat and row["Model card"] in heat
    assert heat.count("<li>") == 2  # the cell's two records of the paper's filter, not the unfiltered ones


def test_an_empty_or_missing_reference_falls_back_to_your_results_and_says_why(stores):
    from leaderboard_space.app import build_app

    stores["empty"].mkdir(exist_ok=True)
    for missing in (stores["empty"], stores["root"] / "no-such-folder"):
        functions = app_functions(build_app(str(stores["user"]), str(stores["root"] / "requests"),
                                            reference_location=str(missing)))
        status, source, *_ = functions["refresh"](*REFRESH_DEFAULTS)
        assert source["value"] == sources.USER
        assert str(missing) in status and "showing your results instead" in status
        assert {v: label for label, v in source["choices"]}[sources.REFERENCE] == \
            f"Reference results — none yet ({missing})"
        assert explainers_of(functions["ranking_api"]("binary_all", USER_BASE, "CE", "0", sources.USER,
                                                      sources.NOT_RECORDED)) == ["deeplift"]


def test_hidden_reference_and_an_empty_user_store_are_said_so(stores):
    from leaderboard_space.app import build_app

    with pytest.raises(ValueError, match="show_reference=False"):
        build_app(str(stores["user"]), reference_location=str(stores["reference"]), show_reference=False)
    hidden = app_functions(build_app(str(stores["user"]), str(stores["root"] / "requests"), show_reference=False))
    _, source, *_ = hidden["refresh"](*REFRESH_DEFAULTS)
    assert [value for _, value in source["choices"]] == [sources.USER] and source["value"] == sources.USER

    empty_user = app_functions(build_app(str(stores["empty"]), str(stores["root"] / "requests"),
                                         reference_location=str(stores["reference"])))
    _, source, *_ = empty_user["refresh"](*REFRESH_DEFAULTS)
    assert source["value"] == sources.REFERENCE
    assert {v: label for label, v in source["choices"]}[sources.USER].endswith("— empty")


def test_model_and_dataset_cards_link_the_hub_and_show_local_paths(tmp_path):
    assert sources.model_card({"hub_id": "owner/model"}) == "https://huggingface.co/owner/model"
    assert sources.model_card({"card_url": "https://example.org/card"}) == "https://example.org/card"
    assert sources.model_card({"name": "owner/hub-model"}) == "https://huggingface.co/owner/hub-model"
    assert sources.model_card({"name": "binary_all/CE/seed0"}) == ""  # a zoo name, not found: no link
    (tmp_path / "binary_all" / "CE" / "seed0").mkdir(parents=True)
    card = tmp_path / "binary_all" / "CE" / "seed0" / "README.md"
    card.write_text("# card\n")
    assert sources.model_card({"name": "binary_all/CE/seed0"}, [tmp_path / "other", tmp_path]) == str(card)
    assert sources.dataset_card("org/gecobench-results") == "https://huggingface.co/datasets/org/geco"
    assert sources.dataset_card(None) == str(sources.GECO_CARD)

    record = geco_record("saliency", REFERENCE_BASE, sources.PAPER_FILTER, 0.6)
    html = drilldown.provenance_html([record], lambda r: "https://huggingface.co/datasets/o/r/blob/main/x.json",
                                     lambda r: ("", "/local/card.md"))
    assert '<a href="https://huggingface.co/datasets/o/r/blob/main/x.json"' in html
    assert "<code>/local/card.md</code>" in html and "model card: –" in html
    assert ranking.model_ranking([record])[["Model card", "Dataset card"]].iloc[0].tolist() == ["", ""]


def test_filter_choices_put_the_paper_first_and_the_label_follows_the_records():
    records = [geco_record("lime", "bert-base-uncased", f, 0.5) for f in (sources.UNFILTERED, sources.PAPER_FILTER)]
    assert [v for _, v in sources.filter_choices(records)] == [sources.PAPER_FILTER, sources.UNFILTERED]
    assert sources.chosen_filter(records, None) == sources.PAPER_FILTER
    assert sources.chosen_filter(records[:1], sources.PAPER_FILTER) == sources.UNFILTERED
    assert sources.chosen_filter([], sources.PAPER_FILTER) is None
    assert [label.endswith("(1 records)") for label, _ in sources.filter_choices(records[:1])] == [False, True]
    assert len(sources.with_filter(records, sources.UNFILTERED)) == 1
    label = sources.reference_label(records)
    assert "base model bert-base-uncased" in label and "not the paper's" not in label


def test_the_command_line_refuses_reference_and_no_reference_together(capsys):
    from leaderboard_space.app import main

    with pytest.raises(SystemExit) as stopped:
        main(["--reference", "somewhere", "--no-reference", "--port", "1"])
    assert stopped.value.code == 2 and "--no-reference" in capsys.readouterr().err


def test_a_page_load_shows_the_ranking_without_building_the_long_table(tmp_path, monkeypatch):
    """The long table (All models tab) costs as much as the whole first view on large stores: the page load's
    first steps must not build it; the All models step builds it once per store change and reuses it."""
    from leaderboard_space import app as app_module
    from leaderboard_space import tables

    built = []
    real_records_frame = tables.records_frame
    monkeypatch.setattr(tables, "records_frame", lambda records: built.append(1) or real_records_frame(records))
    root = write_store(tmp_path / "user", [geco_record("saliency", USER_BASE, sources.PAPER_FILTER, 0.6),
                                           geco_record("lime", USER_BASE, sources.PAPER_FILTER, 0.5)])
    functions = app_functions(app_module.build_app(str(root), str(tmp_path / "requests"), show_reference=False))
    page = functions["open_page"](None, sources.USER, sources.PAPER_FILTER)
    cell = [update["value"] for update in functions["ranking_choices"](None, None, None, None, sources.USER,
                                                                        page[2]["value"])]
    table, *_ = functions["ranking_view"](*cell, None, sources.USER, page[2]["value"])
    assert sorted(table.data["Explainer"]) == ["lime", "saliency"]
    assert built == []  # the Ranking tab came from the records themselves

    across = functions["across_models"]([], [], [], "", "MA", True, True, sources.USER, page[2]["value"])
    assert sorted(across[4]["Explainer"]) == ["lime", "saliency"] and len(built) == 1
    functions["open_page"](None, sources.USER, sources.PAPER_FILTER)  # nothing new in the store: table kept
    functions["across_models"]([], [], [], "", "MA", True, True, sources.USER, page[2]["value"])
    assert len(built) == 1

    LocalStore(root).append(geco_record("deeplift", USER_BASE, sources.PAPER_FILTER, 0.7))
    functions["open_page"](None, sources.USER, sources.PAPER_FILTER)
    assert len(built) == 1  # a changed store drops the old table; the next All models step builds the new one
    across = functions["across_models"]([], [], [], "", "MA", True, True, sources.USER, page[2]["value"])
    assert sorted(across[4]["Explainer"]) == ["deeplift", "lime", "saliency"] and len(built) == 2


def test_the_reference_drill_down_says_its_side_files_are_for_the_paper_s_filter_only(app):
    """The reference ships per-sentence side files for the paper's filter only: the unfiltered view says so and
    points to the filter that has them, instead of blaming how the records were written."""
    _, unfiltered_message = app["drill_sentences"]("binary_all", REFERENCE_BASE, "CE", "0", "", sources.REFERENCE,
                                                   sources.UNFILTERED)
    assert "paper's filter only" in unfiltered_message
    _, paper_message = app["drill_sentences"]("binary_all", REFERENCE_BASE, "CE", "0", "", sources.REFERENCE,
                                              sources.PAPER_FILTER)
    assert "paper's filter only" not in paper_message

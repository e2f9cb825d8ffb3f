"""The bootstrap over templates of BPI/BRI: known answers, determinism, the resampling unit, the
record fields and their validation, and the Space's Spanish tab showing the intervals."""

from __future__ import annotations

import copy
import re

import numpy as np
import pandas as pd
import pytest
from _sample_records import make_bias_record

from gecobench.formatting import format_interval
from gecobench.metrics.bias_indices import bias_indices, overall_bias
from gecobench.metrics.bias_indices_bootstrap import (
    BootstrapSettings,
    indices_from_sums,
    resample_counts,
    template_bootstrap,
    template_sums,
)
from gecobench.records import (
    RecordValidationError,
    validate_record,
    validate_stored_record,
)
from gecobench.spanish.pipeline import default_schemes, load_lexicons
from gecobench.spanish.recorded import recorded_record, template_of_sentence
from leaderboard_space import spanish_view

LEXICON = {"alto": "BODY", "alta": "BODY", "listo": "MIND", "lista": "MIND", "amable": "SOCIAL"}
K = 3
SETTINGS = BootstrapSettings(n_resamples=400, seed=7)


def template_rows(template: int, male: list[str], female: list[str], subjects: int = 3,
                  probabilities: tuple[float, ...] = (0.5, 0.3, 0.2)) -> dict[str, list]:
    """One template's prediction rows: every subject predicts the same top-K words per gender."""
    rows: dict[str, list] = {name: [] for name in ("group", "word", "probability", "rank", "is_adjective", "template")}
    for _ in range(subjects):
        for group, words in (("male", male), ("female", female)):
            for rank, (word, probability) in enumerate(zip(words, probabilities), start=1):
                rows["group"].append(group)
                rows["word"].append(word)
                rows["probability"].append(probability)
                rows["rank"].append(rank)
                rows["is_adjective"].append(word != "el")
                rows["template"].append(template)
    return rows


def concat(*tables: dict[str, list]) -> dict[str, list]:
    return {name: [v for table in tables for v in table[name]] for name in tables[0]}


def point_values(rows: dict[str, list]) -> dict:
    plain = {name: values for name, values in rows.items() if name != "template"}
    return bias_indices(**plain, lexicon=LEXICON, k=K)


# Within a template the predictions are mixed (several categories, adjectives and not), so resampling rows would
# move the shares; only the templates as wholes are identical.
MIXED_MALE, MIXED_FEMALE = ["alto", "listo", "el"], ["amable", "alta", "lista"]
IDENTICAL = concat(*(template_rows(t, MIXED_MALE, MIXED_FEMALE) for t in range(8)))
OUTLIER = concat(*(template_rows(t, MIXED_MALE, MIXED_FEMALE) for t in range(7)),
                 template_rows(7, ["alto", "alto", "alto"], ["lista", "lista", "amable"]))
# Eight different templates (the male BODY/MIND balance moves with the template): a continuous spread.
VARIED = concat(*(template_rows(t, MIXED_MALE, MIXED_FEMALE, probabilities=(0.5, 0.05 + 0.1 * t, 0.2))
                  for t in range(8)))


def intervals(block: dict) -> list[float]:
    """Every ci_low and ci_high of an uncertainty block, in order (NaN for null)."""
    found: list[float] = []
    if isinstance(block, dict):
        if "ci_low" in block:
            return [np.nan if block[end] is None else block[end] for end in ("ci_low", "ci_high")]
        for value in block.values():
            found.extend(intervals(value))
    return found


def test_identical_templates_give_zero_width_intervals_at_the_point_value():
    block = template_bootstrap(**IDENTICAL, lexicon=LEXICON, k=K, settings=SETTINGS)
    point = point_values(IDENTICAL)
    assert block["n_templates"] == 8 and block["resampling_unit"] == "template"
    for index in ("bpi", "bri"):
        for category, by_group in point[index].items():
            for group, value in by_group.items():
                interval = block[index][category][group]
                assert interval["ci_low"] == pytest.approx(value) and interval["ci_high"] == pytest.approx(value)
        overall = overall_bias(point["bias"][index])
        assert overall > 0
        assert block["overall"][index]["ci_low"] == pytest.approx(overall)
        assert block["overall"][index]["ci_high"] == pytest.approx(overall)
        assert block["per_template"]["overall"][index] == pytest.approx([overall] * 8)


def test_one_outlier_template_widens_the_interval_to_cover_both():
    block = template_bootstrap(**OUTLIER, lexicon=LEXICON, k=K, settings=SETTINGS)
    common = point_values(template_rows(0, MIXED_MALE, MIXED_FEMALE))
    everything = point_values(OUTLIER)
    for index in ("bpi", "bri"):
        interval = block["bias"][index]["BODY"]
        usual, full = common["bias"][index]["BODY"], everything["bias"][index]["BODY"]
        assert usual < full  # the outlier's men are all "alto": more BODY on the male side
        # (7/8)^8 ≈ 34 % of the resamples miss the outlier, so the low end is the usual templates' value
        assert interval["ci_low"] == pytest.approx(usual)
        assert interval["ci_high"] >= full and interval["ci_high"] > interval["ci_low"]
        alone = block["per_template"]["overall"][index]
        assert alone[:7] == pytest.approx([overall_bias(common["bias"][index])] * 7)
        assert alone[7] != pytest.approx(alone[0])
        outlier_alone = point_values(template_rows(7, ["alto", "alto", "alto"], ["lista", "lista", "amable"]))
        assert block["per_template"]["bias"][index]["BODY"] == pytest.approx(
            [usual] * 7 + [outlier_alone["bias"][index]["BODY"]])


def test_deterministic_given_the_seed():
    first = template_bootstrap(**VARIED, lexicon=LEXICON, k=K, settings=SETTINGS)
    again = template_bootstrap(**VARIED, lexicon=LEXICON, k=K, settings=SETTINGS)
    other = template_bootstrap(**VARIED, lexicon=LEXICON, k=K, settings=BootstrapSettings(n_resamples=400, seed=8))
    assert first == again
    assert first["seed"] == 7 and first["n_resamples"] == 400
    assert intervals(first) != intervals(other)


def test_templates_are_resampled_whole_not_rows():
    # Each template: male "alto" and "listo" with equal probability (and rank score sums that match), so every
    # template alone — and any multiset of templates — gives male BODY exactly 50 %, whatever the template's
    # total mass. Drawing rows independently would unbalance BODY and MIND and widen the interval.
    tables = []
    for template, scale in enumerate((1.0, 0.2, 0.6, 0.05, 0.9, 0.3, 0.7, 0.4)):
        tables.append(template_rows(template, ["alto", "listo"], ["lista", "amable"], subjects=2,
                                    probabilities=(0.4 * scale, 0.4 * scale)))
        # the same two words in swapped ranks, so the rank scores of BODY and MIND balance too
        tables.append(template_rows(template, ["listo", "alto"], ["amable", "lista"], subjects=2,
                                    probabilities=(0.4 * scale, 0.4 * scale)))
    rows = concat(*tables)
    block = template_bootstrap(**rows, lexicon=LEXICON, k=2, settings=SETTINGS)
    for index in ("bpi", "bri"):
        assert block[index]["BODY"]["male"]["ci_low"] == pytest.approx(50.0)
        assert block[index]["BODY"]["male"]["ci_high"] == pytest.approx(50.0)
    # the same rows with every row its own "template" (= resampling rows) do move the share
    by_row = dict(rows, template=list(range(len(rows["group"]))))
    row_block = template_bootstrap(**by_row, lexicon=LEXICON, k=2, settings=SETTINGS)
    assert row_block["bpi"]["BODY"]["male"]["ci_high"] - row_block["bpi"]["BODY"]["male"]["ci_low"] > 5


def test_a_resample_equals_bias_indices_on_the_drawn_templates_rows():
    """The weighted sums are the bias_indices of the table holding each drawn template's rows as often as drawn."""
    sums = template_sums(**OUTLIER, lexicon=LEXICON, k=K)
    counts = resample_counts(len(sums.template_ids), 5, seed=3)
    resampled = indices_from_sums(sums, counts)
    by_template = {t: {name: [v for v, tt in zip(values, OUTLIER["template"]) if tt == t]
                       for name, values in OUTLIER.items()} for t in sums.template_ids}
    for draw, row in enumerate(counts):
        assert row.sum() == len(sums.template_ids)
        drawn = concat(*(by_template[t] for t, n in zip(sums.template_ids, row) for _ in range(n)))
        direct = point_values(drawn)
        for index in ("bpi", "bri"):
            for ci, category in enumerate(sums.categories):
                assert resampled[f"bias_{index}"][draw, ci] == pytest.approx(direct["bias"][index][category])
                for gi, group in enumerate(sums.groups):
                    assert resampled[index][draw, gi, ci] == pytest.approx(direct[index][category][group])
            assert resampled[f"overall_{index}"][draw] == pytest.approx(overall_bias(direct["bias"][index]))


def test_all_templates_once_give_the_point_values():
    sums = template_sums(**OUTLIER, lexicon=LEXICON, k=K)
    full = indices_from_sums(sums, np.ones(len(sums.template_ids)))
    point = point_values(OUTLIER)
    for index in ("bpi", "bri"):
        for ci, category in enumerate(sums.categories):
            assert full[f"bias_{index}"][ci] == pytest.approx(point["bias"][index][category], abs=1e-12)


@pytest.mark.parametrize("change, message", [
    (lambda rows: dict(rows, template=[0] * len(rows["group"])), "at least two templates"),
    (lambda rows: dict(rows, template=rows["template"][:-1]), "template has"),
    (lambda rows: dict(rows, template=[True] * len(rows["group"])), "row 0 is True"),
    (lambda rows: dict(rows, template="0"), "one template id per prediction row"),
])
def test_bad_template_input_is_named(change, message):
    with pytest.raises(ValueError, match=message):
        template_bootstrap(**change(IDENTICAL), lexicon=LEXICON, k=K, settings=SETTINGS)


@pytest.mark.parametrize("kwargs, message", [
    ({"n_resamples": 0}, "n_resamples"), ({"seed": -1}, "seed"), ({"confidence": 1.0}, "confidence"),
    ({"n_resamples": True}, "n_resamples"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BootstrapSettings(**kwargs)


def test_published_sentences_map_to_the_eight_templates():
    assert template_of_sentence(pd.Series([0, 11, 12, 95]), "f.tsv").tolist() == [0, 0, 1, 7]
    with pytest.raises(ValueError, match="sentence 96 is outside 0..95"):
        template_of_sentence(pd.Series([0, 96]), "f.tsv")


# ---------------------------------------------------------------- records


@pytest.fixture(scope="module")
def recorded(spanish_dir):
    """One recorded (published-predictions) record with intervals, and the file's rows."""
    path = spanish_dir / "predictions" / "top10" / "BSC-TeMU_roberta-base-bne.tsv"
    lexicons = load_lexicons(default_schemes(10), data_dir=spanish_dir)
    return recorded_record(path, "BSC-TeMU/roberta-base-bne", 10, lexicons), path, lexicons


def test_recorded_record_carries_the_bootstrap_of_its_rows(recorded):
    from gecobench.spanish.recorded import read_prediction_file

    record, path, lexicons = recorded
    validate_stored_record(record)
    settings = BootstrapSettings()
    assert record["protocol"]["bootstrap"] == settings.describe()
    frame = read_prediction_file(path, k=10)
    rows = {name: frame[name].tolist() for name in ("group", "word", "probability", "rank", "is_adjective")}
    for scheme, lexicon in lexicons.items():
        stored = record["schemes"][scheme]
        direct = template_bootstrap(**rows, template=(frame["sentence"] // 12).tolist(), lexicon=lexicon, k=10,
                                    settings=settings)
        assert stored["uncertainty"]["n_templates"] == 8
        assert intervals(stored["uncertainty"]) == pytest.approx(intervals(direct), nan_ok=True)
        for index in ("bpi", "bri"):
            assert stored["overall"][index] == pytest.approx(overall_bias(stored["bias"][index]))
            interval = stored["uncertainty"]["overall"][index]
            assert interval["ci_low"] < interval["ci_high"]
            assert len(stored["uncertainty"]["per_template"]["overall"][index]) == 8


def test_live_record_carries_the_bootstrap_of_its_table(tmp_path, spanish_dir):
    from gecobench.spanish import get_tagger, run_live
    from tests.spanish_helpers import make_tiny_bert_mlm

    model = make_tiny_bert_mlm(tmp_path / "bert")
    settings = BootstrapSettings(n_resamples=200, seed=3)
    record, table = run_live(str(model), k=5, data_dir=spanish_dir, tagger=get_tagger("cess", spanish_dir),
                             schemes=("wiggins",), bootstrap=settings, progress=False)
    validate_stored_record(record)
    assert record["protocol"]["bootstrap"] == settings.describe()
    assert sorted(set(table["template"])) == list(range(8))
    rows = {name: table[name] for name in ("group", "word", "probability", "rank", "is_adjective", "template")}
    direct = template_bootstrap(**rows, lexicon=load_lexicons(("wiggins",), spanish_dir)["wiggins"], k=5,
                                settings=settings)
    assert intervals(record["schemes"]["wiggins"]["uncertainty"]) == pytest.approx(intervals(direct), nan_ok=True)


def _mutated(record: dict, change) -> dict:
    copied = copy.deepcopy(record)
    change(copied["schemes"]["wiggins"]["uncertainty"], copied)
    return copied


@pytest.mark.parametrize("change, message", [
    (lambda u, r: u["bias"]["bpi"].update(unknown={"ci_low": 3.0, "ci_high": 1.0}), "ci_low 3.0 > ci_high 1.0"),
    (lambda u, r: u["per_template"]["overall"]["bpi"].pop(), "7 values for n_templates 8"),
    (lambda u, r: u["per_template"]["bias"]["bri"]["unknown"].append(1.0), "9 values for n_templates 8"),
    (lambda u, r: u.update(seed=5), "seed not as in protocol.bootstrap"),
    (lambda u, r: r["protocol"].pop("bootstrap"), "intervals without protocol.bootstrap"),
    (lambda u, r: u["overall"]["bri"].update(ci_high=250.0), "greater than the maximum of 200"),
    (lambda u, r: u.update(resampling_unit="sentence"), "'template' was expected"),
    (lambda u, r: u["bpi"]["unknown"]["male"].update(ci_low="low"), "is not of type"),
    (lambda u, r: u.pop("overall"), "'overall' is a required property"),
])
def test_validation_rejects_broken_intervals(recorded, change, message):
    record = _mutated(recorded[0], change)
    with pytest.raises(RecordValidationError, match=re.escape(message)):
        validate_record(record)


def test_records_without_intervals_stay_valid():
    old = make_bias_record("old/model")
    assert "uncertainty" not in old["schemes"]["supersenses_top10"]
    validate_record(old)


# ---------------------------------------------------------------- the Space's Spanish tab


def test_spanish_cells_use_the_shared_interval_format_at_two_digits():
    assert format_interval(0.1234, 0.05, 0.2, digits=2) == "0.12 [0.05, 0.20]"
    assert format_interval(-1.5, -2.25, 0.5, digits=2, signed=True) == "-1.50 [-2.25, +0.50]"
    assert format_interval(3.0, None, 4.0, digits=2) == "3.00"
    assert format_interval(None, 1.0, 2.0, digits=2) == "–"


def test_spanish_tab_shows_each_value_with_its_interval(recorded):
    record = recorded[0]
    old = make_bias_record("old/model")
    table = spanish_view.scheme_table([record, old], "supersenses_top10", "bpi")
    html = spanish_view.scheme_table_html(table, "supersenses_top10", "bpi")
    uncertainty = record["schemes"]["supersenses_top10"]["uncertainty"]
    overall = overall_bias(record["schemes"]["supersenses_top10"]["bias"]["bpi"])
    expected = format_interval(overall, uncertainty["overall"]["bpi"]["ci_low"],
                               uncertainty["overall"]["bpi"]["ci_high"], digits=2)
    assert re.fullmatch(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", expected)
    assert f">{expected}</td>" in html
    body = record["schemes"]["supersenses_top10"]["bias"]["bpi"]["BODY"]
    body_interval = uncertainty["bias"]["bpi"]["BODY"]
    body_text = format_interval(body, body_interval["ci_low"], body_interval["ci_high"], digits=2, signed=True)
    assert f">{body_text}</td>" in html
    assert "bootstrap over the 8 templates" in html and "1 older record(s) without intervals" in html
    # the older record's row: values alone, no brackets
    old_row = html.split("old/model")[1].split("</tr>")[0]
    assert "[" not in old_row and re.search(r">[+-]\d+\.\d\d</td>", old_row)
    # interval ends are numbers in the table (and its download), rounded to two decimals
    assert table.loc[table["Model"].str.startswith("BSC"), "BODY CI low"].item() == round(body_interval["ci_low"], 2)
    assert np.isnan(table.loc[table["Model"].str.startswith("old"), "BODY CI low"].item())


def test_spanish_tab_without_any_interval_renders_as_before():
    records = [make_bias_record(f"model/{i}") for i in range(2)]
    table = spanish_view.scheme_table(records, "supersenses_top10", "bpi")
    assert not [c for c in table.columns if c.endswith((spanish_view.CI_LOW, spanish_view.CI_HIGH))]
    html = spanish_view.scheme_table_html(table, "supersenses_top10", "bpi")
    assert "[" not in html.split("<tbody>")[1] and "bootstrap" not in html


def test_spanish_tab_shows_one_record_per_unit_preferring_intervals(recorded):
    from gecobench.records import model_bias_identity, record_id_for

    with_intervals = recorded[0]
    before = copy.deepcopy(with_intervals)  # the same unit as stored before intervals existed
    before["protocol"].pop("bootstrap")
    for block in before["schemes"].values():
        block.pop("uncertainty")
        block.pop("overall")
    before["record_id"] = record_id_for(model_bias_identity(before))
    validate_stored_record(before)
    assert before["record_id"] != with_intervals["record_id"]
    other = make_bias_record("other/model")
    shown = spanish_view.current_records([before, other, with_intervals])
    assert [r["record_id"] for r in shown] == [other["record_id"], with_intervals["record_id"]]
    assert spanish_view.current_records([before, other]) == [before, other]


def test_published_comparison_carries_the_recomputation_interval(recorded, spanish_dir):
    record = recorded[0]
    table = spanish_view.published_comparison([record], spanish_dir / "published", "bri")
    row = table[table["Category"] == "SOCIAL"].iloc[0]
    interval = record["schemes"]["supersenses_top10"]["uncertainty"]["bias"]["bri"]["SOCIAL"]
    assert row["Recomputed CI low"] == round(interval["ci_low"], 2)
    assert row["Recomputed CI high"] == round(interval["ci_high"], 2)
    assert row["Recomputed CI low"] <= row["Recomputed"] <= row["Recomputed CI high"]


def test_pictures_show_the_interval_where_the_record_has_one(recorded, tmp_path):
    from gecobench.spanish.plots import (
        heat_table_figure,
        heat_table_html,
        scheme_table_html,
    )

    record = recorded[0]
    body = record["schemes"]["wiggins"]["bias"]["bpi"]
    category = next(c for c, v in body.items() if v)
    interval = record["schemes"]["wiggins"]["uncertainty"]["bias"]["bpi"][category]
    expected = f"{body[category]:+.4f} [{interval['ci_low']:+.4f}, {interval['ci_high']:+.4f}]"
    assert f">{expected}</td>" in heat_table_html(record)
    assert f">{expected}</td>" in scheme_table_html([record, make_bias_record("old/model", schemes=("wiggins",))],
                                                    "wiggins")
    assert "bootstrap over the templates" in heat_table_html(record)
    texts = [t.get_text() for t in heat_table_figure(record).axes[0].texts]
    assert f"{body[category]:+.2f}\n[{interval['ci_low']:+.2f}, {interval['ci_high']:+.2f}]" in texts


def test_overall_bias_stays_within_its_bound():
    from gecobench.metrics.bias_indices import OVERALL_BIAS_MAX, overall_bias_array

    # male all BODY, female all MIND: 200 in exact arithmetic; rounding of the shares may add a few ulps
    assert overall_bias({"BODY": 100.00000000000003, "MIND": -100.00000000000003}) == OVERALL_BIAS_MAX
    assert overall_bias_array(np.array([[100.00000000000003, -100.00000000000003, 5.0]]),
                              ["BODY", "MIND", "unknown"]).tolist() == [OVERALL_BIAS_MAX]
    rows = concat(*(template_rows(t, ["alto", "alta", "alto"], ["lista", "listo", "lista"],
                                  probabilities=(0.1, 0.2, 0.3 + 0.01 * t)) for t in range(8)))
    block = template_bootstrap(**rows, lexicon=LEXICON, k=K, settings=SETTINGS)
    assert block["overall"]["bpi"]["ci_high"] <= OVERALL_BIAS_MAX
    assert block["overall"]["bpi"]["ci_low"] == pytest.approx(OVERALL_BIAS_MAX)


def test_spanish_tab_hover_shows_each_templates_value(recorded):
    record = recorded[0]
    table = spanish_view.scheme_table([record], "supersenses_top10", "bri")
    html = spanish_view.scheme_table_html(table, "supersenses_top10", "bri")
    spread = record["schemes"]["supersenses_top10"]["uncertainty"]["per_template"]
    overall = ", ".join(f"{v:.2f}" for v in spread["overall"]["bri"])
    body = ", ".join("–" if v is None else f"{v:.2f}" for v in spread["bias"]["bri"]["BODY"])
    assert f'title="each template alone: {overall}"' in html
    assert f'title="each template alone: {body}"' in html

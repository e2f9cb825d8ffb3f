"""Dataset co-occurrence bias (GECO) and the BPI/BRI bias indices (Spanish masked LMs)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gecobench.metrics.bias_indices import (
    bias_indices,
    group_difference,
    invert_lexicon,
    read_prediction_file,
)
from gecobench.metrics.cooccurrence import (
    DEFAULT_TERMS,
    cooccurrence_bias,
    geco_cooccurrence_table,
)


def test_cooccurrence_hand_computed_with_default_terms():
    words = [
        ["He", "gave", "his", "dog", "a", "dog", "bone", "."],  # slots he + his -> 2 x {gave, dog, a, bone} = 8
        ["She", "left", "."],  # 1 x {left} = 1
        ["They", "saw", "themselves", "and", "him", "!"],  # they + themselves -> 2 x {saw, and} = 4 (him dropped)
    ]
    out = cooccurrence_bias(words, ["male", "female", "non-binary"])
    assert out["counts"] == {"male": 8, "female": 1, "non-binary": 4}
    assert out["bias_c"]["male"] == pytest.approx(8 / 13)
    assert sum(out["bias_c"].values()) == pytest.approx(1.0)


def test_cooccurrence_slot_counts_once_and_terms_are_case_insensitive():
    out = cooccurrence_bias([["HIS", "his", "him", "car"]], ["male"], {"male": [["him", "his"]], "female": [["her"]]})
    assert out["counts"] == {"male": 1, "female": 0}


@pytest.mark.parametrize(
    "words, groups, terms, message",
    [
        ([["he"]], ["male", "female"], None, "group has 2"),
        ([["he"]], ["robot"], None, "sentence 0 has group 'robot'"),
        ([], [], None, "empty"),
        ([["he"], "she runs"], ["male", "female"], None, "words: sentence 1"),
        ([["he"]], ["male"], {"male": "he"}, "terms\\['male'\\]"),
    ],
)
def test_cooccurrence_bad_input(words, groups, terms, message):
    with pytest.raises(ValueError, match=message):
        cooccurrence_bias(words, groups, terms)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["he", "his", "she", "her", "they", "their", "cat", "ran", "red", ".", "x"]),
                     max_size=10),
            st.sampled_from(sorted(DEFAULT_TERMS)),
        ),
        min_size=1,
        max_size=15,
    )
)
def test_cooccurrence_shares_sum_to_one(rows):
    out = cooccurrence_bias([w for w, _ in rows], [g for _, g in rows])
    total = sum(out["counts"].values())
    if total:
        assert sum(out["bias_c"].values()) == pytest.approx(1.0)
        assert all(0 <= v <= 1 for v in out["bias_c"].values())
    else:
        assert all(math.isnan(v) for v in out["bias_c"].values())


def test_geco_non_binary_configs_match_the_paper(geco_dir: Path):
    table = geco_cooccurrence_table(str(geco_dir))
    assert set(table) == {"binary_gender_all", "binary_gender_subj", "non_binary_gender_all", "non_binary_gender_subj"}
    for group in ("female", "male", "non-binary"):
        assert table["non_binary_gender_all"]["bias_c"][group] == pytest.approx(0.33, abs=0.01)
    subj = table["non_binary_gender_subj"]["bias_c"]
    assert subj["female"] == pytest.approx(0.33, abs=0.01)
    assert subj["male"] == pytest.approx(0.36, abs=0.01)
    assert subj["non-binary"] == pytest.approx(0.30, abs=0.01)
    assert set(table["binary_gender_all"]["bias_c"]) == {"female", "male"}


def _rows(**overrides):
    rows = dict(
        group=["male", "male", "male", "female", "female", "female"],
        word=["Alto", "alegre", "el", "alta", "triste", "la"],
        probability=[0.4, 0.2, 0.2, 0.1, 0.3, 0.2],
        rank=[1, 2, 3, 1, 2, 3],
        is_adjective=[True, True, False, True, True, False],
        lexicon={"alto": "BODY", "alta": "BODY", "alegre": "FEELING", "triste": "FEELING"},
        k=3,
    )
    rows.update(overrides)
    return rows


def test_bias_indices_hand_computed():
    out = bias_indices(**_rows())
    # male: p = 0.4 BODY, 0.2 FEELING, 0.2 unknown (total 0.8); RSV adjectives: BODY 3, FEELING 2.
    assert out["bpi"]["BODY"]["male"] == pytest.approx(50.0)
    assert out["bpi"]["FEELING"]["male"] == pytest.approx(25.0)
    assert out["bpi"]["unknown"]["male"] == pytest.approx(25.0)
    assert out["bri"]["BODY"]["male"] == pytest.approx(60.0)
    # female: p = 0.1 BODY, 0.3 FEELING, 0.2 unknown (total 0.6); RSV: BODY 3, FEELING 2.
    assert out["bpi"]["FEELING"]["female"] == pytest.approx(50.0)
    assert out["bias"]["bpi"]["BODY"] == pytest.approx(50.0 - 100 * 0.1 / 0.6)
    assert out["bias"]["bri"]["BODY"] == pytest.approx(0.0)
    body = out["details"]["BODY"]["male"]
    assert body["n_predictions"] == 1 and body["sum_rsv"] == 3 and body["mean_probability"] == pytest.approx(0.4)
    assert out["details"]["unknown"]["male"]["n_adjectives"] == 0
    assert math.isnan(out["details"]["unknown"]["male"]["mean_rsv"])


def test_group_difference_for_more_groups_is_mean_absolute_pairwise():
    assert group_difference({"a": 10.0, "b": 20.0, "c": 40.0}) == pytest.approx((10 + 30 + 20) / 3)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(word=["a"]), "word has 1"),
        (dict(probability=[0.4, 0.2, float("nan"), 0.1, 0.3, 0.2]), "probability: row 2"),
        (dict(probability=[0.4, 0.2, -0.2, 0.1, 0.3, 0.2]), "probability: row 2"),
        (dict(rank=[1, 2, 4, 1, 2, 3]), "rank: row 2"),
        (dict(rank=[0, 2, 3, 1, 2, 3]), "rank: row 0"),
        (dict(group=[], word=[], probability=[], rank=[], is_adjective=[]), "empty"),
        (dict(is_adjective=[True, True, "yes", True, True, False]), "is_adjective: row 2"),
        (dict(k=0), "k must be"),
    ],
)
def test_bias_indices_bad_input(overrides, message):
    with pytest.raises(ValueError, match=message):
        bias_indices(**_rows(**overrides))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["male", "female"]),
            st.sampled_from(["alto", "alta", "feliz", "el", "x"]),
            st.floats(0.0, 1.0),
            st.integers(1, 5),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_bpi_shares_of_a_group_sum_to_100(rows):
    group, word, prob, rank, adjective = (list(col) for col in zip(*rows))
    out = bias_indices(group, word, prob, rank, adjective, {"alto": "BODY", "alta": "BODY", "feliz": "FEELING"}, 5)
    for g in out["groups"]:
        for index in ("bpi", "bri"):
            shares = [out[index][c][g] for c in out["categories"]]
            if not any(math.isnan(s) for s in shares):
                assert sum(shares) == pytest.approx(100.0)


def test_all_forty_published_prediction_files_run(spanish_dir: Path):
    lexicons = {k: invert_lexicon(json.loads((spanish_dir / "lexicons" / f"supersenses_top{k}.json").read_text()))
                for k in (10, 29)}
    files = sorted((spanish_dir / "predictions").glob("top*/*.tsv"))
    assert len(files) == 40
    for path in files:
        k = int(path.parent.name.removeprefix("top"))
        rows = read_prediction_file(str(path))
        out = bias_indices(**rows, lexicon=lexicons[k], k=k)
        assert set(out["groups"]) == {"male", "female"}, path
        for g in out["groups"]:
            assert sum(out["bpi"][c][g] for c in out["categories"]) == pytest.approx(100.0), path


def test_cards_show_the_numbers_computed_from_the_data(shared_data: Path, repo_root: Path):
    from gecobench.metrics.card_numbers import (
        geco_cooccurrence_markdown,
        supersense_bias_markdown,
    )

    geco_card = (repo_root / "metrics" / "cooccurrence_bias" / "README.md").read_text(encoding="utf-8")
    spanish_card = (repo_root / "metrics" / "bias_indices" / "README.md").read_text(encoding="utf-8")
    assert geco_cooccurrence_markdown(shared_data / "geco") in geco_card
    table = supersense_bias_markdown(shared_data / "spanish")
    assert table in spanish_card
    # BETO's BODY adjectives lean female in the paper; the recomputed table must agree in sign.
    beto_body = next(line for line in table.splitlines() if line.startswith("| BETO") and "| BODY |" in line)
    assert float(beto_body.split("|")[5]) < 0


def test_compute_card_numbers_script_runs(repo_root: Path, shared_data: Path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "scripts/maintainer/compute_card_numbers.py", "--data", str(shared_data), "--json"],
                          cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    numbers = json.loads(proc.stdout)
    assert numbers["cooccurrence_bias"]["non_binary_gender_subj"]["bias_c"]["male"] == pytest.approx(0.36, abs=0.01)
    assert set(numbers["bias_indices"]) == {"BETO (dccuchile/bert-base-spanish-wwm-uncased)",
                                            "MarIA (BSC-TeMU/roberta-base-bne)"}

"""GECO generation: the rules on handmade sentences, the markup and JSONL readers and their errors,
the released-labelling reader, the split, the CLI, and the reproduction share on the real data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from geco_dataset.generation import (
    CONFIGS,
    GenerationError,
    SourceSentence,
    assign_split,
    build_dataset,
    compare_with_release,
    ground_truth,
    load_rules,
    make_variants,
    parse_jsonl_record,
    parse_markup,
    read_labelling_json,
    read_markup,
    released_split,
    seeded_split,
    sentence_rows,
)

REPO = Path(__file__).resolve().parent.parent


def variants_of(line: str, profile: str = "grammatical", version: str = "all") -> dict[str, list[str]]:
    return make_variants(parse_markup(line, 1), load_rules(profile))[version]


def text(words: list[str]) -> str:
    return " ".join(words)


# ---------------------------------------------------------------- rules on handmade sentences


def test_pronouns_and_verb_agreement_become_neutral():
    out = variants_of("[He|She] visits [his|her] son .")
    assert text(out["male"]) == "He visits his son ."
    assert text(out["female"]) == "She visits her son ."
    assert text(out["neutral"]) == "They visit their son ."


def test_her_reads_object_or_possessive_from_the_male_counterpart():
    out = variants_of("[He|She] gives [him|her] [his|her] book .")
    assert out["neutral"][:4] == ["They", "give", "them", "their"]


def test_her_without_male_counterpart_reads_from_next_word():
    # The male variant has a name, not a pronoun: "her" is possessive before a noun, an object otherwise.
    possessive = variants_of("Anna sees [Tom|her] cat .")
    assert possessive["neutral"][2] == "their"
    obj = variants_of("Anna sees [Tom|her] .")
    assert obj["neutral"][2] == "them"


@pytest.mark.parametrize("singular,plural", [("is", "are"), ("has", "have"), ("was", "were"), ("goes", "go"),
                                             ("tries", "try"), ("watches", "watch"), ("misses", "miss"),
                                             ("loves", "love"), ("does", "do")])
def test_grammatical_verb_agreement(singular, plural):
    out = variants_of(f"[He|She] {singular} here .")
    assert out["neutral"][1] == plural
    assert out["male"][1] == singular


def test_verb_agreement_skips_adverbs_and_leaves_modals():
    assert text(variants_of("[He|She] then quickly visits Paris .")["neutral"]) == "They then quickly visit Paris ."
    assert text(variants_of("[He|She] can swim .")["neutral"]) == "They can swim ."


def test_release_profile_reproduces_release_quirks():
    out = variants_of("[He|She] tries to save [his|her] [son|daughter] , [Mr.|Mrs.] Smith .", profile="release")
    # The release strips the final s ("trie"), maps a source "his" to "them" and writes "Mx. " with a space.
    assert out["neutral"][:5] == ["They", "trie", "to", "save", "them"]
    assert "Mx. " in out["neutral"]
    grammatical = variants_of("[He|She] tries to save [his|her] [son|daughter] , [Mr.|Mrs.] Smith .")
    assert grammatical["neutral"][:6] == ["They", "try", "to", "save", "their", "child"]
    assert "Mx." in grammatical["neutral"]


def test_gender_neutral_nouns_keep_capitalisation():
    out = variants_of("[His|Her] [Uncle|Aunt] and [his|her] [father|mother] meet [Mr.|Mrs.] Bennet .")
    assert out["neutral"][:5] == ["Their", "Parent's Sibling", "and", "their", "parent"]
    assert out["neutral"][6] == "Mx."


def test_ground_truth_marks_differences_including_verbs_only_for_non_binary():
    source = parse_markup("[He|She] visits Paris .", 5)
    rows = sentence_rows(source, make_variants(source, load_rules()))
    assert rows["binary_gender_all"][0]["ground_truth"] == [1, 0, 0, 0]
    assert rows["non_binary_gender_all"][0]["ground_truth"] == [1, 1, 0, 0]
    assert [r["gender"] for r in rows["non_binary_gender_all"]] == ["male", "female", "neutral"]
    assert [r["target"] for r in rows["non_binary_gender_all"]] == [1, 0, 2]
    assert {r["sentence_idx"] for rows_ in rows.values() for r in rows_} == {5}
    assert set(rows) == set(CONFIGS)


def test_ground_truth_rejects_different_lengths():
    with pytest.raises(GenerationError, match="sentence 3.*different lengths"):
        ground_truth({"male": ["a", "b"], "female": ["a"]}, SourceSentence(3, ["a", "b"], {}))


def test_subject_version_alters_only_marked_groups():
    line = "[*He|She|They] loves [his|her|their] cat ."
    subj = variants_of(line, version="subj")
    assert text(subj["male"]) == "He loves his cat ."
    assert text(subj["female"]) == "She loves his cat ."
    assert text(subj["neutral"]) == "They love his cat ."
    everything = variants_of(line, version="all")
    assert text(everything["female"]) == "She loves her cat ."
    assert text(everything["neutral"]) == "They love their cat ."


def test_explicit_neutral_option_overrides_rules():
    out = variants_of("[He|She|Xe] reads [his|her|xyr] book .")
    assert text(out["neutral"]) == "Xe reads xyr book ."


def test_unknown_gendered_noun_is_a_clear_error_in_strict_mode():
    with pytest.raises(GenerationError, match="sentence 1.*no non-binary rule.*'knight'"):
        variants_of("The [knight|dame] rides .")


# ---------------------------------------------------------------- markup parser and its errors


def test_markup_splits_punctuation_and_keeps_multiword_groups():
    source = parse_markup("[*He|She] met [his|her] [uncle|aunt|parent's sibling], Mr. Darcy's friend.", 7)
    assert source.words == ["He", "met", "his", "uncle", ",", "Mr.", "Darcy", "'s", "friend", "."]
    assert source.versions["all"]["neutral"] == {3: "parent's sibling"}
    assert set(source.versions["subj"]["male"]) == {0}
    assert set(source.versions["all"]["male"]) == {0, 2, 3}


@pytest.mark.parametrize("line,message", [
    ("[He|She loves the cat .", "unbalanced markup"),
    ("He|She] loves the cat .", "unbalanced markup"),
    ("[He|[She] loves .", "unbalanced markup"),
    ("[He] loves the cat .", "2 or 3 non-empty options"),
    ("[He||They] loves .", "2 or 3 non-empty options"),
    ("[a|b|c|d] loves .", "2 or 3 non-empty options"),
    ("The cat sleeps .", "no gendered word"),
])
def test_markup_errors_name_the_sentence(line, message):
    with pytest.raises(GenerationError, match=f"sentence 42.*{message}"):
        parse_markup(line, 42)


def test_read_markup_file_ids_comments_and_duplicates(tmp_path):
    path = tmp_path / "sentences.txt"
    path.write_text("# my domain\n10\t[He|She] codes .\n\n[*He|She] tests [his|her] code .\n", encoding="utf-8")
    sources = read_markup(path)
    assert [s.sentence_id for s in sources] == [10, 4]
    path.write_text("3\t[He|She] codes .\n3\t[He|She] sleeps .\n", encoding="utf-8")
    with pytest.raises(GenerationError, match="sentence id 3 occurs twice"):
        read_markup(path)
    path.write_text("[He|She] codes .\nNobody codes .\n", encoding="utf-8")
    with pytest.raises(GenerationError, match=r"sentence 2 \(sentences.txt line 2\).*no gendered word"):
        read_markup(path)


def test_jsonl_records_and_errors():
    source = parse_jsonl_record({"male": ["He", "runs", "."], "female": ["She", "runs", "."], "subject": [0]}, 9)
    out = make_variants(source, load_rules())
    assert text(out["subj"]["neutral"]) == "They run ."
    with pytest.raises(GenerationError, match="sentence 9.*different lengths"):
        parse_jsonl_record({"male": ["He", "runs"], "female": ["She", "runs", "."]}, 9)
    with pytest.raises(GenerationError, match="sentence 9.*no gendered word"):
        parse_jsonl_record({"male": ["It", "runs"], "female": ["It", "runs"]}, 9)
    with pytest.raises(GenerationError, match="sentence 9.*'subject'"):
        parse_jsonl_record({"male": ["He"], "female": ["She"], "subject": [4]}, 9)
    markup = parse_jsonl_record({"markup": "[He|She] runs ."}, 2)
    assert markup.words == ["He", "runs", "."]


# ---------------------------------------------------------------- the released labelling format


def _labelling(tmp_path: Path, sentences: dict, tags: dict | None = None) -> Path:
    tags = tags if tags is not None else {"1": {"id": 1, "tag": "name_female"}, "2": {"id": 2, "tag": "name_male"},
                                          "3": {"id": 3, "tag": "surname"}, "5": {"id": 5, "tag": "name"}}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"tags": tags, "sentences": sentences}), encoding="utf-8")
    return path


def _entry(idx: int, words: list[str], all_m: dict, all_f: dict, subj_m: dict | None = None,
           subj_f: dict | None = None, sentence_tags: dict | None = None) -> dict:
    def version(male, female):
        return {"gender": {"male": {"labelling": male}, "female": {"labelling": female},
                           "neutral": {"labelling": {}}}}
    return {"idx": idx, "sentence": words, "tags": sentence_tags or {},
            "versions": {"all": version(all_m, all_f), "subj": version(subj_m or all_m, subj_f or all_f)}}


def test_labelling_name_tags_become_pronouns_by_context(tmp_path):
    words = ["He", "visits", "Jane", "Bennet", "and", "Jane", "smiles", "."]
    entry = _entry(0, words, {"2": {"tag": 2}, "3": {"tag": 3}, "5": {"tag": 2}},
                   {"0": {"replacement": "She"}, "2": {"tag": 1}, "3": {"tag": 3}, "5": {"tag": 1}})
    sources = read_labelling_json(_labelling(tmp_path, {"0": entry}))
    out = make_variants(sources[0], load_rules())["all"]
    assert text(out["male"]) == "He visits him Bennet and he smiles ."
    assert text(out["female"]) == "She visits her Bennet and she smiles ."
    assert text(out["neutral"]) == "They visit them Bennet and they smile ."


def test_labelling_names_mode_draws_seeded_names(tmp_path, geco_dir):
    words = ["He", "meets", "Jane", "Smith", "."]
    entry = _entry(0, words, {"2": {"tag": 2}, "3": {"tag": 3}}, {"0": {"replacement": "She"}, "2": {"tag": 1},
                                                                 "3": {"tag": 3}})
    path = _labelling(tmp_path, {"0": entry})
    names_dir = geco_dir / "generation" / "names"
    first = read_labelling_json(path, names_dir, name_mode="names", surname_mode="names", seed=3)[0]
    again = read_labelling_json(path, names_dir, name_mode="names", surname_mode="names", seed=3)[0]
    assert first.versions == again.versions
    male_names = (names_dir / "Top250Male1996-2019.txt").read_text().split()
    female_names = (names_dir / "Top250Female1996-2019.txt").read_text().split()
    assert first.versions["all"]["male"][2] in male_names
    assert first.versions["all"]["female"][2] in female_names
    # One surname per slot: the same in both variants, so it is not a gendered word.
    assert first.versions["all"]["male"][3] == first.versions["all"]["female"][3]
    neutral_names = [line for line in (REPO / "geco_dataset/generation/rule-tables/neutral_names.tsv").read_text()
                     .splitlines()[3:] if line]
    neutral = make_variants(first, load_rules())["all"]["neutral"]
    assert neutral[0] == "They" and neutral[1] == "meet" and neutral[2] in neutral_names


def test_labelling_tag_without_name_list_is_an_error(tmp_path):
    entry = _entry(17, ["He", "meets", "Jane", "."], {"2": {"tag": 2}}, {"0": {"replacement": "She"},
                                                                         "2": {"tag": 1}})
    path = _labelling(tmp_path, {"17": entry})
    with pytest.raises(GenerationError, match="sentence 17.*needs a name list"):
        read_labelling_json(path, names_dir=None, name_mode="names")
    bad_tag = _entry(18, ["He", "runs", "."], {"0": {"tag": 9}}, {"0": {"replacement": "She"}})
    with pytest.raises(GenerationError, match="sentence 18.*tag 9.*not in the tags table"):
        read_labelling_json(_labelling(tmp_path, {"18": bad_tag}))
    out_of_range = _entry(19, ["He", "runs", "."], {}, {"7": {"replacement": "She"}})
    with pytest.raises(GenerationError, match="sentence 19.*position 7 is outside"):
        read_labelling_json(_labelling(tmp_path, {"19": out_of_range}))


def test_name_slot_after_kin_noun_is_dropped(tmp_path):
    words = ["She", "writes", "to", "her", "Uncle", "John", "."]
    entry = _entry(0, words, {"0": {"replacement": "He"}, "3": {"replacement": "his"}, "5": {"replacement": "he"}},
                   {"5": {"replacement": "she"}}, sentence_tags={"5": {"tag": 5}})
    source = read_labelling_json(_labelling(tmp_path, {"0": entry}))[0]
    out = make_variants(source, load_rules())["all"]
    assert text(out["male"]) == "He writes to his Uncle ."
    assert text(out["female"]) == "She writes to her Uncle ."


def test_labelled_subject_pronoun_on_name_slot_after_preposition_becomes_object(tmp_path):
    words = ["He", "dances", "with", "Jane", "."]
    entry = _entry(0, words, {"3": {"replacement": "he"}}, {"0": {"replacement": "She"}, "3": {"replacement": "she"}},
                   sentence_tags={"3": {"tag": 5}})
    source = read_labelling_json(_labelling(tmp_path, {"0": entry}))[0]
    out = make_variants(source, load_rules())["all"]
    assert out["male"][3] == "him" and out["female"][3] == "her" and out["neutral"][3] == "them"


# ---------------------------------------------------------------- split


def test_seeded_split_is_80_20_disjoint_and_deterministic():
    ids = list(range(100))
    split = seeded_split(ids, 0.2, seed=1)
    assert len(split["test"]) == 20 and len(split["train"]) == 80
    assert set(split["train"]).isdisjoint(split["test"]) and set(split["train"]) | set(split["test"]) == set(ids)
    assert split == seeded_split(ids, 0.2, seed=1)
    assert split != seeded_split(ids, 0.2, seed=2)
    with pytest.raises(ValueError, match="test_fraction"):
        seeded_split(ids, 1.5)


def test_release_split_is_reused(geco_dir):
    split = released_split(geco_dir)
    assert len(split["train"]) == 1288 and len(split["test"]) == 322
    assigned = assign_split(list(range(1610)) + [5000, 5001, 5002, 5003, 5004], geco_dir)
    assert assigned["train"][:1288] == split["train"] and assigned["test"][:322] == split["test"]
    assert {5000, 5001, 5002, 5003, 5004} <= set(assigned["train"]) | set(assigned["test"])


# ---------------------------------------------------------------- CLI and reproduction


def test_cli_builds_configs_from_markup(tmp_path):
    labels = tmp_path / "mine.txt"
    lines = [f"[*He|She] writes [his|her] report number {i} ." for i in range(10)]
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "build_geco.py"), "--labels", str(labels),
                             "--out", str(out), "--quiet"], check=False, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "co-occurrence bias" in result.stdout
    for config in CONFIGS:
        train = [json.loads(line) for line in (out / config / "train.jsonl").read_text().splitlines()]
        test = [json.loads(line) for line in (out / config / "test.jsonl").read_text().splitlines()]
        per_sentence = 3 if config.startswith("non_binary") else 2
        assert len(train) == 8 * per_sentence and len(test) == 2 * per_sentence
        assert set(train[0]) == {"sentence", "ground_truth", "gender", "target", "sentence_idx"}
        assert {r["sentence_idx"] for r in train}.isdisjoint({r["sentence_idx"] for r in test})
    summary = json.loads((out / "generation.json").read_text())
    assert summary["n_sentences"] == 10 and "provenance" in summary


def test_cli_reports_bad_input_with_sentence_id(tmp_path):
    labels = tmp_path / "bad.txt"
    labels.write_text("[He|She] codes .\n[He|She codes .\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "build_geco.py"), "--labels", str(labels),
                             "--out", str(tmp_path / "out"), "--quiet"], check=False, capture_output=True, text=True, cwd=REPO,
                            timeout=120)
    assert result.returncode == 2
    assert "sentence 2" in result.stderr and "unbalanced" in result.stderr


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory, geco_dir):
    out = tmp_path_factory.mktemp("geco_regenerated")
    build_dataset(geco_dir / "generation" / "labelling" / "merged_labelling_v2.json", out,
                  names_dir=geco_dir / "generation" / "names", split_from=geco_dir, profile="release",
                  progress=False)
    return out


def test_regeneration_reproduces_the_release(regenerated, geco_dir):
    table = compare_with_release(regenerated, geco_dir)
    assert len(table) == 10
    for row in table:
        assert row["n"] == 1610
        assert row["split_mismatch"] == 0
        target = 0.90 if row["gender"] == "neutral" else 0.97
        assert row["share"] >= target, row


def test_regenerated_files_have_the_release_layout(regenerated, geco_dir):
    for config in CONFIGS:
        for split in ("train", "test"):
            ours = (regenerated / config / f"{split}.jsonl").read_text().splitlines()
            theirs = (geco_dir / config / f"{split}.jsonl").read_text().splitlines()
            assert len(ours) == len(theirs)
            # Same rows in the same order (sentence and gender), as the release's split is reused.
            key = [(json.loads(a)["sentence_idx"], json.loads(a)["gender"]) for a in ours]
            assert key == [(json.loads(b)["sentence_idx"], json.loads(b)["gender"]) for b in theirs]


def test_standalone_possessive_becomes_theirs():
    out = variants_of("The book is [his|hers] .")
    assert out["neutral"][3] == "theirs"
    out = variants_of("Anna takes [his|Tom's] .")
    assert out["neutral"][2] == "theirs"

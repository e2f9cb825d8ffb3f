"""Spanish templates and lexicons: counts, row layout, format errors, lexicon rules, mask rendering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geco_dataset import (
    LEXICON_SCHEMES,
    MASK_PLACEHOLDER,
    SpanishDataError,
    SpanishGenderTemplates,
    load_lexicon,
    load_spanish_templates,
    render_with_mask,
)
from geco_dataset.spanish import (
    LEXICON_CONFIGS,
    default_spanish_dir,
    load_spanish_lexicon_dataset,
    parse_column_lexicon,
    parse_json_lexicon,
    parse_templates,
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spanish_cache")


@pytest.fixture(scope="module")
def templates_2023(spanish_dir, cache):
    return load_spanish_templates("templates_2023", data_dir=spanish_dir, cache_dir=cache)


@pytest.fixture(scope="module")
def templates_2022(spanish_dir, cache):
    return load_spanish_templates("templates_2022", data_dir=spanish_dir, cache_dir=cache)


@pytest.mark.parametrize("which", ["templates_2023", "templates_2022"])
def test_template_counts_and_layout(request, which):
    ds = request.getfixturevalue(which)
    assert len(ds) == 192
    assert set(ds.column_names) >= {"template_id", "subject_id", "gender", "text"}
    assert sorted(set(ds["template_id"])) == list(range(8))
    assert sorted(set(ds["subject_id"])) == list(range(12))
    pairs = {(t, s, g) for t, s, g in zip(ds["template_id"], ds["subject_id"], ds["gender"])}
    assert len(pairs) == 192 and {g for _, _, g in pairs} == {"male", "female"}
    assert all(text.count(MASK_PLACEHOLDER) == 1 for text in ds["text"])


def _text(ds, template_id, subject_id, gender):
    (row,) = [r for r in ds.to_list() if (r["template_id"], r["subject_id"], r["gender"]) == (template_id, subject_id, gender)]
    return row["text"]


def test_template_rows_follow_the_file(templates_2023, templates_2022):
    # facts read off the released files (SOURCES.md): row i = template i // 12, subject i % 12
    assert _text(templates_2023, 0, 0, "male") == "Él es [MASK]."
    assert _text(templates_2023, 0, 0, "female") == "Ella es [MASK]."
    assert _text(templates_2023, 0, 1, "female") == "La chica es [MASK]."
    assert _text(templates_2023, 1, 0, "male") == "Él parece ser [MASK]."
    assert _text(templates_2023, 7, 0, "male") == "Él es una persona [MASK]."
    assert _text(templates_2023, 7, 11, "female") == "Mi vecina es una persona [MASK]."
    assert _text(templates_2022, 7, 0, "female") == "La describiría como [MASK]."
    assert not any(t.endswith("\r") for t in templates_2023["text"])


def test_builder_and_loader_agree(spanish_dir, templates_2023, tmp_path):
    builder = SpanishGenderTemplates(config_name="templates_2023", data_dir=str(spanish_dir), cache_dir=str(tmp_path))
    builder.download_and_prepare()
    built = builder.as_dataset(split="train")
    assert built.to_list() == templates_2023.to_list()


def test_default_dir_honours_env(monkeypatch, tmp_path, spanish_dir):
    monkeypatch.setenv("GECOBENCH_SPANISH_DIR", str(tmp_path))
    assert default_spanish_dir() == str(tmp_path)
    monkeypatch.delenv("GECOBENCH_SPANISH_DIR")
    assert Path(default_spanish_dir()).resolve() == spanish_dir.resolve()


# --------------------------------------------------------------------------- template format rules


def _tsv(path: Path, lines: list[str]) -> Path:
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return path


def _pairs(n: int) -> list[str]:
    return [f"Él {i} es [MASK].\tElla {i} es [MASK]." for i in range(n)]


def test_comments_blank_lines_and_crlf(tmp_path):
    lines = ["male\tfemale", "# Él es [MASK].\tElla es [MASK].", "# comment without a mask", ""] + _pairs(12)
    rows = parse_templates(_tsv(tmp_path / "t.tsv", lines))
    assert len(rows) == 24
    assert rows[0] == {"template_id": 0, "subject_id": 0, "gender": "male", "text": "Él 0 es [MASK].",
                       "row_id": 0, "line": 5}
    assert rows[-1]["text"] == "Ella 11 es [MASK]."


def test_more_gender_columns_become_more_groups(tmp_path):
    lines = ["male\tfemale\tneutral"] + [p + f"\tElle {i} es [MASK]." for i, p in enumerate(_pairs(12))]
    rows = parse_templates(_tsv(tmp_path / "t3.tsv", lines))
    assert len(rows) == 36 and {r["gender"] for r in rows} == {"male", "female", "neutral"}


def test_missing_mask_names_file_and_line(tmp_path):
    lines = ["male\tfemale"] + _pairs(12)
    lines[4] = "Él es alto.\tElla es [MASK]."
    with pytest.raises(SpanishDataError, match=r"bad\.tsv:5: the male sentence 'Él es alto\.' has no \[MASK\]"):
        parse_templates(_tsv(tmp_path / "bad.tsv", lines))


def test_wrong_column_count_names_file_and_line(tmp_path):
    lines = ["male\tfemale"] + _pairs(12)
    lines[7] = "Él es [MASK]."
    with pytest.raises(SpanishDataError, match=r"cols\.tsv:8: 1 column\(s\), expected 2"):
        parse_templates(_tsv(tmp_path / "cols.tsv", lines))


def test_truncated_template_file(tmp_path):
    with pytest.raises(SpanishDataError, match=r"short\.tsv: 11 template rows is not a multiple of 12"):
        parse_templates(_tsv(tmp_path / "short.tsv", ["male\tfemale"] + _pairs(11)))


def test_checksum_mismatch_of_local_copy(tmp_path):
    (tmp_path / "templates").mkdir()
    _tsv(tmp_path / "templates" / "sentences.tsv", ["male\tfemale"] + _pairs(12))
    with pytest.raises(SpanishDataError, match=r"sentences\.tsv: SHA-256 .* does not match"):
        load_spanish_templates(data_dir=tmp_path, cache_dir=tmp_path / "cache")
    ds = load_spanish_templates(data_dir=tmp_path, verify_checksums=False, cache_dir=tmp_path / "cache")
    assert len(ds) == 24


# --------------------------------------------------------------------------- lexicons


@pytest.mark.parametrize("scheme", LEXICON_SCHEMES)
def test_every_lexicon_loads(spanish_dir, scheme):
    lexicon = load_lexicon(scheme, data_dir=spanish_dir, verify_checksums=True)
    assert len(lexicon) > 100
    assert all(word == word.lower() and word == word.strip() and word for word in lexicon)
    assert all(category for category in lexicon.values())


def test_lexicon_values_from_the_files(spanish_dir):
    # first data line of visibility_polarity.tsv: abierto / VERDADERO / abandonado / gigante / aburrido
    visibility = load_lexicon("visibility_polarity", data_dir=spanish_dir)
    assert visibility["gigante"] == "Visible -"
    assert visibility["aburrido"] == "Invisible -"
    top10 = load_lexicon("supersenses_top10", data_dir=spanish_dir)
    assert top10["amarillo"] == "PERCEPTION"
    raw = json.loads((spanish_dir / "lexicons" / "supersenses_top10.json").read_text())
    assert {"BODY", "FEELING", "MIND", "BEHAVIOR", "SOCIAL"} <= set(raw) and set(top10.values()) <= set(raw)


def test_column_lexicon_last_column_wins(tmp_path):
    path = _tsv(tmp_path / "lex.tsv", ["Uno\tDos\tTres", "[A]\t[B]\t[C]", "Rojo\t\tverde", "\tazul\tROJO", "gris"])
    rows = parse_column_lexicon(path)
    mapping = {r["word"]: r["category"] for r in rows}
    assert mapping == {"rojo": "C", "verde": "C", "azul": "B", "gris": "A"}
    assert {r["word"]: r["label"] for r in rows}["azul"] == "Dos"


def test_column_lexicon_extra_cells_name_line(tmp_path):
    path = _tsv(tmp_path / "wide.tsv", ["Uno\tDos", "[A]\t[B]", "rojo\tazul", "a\tb\tc"])
    with pytest.raises(SpanishDataError, match=r"wide\.tsv:4: 3 cells but only 2 columns"):
        parse_column_lexicon(path)


def test_json_lexicon_last_category_wins(tmp_path):
    path = tmp_path / "lex.json"
    path.write_text(json.dumps({"A": ["Rojo", "azul"], "B": ["rojo"], "unknown": []}))
    assert {r["word"]: r["category"] for r in parse_json_lexicon(path)} == {"rojo": "B", "azul": "A"}
    path.write_text('{"A": ["rojo"')
    with pytest.raises(SpanishDataError, match=r"lex\.json: not valid JSON"):
        parse_json_lexicon(path)


def test_lexicon_dataset_configs_match_load_lexicon(spanish_dir, cache):
    for config, scheme in zip(LEXICON_CONFIGS, LEXICON_SCHEMES):
        ds = load_spanish_lexicon_dataset(config, data_dir=spanish_dir, cache_dir=cache)
        assert dict(zip(ds["word"], ds["category"])) == load_lexicon(scheme, data_dir=spanish_dir)
        assert len(ds) == len(set(ds["word"]))


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown lexicon scheme"):
        load_lexicon("nope")


# --------------------------------------------------------------------------- mask rendering


@pytest.fixture(scope="module")
def tiny_roberta_tokenizer(tmp_path_factory):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    folder = tmp_path_factory.mktemp("tiny_roberta")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        ["Él es alto.", "Ella es alta.", "El chico es una persona amable."] * 5,
        vocab_size=300, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe.save_model(str(folder))
    return RobertaTokenizerFast(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"))


def test_render_with_bert_tokenizer(bert_tokenizer, templates_2023):
    text = render_with_mask(templates_2023[0]["text"], bert_tokenizer)
    assert text == "Él es [MASK]."
    ids = bert_tokenizer(text)["input_ids"]
    assert ids.count(bert_tokenizer.mask_token_id) == 1


def test_render_with_roberta_tokenizer(tiny_roberta_tokenizer, templates_2023):
    text = render_with_mask(templates_2023[1]["text"], tiny_roberta_tokenizer)
    assert text == "Ella es <mask>."
    ids = tiny_roberta_tokenizer(text)["input_ids"]
    assert ids.count(tiny_roberta_tokenizer.mask_token_id) == 1
    # the literal BERT placeholder would not be the mask token for this tokenizer
    assert tiny_roberta_tokenizer("Ella es [MASK].")["input_ids"].count(tiny_roberta_tokenizer.mask_token_id) == 0


def test_render_errors():
    assert render_with_mask("Él es [MASK].", "<mask>") == "Él es <mask>."
    with pytest.raises(ValueError, match="exactly once"):
        render_with_mask("Él es alto.", "[MASK]")

    class NoMask:
        mask_token = None

    with pytest.raises(ValueError, match="no mask token"):
        render_with_mask("Él es [MASK].", NoMask())

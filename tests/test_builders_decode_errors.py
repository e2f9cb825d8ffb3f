"""With checksums off, the GECO and Spanish builders name file and line for bytes that are not UTF-8 and for lines
nested too deeply to parse, instead of a bare UnicodeDecodeError / RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geco_dataset import load_geco, load_spanish_lexicon_dataset, load_spanish_templates
from geco_dataset.geco import GecoDataError, read_geco_file
from geco_dataset.spanish import (
    SpanishDataError,
    parse_column_lexicon,
    parse_json_lexicon,
    parse_templates,
)


def _geco_rows() -> list[bytes]:
    rows = [
        (["He", "runs", "."], "male", 0), (["She", "runs", "."], "female", 0),
        (["His", "dog", "barks", "."], "male", 1), (["Her", "dog", "barks", "."], "female", 1),
    ]
    target = {"female": 0, "male": 1}
    return [json.dumps({"sentence": words, "ground_truth": [1] + [0] * (len(words) - 1), "gender": gender,
                        "target": target[gender], "sentence_idx": idx}).encode() for words, gender, idx in rows]


def _geco_dir(tmp_path: Path, test_lines: list[bytes]) -> Path:
    folder = tmp_path / "data" / "binary_gender_all"
    folder.mkdir(parents=True)
    (folder / "train.jsonl").write_bytes(b"\n".join(_geco_rows()) + b"\n")
    (folder / "test.jsonl").write_bytes(b"\n".join(test_lines) + b"\n")
    return tmp_path / "data"


def _with_line(lines: list[bytes], index: int, replacement: bytes) -> list[bytes]:
    changed = list(lines)
    changed[index] = replacement
    return changed


GECO_BAD_LINES = {
    "invalid UTF-8": (_geco_rows()[2].replace(b"dog", b"d\xffg"), r"test\.jsonl:3: not valid UTF-8 .*column"),
    "truncated UTF-8": (_geco_rows()[2].replace(b"dog", "dög".encode()[:2] + b"g"), r"test\.jsonl:3: not valid UTF-8"),
    "deeply nested": (b"[" * 100_000 + b"]" * 100_000, r"test\.jsonl:3: .*nested too deeply"),
    "deeply nested, unclosed": (b'{"a":' * 100_000, r"test\.jsonl:3: .*(nested too deeply|not valid JSON)"),
}


@pytest.mark.parametrize("case", sorted(GECO_BAD_LINES))
def test_geco_reader_names_file_and_line(tmp_path, case):
    line, message = GECO_BAD_LINES[case]
    data_dir = _geco_dir(tmp_path, _with_line(_geco_rows(), 2, line))
    with pytest.raises(GecoDataError, match=message):
        read_geco_file(data_dir / "binary_gender_all" / "test.jsonl", "binary_all")


def test_geco_builder_without_checksums_names_file_and_line(tmp_path):
    valid_dir = _geco_dir(tmp_path / "ok", _geco_rows())
    assert len(load_geco("binary_all", "test", data_dir=valid_dir, verify_checksums=False,
                         cache_dir=tmp_path / "cache")) == 4
    for i, case in enumerate(("invalid UTF-8", "deeply nested")):
        line, message = GECO_BAD_LINES[case]
        data_dir = _geco_dir(tmp_path / str(i), _with_line(_geco_rows(), 2, line))
        with pytest.raises(GecoDataError, match=r"binary_gender_all/" + message):
            load_geco("binary_all", "test", data_dir=data_dir, verify_checksums=False, cache_dir=tmp_path / "cache")


def _template_lines(n: int = 12) -> list[bytes]:
    return [b"male\tfemale"] + [f"Él {i} es [MASK].\tElla {i} es [MASK].".encode() for i in range(n)]


def test_template_reader_names_file_and_line_of_a_bad_byte(tmp_path):
    lines = _template_lines()
    lines[5] = b"\xc3\x28l es [MASK].\tElla es [MASK]."  # an invalid two-byte sequence
    path = tmp_path / "templates" / "sentences.tsv"
    path.parent.mkdir()
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    with pytest.raises(SpanishDataError, match=r"sentences\.tsv:6: not valid UTF-8 \(byte b'\\xc3' at column 1\)"):
        parse_templates(path)
    with pytest.raises(SpanishDataError, match=r"sentences\.tsv:6: not valid UTF-8"):
        load_spanish_templates(data_dir=tmp_path, verify_checksums=False, cache_dir=tmp_path / "cache")


def test_template_reader_keeps_bom_crlf_and_cells_as_before(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(_template_lines()) + b"\r\n")
    rows = parse_templates(path)
    assert len(rows) == 24 and rows[0]["gender"] == "male" and rows[0]["text"] == "Él 0 es [MASK]."
    assert rows[-1]["line"] == 13


def test_lexicon_readers_name_file_and_line(tmp_path):
    column = tmp_path / "lex.tsv"
    column.write_bytes(b"Visible\tHidden\r\n[Visible +]\t[Hidden]\r\nalto\tbajo\r\nfe\xffo\tx\r\n")
    with pytest.raises(SpanishDataError, match=r"lex\.tsv:4: not valid UTF-8 \(byte b'\\xff' at column 3\)"):
        parse_column_lexicon(column)
    as_json = tmp_path / "lex.json"
    as_json.write_bytes(b'{\n "BODY": ["alto",\n "fe\xffo"]}')
    with pytest.raises(SpanishDataError, match=r"lex\.json:3: not valid UTF-8"):
        parse_json_lexicon(as_json)
    as_json.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(SpanishDataError, match=r"lex\.json: .*nested too deeply"):
        parse_json_lexicon(as_json)


def test_lexicon_builder_without_checksums_names_file_and_line(tmp_path):
    (tmp_path / "lexicons").mkdir()
    (tmp_path / "lexicons" / "supersenses_top10.json").write_bytes(b'{"BODY": ["alto"],\n"MIND": ["list\xf0"]}')
    with pytest.raises(SpanishDataError, match=r"supersenses_top10\.json:2: not valid UTF-8"):
        load_spanish_lexicon_dataset("lexicon_supersenses_top10", data_dir=tmp_path, verify_checksums=False,
                                     cache_dir=tmp_path / "cache")

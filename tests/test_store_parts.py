"""A local store made of parts: other store folders beside it that it reads as its own (the reference store's
promoted seeds stay where their units were committed). Reading follows only safe parts, writing never goes into
one, and every reader of a store (records, side files, the Python API, the Hub export) sees the parts' documents."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from _sample_records import make_explainer_record

from gecobench.evaluation.sentence_scores import find_side_file, side_file_path
from gecobench.store import PARTS_FILE, PARTS_FORMAT, DocumentExistsError, LocalStore


def _records(n: int, seed: int, salt: int) -> list[dict]:
    rng = random.Random(salt)
    return [make_explainer_record(name, "CE", "binary_all", seed=seed, rng=rng)
            for name in ("saliency", "lime", "deeplift")[:n]]


@pytest.fixture()
def parted(tmp_path: Path) -> tuple[LocalStore, LocalStore, list[dict], list[dict]]:
    """``reference/store`` (two records of seed 2) and ``reference/staging/seed-4/store`` (three of seed 4)."""
    main = LocalStore(tmp_path / "reference" / "store")
    part = LocalStore(tmp_path / "reference" / "staging" / "seed-4" / "store")
    own, staged = _records(2, 2, 1), _records(3, 4, 2)
    for record in own:
        main.append(record)
    for record in staged:
        part.append(record)
    return main, part, own, staged


def test_a_part_is_read_as_the_stores_own_and_written_to_never(parted) -> None:
    main, part, own, staged = parted
    assert {r["record_id"] for r in main.read_all().documents} == {r["record_id"] for r in own}
    parts_file = main.add_part(part.root)
    assert json.loads(parts_file.read_text()) == {"format": PARTS_FORMAT, "parts": ["../staging/seed-4/store"]}
    report = main.read_all("explainer_score")
    assert report.warnings == []
    assert sorted(r["record_id"] for r in report.documents) == sorted(r["record_id"] for r in own + staged)
    first = staged[0]
    assert main.exists("explainer_score", first["record_id"])
    assert main.read("explainer_score", first["record_id"]) == first
    # appending a part's document again is refused (it would be read twice), and nothing lands in the root
    with pytest.raises(DocumentExistsError, match="part of"):
        main.append(first)
    assert not main.path_for("explainer_score", first["record_id"]).exists()
    # a new document goes to the root, never into a part
    extra = make_explainer_record("saliency", "C", "binary_all", seed=2, rng=random.Random(9))
    written = Path(main.append(extra))
    assert written.parent == main.root / "explainer_score"
    assert len(list((part.root / "explainer_score").glob("*.json"))) == 3
    # adding the same part again changes nothing
    assert main.add_part(part.root) == parts_file
    assert json.loads(parts_file.read_text())["parts"] == ["../staging/seed-4/store"]


def test_side_files_and_the_python_api_follow_the_parts(parted) -> None:
    from gecobench.api import load_results

    main, part, own, staged = parted
    record = staged[1]
    side = side_file_path(part.root, record["record_id"])
    side.parent.mkdir(parents=True)
    side.write_bytes(gzip.compress(json.dumps({"record_id": record["record_id"], "sentences": []}).encode()))
    assert find_side_file(main.root, record["record_id"]) is None, "not a part yet"
    main.add_part(part.root)
    assert find_side_file(main.root, record["record_id"]) == side.resolve()
    assert find_side_file(main.root, own[0]["record_id"]) is None  # no side file anywhere
    results = load_results(main.root)
    assert len(results.records) == 5 and set(results.sentences) == {record["record_id"]}


def test_the_hub_export_flattens_a_parted_store(parted, tmp_path: Path) -> None:
    from gecobench.hub_publish import write_store_dataset

    main, part, own, staged = parted
    main.add_part(part.root)
    out = write_store_dataset(tmp_path / "out", "t", "d", main.root)
    exported = LocalStore(out).read_all()
    assert exported.warnings == [] and len(exported.documents) == 5
    assert not (out / PARTS_FILE).exists()  # a flat copy: the parts file would point outside the dataset


@pytest.mark.parametrize("entry, problem", [
    ("/etc", "not a relative POSIX path"),
    ("../../../outside", "outside"),
    ("explainer_score", "inside the store itself"),
    (".", "inside the store itself"),
    ("../no-such-store", "no such folder"),
])
def test_an_unsafe_or_missing_part_is_skipped_with_a_warning(parted, tmp_path: Path, entry: str, problem: str) -> None:
    main, part, own, _ = parted
    (tmp_path / "outside").mkdir()
    (main.root / PARTS_FILE).write_text(json.dumps({"format": PARTS_FORMAT, "parts": [entry]}))
    report = main.read_all()
    assert {r["record_id"] for r in report.documents} == {r["record_id"] for r in own}
    assert len(report.warnings) == 1 and problem in report.warnings[0] and repr(entry) in report.warnings[0]
    assert main.folders() == [main.root]
    # adding a part would rewrite the file without the entry a reader skips: refused, the file kept as it is
    before = (main.root / PARTS_FILE).read_text()
    with pytest.raises(ValueError, match="fix it before adding a part"):
        main.add_part(part.root)
    assert (main.root / PARTS_FILE).read_text() == before


@pytest.mark.parametrize("content", ["{not json", json.dumps(["../x"]), json.dumps({"parts": ["../x"]}),
                                     json.dumps({"format": PARTS_FORMAT, "parts": [1]}), "x" * (70 * 1024)])
def test_a_malformed_parts_file_is_a_warning_not_an_error(parted, content: str) -> None:
    main, part, own, _ = parted
    (main.root / PARTS_FILE).write_text(content)
    report = main.read_all()
    assert {r["record_id"] for r in report.documents} == {r["record_id"] for r in own}
    assert len(report.warnings) == 1 and PARTS_FILE in report.warnings[0]
    with pytest.raises(ValueError, match="fix it before adding a part"):
        main.add_part(part.root)


def test_add_part_refuses_what_a_reader_would_skip_or_read_twice(parted, tmp_path: Path) -> None:
    main, part, own, staged = parted
    with pytest.raises(ValueError, match="no such folder"):
        main.add_part(tmp_path / "reference" / "staging" / "seed-9" / "store")
    with pytest.raises(ValueError, match="not the store"):
        main.add_part(main.root / "explainer_score")
    with pytest.raises(ValueError, match="must be a folder inside"):
        main.add_part(tmp_path.parent)
    clash = part.root / "explainer_score" / f"{own[0]['record_id']}.json"
    clash.write_text(json.dumps(own[0]))
    with pytest.raises(ValueError, match="1 document"):
        main.add_part(part.root)
    assert not (main.root / PARTS_FILE).exists()

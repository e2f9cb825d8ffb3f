"""The GECO builder and loader: counts, features, labels, ground-truth invariants, quirks and bad-data rules."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import datasets
import pytest

from geco_dataset import (
    GECO_CONFIGS,
    GECO_SPLITS,
    Geco,
    GecoChecksumError,
    GecoDataError,
    load_geco,
)
from geco_dataset.geco import (
    GECO_FOLDERS,
    default_geco_dir,
    read_geco_file,
    repair_deleted_word,
)

# the release as documented in shared/data/SOURCES.md (not derived from the code under test)
RELEASED_ROWS = {"binary": {"train": 2576, "test": 644}, "nonbinary": {"train": 3864, "test": 966}}
RELEASED_SENTENCES = {"train": 1288, "test": 322}


@pytest.fixture(scope="session")
def geco_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("geco_cache")


@pytest.fixture(scope="session")
def geco_all(geco_dir, geco_cache) -> dict[tuple[str, str], datasets.Dataset]:
    return {
        (config, split): load_geco(config, split, data_dir=geco_dir, cache_dir=geco_cache)
        for config in GECO_CONFIGS
        for split in GECO_SPLITS
    }


def _groups(rows: list[dict]) -> dict[int, list[dict]]:
    groups: dict[int, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["sentence_id"]].append(row)
    return groups


@pytest.mark.parametrize("config", GECO_CONFIGS)
@pytest.mark.parametrize("split", GECO_SPLITS)
def test_row_counts_and_features(geco_all, config, split):
    ds = geco_all[(config, split)]
    kind = "nonbinary" if config.startswith("nonbinary") else "binary"
    assert len(ds) == RELEASED_ROWS[kind][split]
    assert ds.features["label"].names == ["female", "male", "non-binary"]
    assert ds.features["ground_truth"].feature.dtype == "int8"
    assert ds.features["words"].feature.dtype == "string"
    assert ds.features["sentence_id"].dtype == "int32"
    assert ds.features["n_ground_truth"].dtype == "int32"
    assert len(set(ds["sentence_id"])) == RELEASED_SENTENCES[split]


@pytest.mark.parametrize("config", GECO_CONFIGS)
def test_label_mapping_matches_released_gender(geco_all, config, geco_dir):
    ds = geco_all[(config, "test")]
    expected = {"female": 0, "male": 1, "neutral": 2}
    assert {(g, label) for g, label in zip(ds["gender"], ds["label"])} <= set(expected.items())
    labels = set(ds["label"])
    assert labels == ({0, 1, 2} if config.startswith("nonbinary") else {0, 1})
    # compare with the raw released `target` field line by line
    raw = (geco_dir / GECO_FOLDERS[config] / "test.jsonl").read_text().splitlines()
    assert [json.loads(line)["target"] for line in raw] == ds["label"]
    assert ds.features["label"].int2str(2) == "non-binary"


def test_split_is_by_sentence_and_same_in_all_configs(geco_all):
    train_ids = {config: set(geco_all[(config, "train")]["sentence_id"]) for config in GECO_CONFIGS}
    test_ids = {config: set(geco_all[(config, "test")]["sentence_id"]) for config in GECO_CONFIGS}
    first = GECO_CONFIGS[0]
    for config in GECO_CONFIGS:
        assert train_ids[config] == train_ids[first]
        assert test_ids[config] == test_ids[first]
    assert not train_ids[first] & test_ids[first]
    assert len(train_ids[first] | test_ids[first]) == 1610


@pytest.mark.parametrize("config", GECO_CONFIGS)
@pytest.mark.parametrize("split", GECO_SPLITS)
def test_ground_truth_invariants(geco_all, config, split):
    rows = geco_all[(config, split)].to_list()
    n_variants = 3 if config.startswith("nonbinary") else 2
    for row in rows:
        assert len(row["words"]) == len(row["ground_truth"]), row["source_line"]
        assert row["n_ground_truth"] == sum(row["ground_truth"])
        assert set(row["ground_truth"]) <= {0, 1}
    for sentence_id, variants in _groups(rows).items():
        assert sorted(v["label"] for v in variants) == list(range(n_variants))
        lines = sorted(v["source_line"] for v in variants)
        assert lines == list(range(lines[0], lines[0] + n_variants)), "variants must be adjacent"
        intact = [v for v in variants if not v["repaired"]]
        if len(intact) < len(variants):
            continue  # repaired rows are checked in test_known_quirks_are_repaired
        truth = intact[0]["ground_truth"]
        assert all(v["ground_truth"] == truth for v in intact), sentence_id
        for position, is_truth in enumerate(truth):
            differ = len({v["words"][position] for v in intact}) > 1
            if differ:
                assert is_truth == 1, (sentence_id, position)
            if config.startswith("binary"):
                # binary variants differ exactly at the ground-truth words
                assert differ == bool(is_truth), (sentence_id, position)


def test_rows_without_ground_truth_are_kept(geco_all):
    ds = geco_all[("binary_subject", "test")]
    rows = [r for r in ds.to_list() if r["sentence_id"] == 811]
    assert len(rows) == 2 and all(r["n_ground_truth"] == 0 for r in rows)


def test_known_quirks_are_repaired(geco_all, geco_dir):
    expected_positions = {("train", 1534): 17, ("test", 988): 3}  # the deleted word: "." and "Abbé"
    for split in GECO_SPLITS:
        ds = geco_all[("nonbinary_subject", split)]
        repaired = [r for r in ds.to_list() if r["repaired"]]
        assert len(repaired) == 2
        (sentence_id,) = {r["sentence_id"] for r in repaired}
        deleted = expected_positions[(split, sentence_id)]
        raw_rows = [
            json.loads(line)
            for line in (geco_dir / "non_binary_gender_subj" / f"{split}.jsonl").read_text().splitlines()
        ]
        neutral = next(r for r in raw_rows if r["sentence_idx"] == sentence_id and r["gender"] == "neutral")
        expected_truth = neutral["ground_truth"][:deleted] + neutral["ground_truth"][deleted + 1 :]
        for row in repaired:
            assert row["gender"] in ("male", "female")
            assert row["ground_truth"] == expected_truth
            assert len(row["ground_truth"]) == len(row["words"])
    # nothing else in any config is repaired
    for (config, _split), ds in geco_all.items():
        if config != "nonbinary_subject":
            assert not any(ds["repaired"])


def test_strict_mode_refuses_known_quirks(geco_dir, tmp_path):
    with pytest.raises(GecoDataError, match=r"train\.jsonl:3334: 17 words but 18 ground_truth"):
        load_geco("nonbinary_subject", "train", data_dir=geco_dir, repair="none", cache_dir=tmp_path)


def test_builder_and_loader_agree(geco_dir, geco_all, tmp_path):
    builder = Geco(config_name="binary_subject", data_dir=str(geco_dir), cache_dir=str(tmp_path))
    builder.download_and_prepare()
    for split in GECO_SPLITS:
        built = builder.as_dataset(split=split)
        assert built.features == geco_all[("binary_subject", split)].features
        assert built.to_list() == geco_all[("binary_subject", split)].to_list()


def test_default_dir_honours_env(monkeypatch, tmp_path, geco_dir):
    monkeypatch.setenv("GECOBENCH_GECO_DIR", str(tmp_path))
    assert default_geco_dir() == str(tmp_path)
    monkeypatch.delenv("GECOBENCH_GECO_DIR")
    assert Path(default_geco_dir()).resolve() == geco_dir.resolve()


def test_unknown_config_and_split():
    with pytest.raises(ValueError, match="unknown GECO config"):
        load_geco("binary", "train")
    with pytest.raises(ValueError, match="unknown GECO split"):
        load_geco("binary_all", "validation")


# --------------------------------------------------------------------------- bad data


def _row(words, truth, gender, idx):
    return {"sentence": words, "ground_truth": truth, "gender": gender,
            "target": {"female": 0, "male": 1, "neutral": 2}[gender], "sentence_idx": idx}


GOOD_ROWS = [
    _row(["He", "runs", "."], [1, 0, 0], "male", 0),
    _row(["She", "runs", "."], [1, 0, 0], "female", 0),
    _row(["His", "dog", "barks", "."], [1, 0, 0, 0], "male", 1),
    _row(["Her", "dog", "barks", "."], [1, 0, 0, 0], "female", 1),
]


def _write(path: Path, rows: list, extra_lines: tuple[str, ...] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_good_small_file_parses(tmp_path):
    rows = read_geco_file(_write(tmp_path / "f.jsonl", GOOD_ROWS), "binary_all")
    assert [r["words"] for r in rows] == [r["sentence"] for r in GOOD_ROWS]
    assert [r["source_line"] for r in rows] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda rows: rows[2].update(ground_truth=[1, 0, 0]), r":3: 4 words but 3 ground_truth"),
        (lambda rows: rows[1].pop("gender"), r":2: missing field 'gender'"),
        (lambda rows: rows[3].pop("ground_truth"), r":4: missing field 'ground_truth'"),
        (lambda rows: rows[0].update(gender="other"), r":1: unknown gender 'other'"),
        (lambda rows: rows[0].update(gender="neutral", target=2), r":1: unknown gender 'neutral'"),
        (lambda rows: rows[1].update(target=1), r":2: target 1 does not match gender 'female'"),
        (lambda rows: rows[1].update(ground_truth=[1, 2, 0]), r":2: field 'ground_truth' must be a list of 0/1"),
        (lambda rows: rows.pop(3), r":3: sentence_idx 1 has variants \['male'\]"),
    ],
    ids=["length-mismatch", "missing-gender", "missing-ground-truth", "unknown-gender", "neutral-in-binary",
         "target-mismatch", "non-binary-truth-value", "incomplete-variants"],
)
def test_bad_rows_raise_naming_file_and_line(tmp_path, mutate, message):
    rows = json.loads(json.dumps(GOOD_ROWS))
    mutate(rows)
    path = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(GecoDataError, match=r"bad\.jsonl" + message):
        read_geco_file(path, "binary_all", repair="known", released=False)


def test_truncated_json_line(tmp_path):
    path = _write(tmp_path / "cut.jsonl", GOOD_ROWS, extra_lines=('{"sentence": ["He", "wa',))
    with pytest.raises(GecoDataError, match=r"cut\.jsonl:5: not valid JSON"):
        read_geco_file(path, "binary_all")


def test_repair_all_fixes_a_deleted_word_row(tmp_path):
    rows = [
        _row(["Travelling", "as", "the", ",", "he", "meets", "her"], [0, 0, 0, 1, 0, 1, 1, 0], "male", 5),
        _row(["Travelling", "as", "the", ",", "she", "meets", "her"], [0, 0, 0, 1, 0, 1, 1, 0], "female", 5),
        _row(["Travelling", "as", "the", "Abbé", ",", "they", "meet", "her"], [0, 0, 0, 1, 0, 1, 1, 0], "neutral", 5),
    ]
    path = _write(tmp_path / "nb.jsonl", rows)
    with pytest.raises(GecoDataError, match=r"nb\.jsonl:1: 7 words but 8 ground_truth"):
        read_geco_file(path, "nonbinary_subject", repair="known", released=False)
    fixed = read_geco_file(path, "nonbinary_subject", repair="all")
    assert [r["repaired"] for r in fixed] == [True, True, False]
    assert fixed[0]["ground_truth"] == [0, 0, 0, 0, 1, 1, 0]  # entry 3 ("Abbé") removed
    assert fixed[0]["n_ground_truth"] == 2


def test_repair_rule_refuses_ambiguous_alignment():
    # removing either "a" gives the same words: the deleted position is not unique
    assert repair_deleted_word(["a", "b"], [1, 0, 0], ["a", "a", "b"]) is None
    assert repair_deleted_word(["a", "b", "c"], [0, 0, 0], ["a", "b", "c"]) is None  # not one word shorter


def _custom_dir(tmp_path: Path, train_rows: list, test_rows: list, folder: str = "binary_gender_all") -> Path:
    _write(tmp_path / "data" / folder / "train.jsonl", train_rows)
    _write(tmp_path / "data" / folder / "test.jsonl", test_rows)
    return tmp_path / "data"


def test_checksum_mismatch_of_local_copy(tmp_path):
    data_dir = _custom_dir(tmp_path, GOOD_ROWS, GOOD_ROWS)
    with pytest.raises(GecoChecksumError, match=r"train\.jsonl: SHA-256 .* does not match the released"):
        load_geco("binary_all", "train", data_dir=data_dir, cache_dir=tmp_path / "cache")


def test_custom_dir_without_checksums_loads_and_errors_name_file_and_line(tmp_path):
    data_dir = _custom_dir(tmp_path, GOOD_ROWS, GOOD_ROWS)
    ds = load_geco("binary_all", "test", data_dir=data_dir, verify_checksums=False, cache_dir=tmp_path / "cache")
    assert ds["words"] == [r["sentence"] for r in GOOD_ROWS]
    assert ds["label"] == [1, 0, 1, 0]

    broken = json.loads(json.dumps(GOOD_ROWS))
    broken[2]["ground_truth"] = [1, 0]
    bad_dir = _custom_dir(tmp_path / "b", GOOD_ROWS, broken)
    with pytest.raises(GecoDataError, match=r"binary_gender_all/test\.jsonl:3: 4 words but 2 ground_truth"):
        load_geco("binary_all", "test", data_dir=bad_dir, verify_checksums=False, cache_dir=tmp_path / "cache")


def test_edited_local_copy_is_not_served_from_cache(tmp_path):
    data_dir = _custom_dir(tmp_path, GOOD_ROWS, GOOD_ROWS)
    cache = tmp_path / "cache"
    first = load_geco("binary_all", "test", data_dir=data_dir, verify_checksums=False, cache_dir=cache)
    _write(data_dir / "binary_gender_all" / "test.jsonl", GOOD_ROWS[:2])
    second = load_geco("binary_all", "test", data_dir=data_dir, verify_checksums=False, cache_dir=cache)
    assert (len(first), len(second)) == (4, 2)


class _FakeDownloadManager:
    """Serves the pinned URLs from the local copy, recording what was asked for (the Hub is unreachable here)."""

    def __init__(self, geco_dir: Path, corrupt: bool = False, tmp: Path | None = None):
        self.geco_dir, self.corrupt, self.tmp, self.requested = geco_dir, corrupt, tmp, []

    def download(self, urls: dict[str, str]) -> dict[str, str]:
        self.requested.append(urls)
        out = {}
        for split, url in urls.items():
            folder, name = url.split("/")[-2:]
            path = self.geco_dir / folder / name
            if self.corrupt:
                path = self.tmp / f"{split}.jsonl"
                path.write_text((self.geco_dir / folder / name).read_text()[:-10])
            out[split] = str(path)
        return out


def test_download_path_uses_pinned_urls_and_checks_checksums(monkeypatch, geco_dir, tmp_path):
    import geco_dataset.geco as geco_module

    monkeypatch.setattr(geco_module, "default_geco_dir", lambda: None)
    builder = Geco(config_name="binary_all", cache_dir=str(tmp_path))
    manager = _FakeDownloadManager(geco_dir)
    generators = builder._split_generators(manager)
    (urls,) = manager.requested
    assert urls["test"] == (
        "https://raw.githubusercontent.com/braindatalab/gecobench/f0907c69d95353016556a6cbd0c5fcaa76392ed9"
        "/data/dataset/binary_gender_all/test.jsonl"
    )
    assert [g.name for g in generators] == ["train", "test"]
    with pytest.raises(GecoChecksumError, match="does not match the released binary_gender_all/train.jsonl"):
        builder._split_generators(_FakeDownloadManager(geco_dir, corrupt=True, tmp=tmp_path))


def test_one_rule_finds_the_local_data_for_the_builders_and_for_training(tmp_path, monkeypatch):
    """``GECOBENCH_GECO_DIR`` first, then ``GECOBENCH_SHARED_DATA/geco``, then the checkout's sibling: the dataset
    builder (evaluation) and training read the same folder (training alone used to honour the second)."""
    from geco_dataset.geco import default_geco_dir as builders
    from gecobench.models.data import default_geco_dir as training

    shared = tmp_path / "shared"
    (shared / "geco").mkdir(parents=True)
    monkeypatch.delenv("GECOBENCH_GECO_DIR", raising=False)
    monkeypatch.setenv("GECOBENCH_SHARED_DATA", str(shared))
    assert builders() == str(shared / "geco") and training() == shared / "geco"
    monkeypatch.setenv("GECOBENCH_GECO_DIR", str(tmp_path / "explicit"))
    assert builders() == str(tmp_path / "explicit") and training() == tmp_path / "explicit"
    # a shared folder without a geco copy is passed over for the next place, not returned
    monkeypatch.delenv("GECOBENCH_GECO_DIR")
    monkeypatch.setenv("GECOBENCH_SHARED_DATA", str(tmp_path / "empty"))
    assert builders() != str(tmp_path / "empty" / "geco")
    assert training() != tmp_path / "empty" / "geco"

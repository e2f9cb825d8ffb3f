"""The GECO dataset (GECOBench, Wilming et al., Frontiers in AI 2025) as a 🤗 ``datasets`` builder.

Four configurations, as released by the GECOBench repository at a pinned commit:

* ``binary_all`` / ``nonbinary_all`` — the paper's D_A: every word referring to the protagonist is altered;
* ``binary_subject`` / ``nonbinary_subject`` — the paper's D_S: only the grammatical subject is altered.

Every row is one gender variant of one source sentence: ``words`` (pre-split), ``ground_truth`` (1 where the
word differs between the gender variants of the sentence), ``label`` (female=0, male=1, non-binary=2, ids as
released), ``sentence_id``.

Bad data is never dropped silently. Each line is validated; a line that breaks a rule raises
:class:`GecoDataError` naming the file and the line. The one repairable defect (a variant one word shorter than
its ground truth because the generation deleted a word, see :func:`repair_deleted_word`) is repaired only

* for the two known rows of the checksum-verified released files (``repair="known"``, the default), or
* for any row (``repair="all"``), or never (``repair="none"``, strict).

Repaired rows carry ``repaired=True``; the builder logs how many rows it repaired.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets
from datasets.exceptions import DatasetGenerationError

from geco_common.domain import GECO_CONFIGS, GECO_FOLDERS, GECO_SPLITS, LABEL_NAMES
from geco_common.paths import shared_data_dir
from geco_dataset._paths import raw_file_url

logger = logging.getLogger(__name__)

GECO_COMMIT = "f0907c69d95353016556a6cbd0c5fcaa76392ed9"
GECO_REPO = "braindatalab/gecobench"
GECO_URL_TEMPLATE = (
    "https://raw.githubusercontent.com/braindatalab/gecobench/{commit}/data/dataset/{folder}/{split}.jsonl"
)
# SHA-256 of the released files at GECO_COMMIT, keyed by "<folder>/<split>.jsonl"
GECO_SHA256: dict[str, str] = {
    "binary_gender_all/test.jsonl": "60f4f84ec5aa1d23eba47bec31e2e22b8c78557a2b28314549ab832d99960edd",
    "binary_gender_all/train.jsonl": "2763003165719d26ef66503ef3943b782a77e4ef9741098a8e18ad1592ad0df9",
    "binary_gender_subj/test.jsonl": "0ff41288c3691acc46a6df62a4fab407703e2c5a7a8e09f6cd71b3a679869d79",
    "binary_gender_subj/train.jsonl": "590549986d54f2a7d5e49e2bcd66473e0ce79d53879960751c9e39395115f066",
    "non_binary_gender_all/test.jsonl": "08d5803e7b6aed5d3f894127a9f88b93ee3e9e35245e261444c68cb5bf57fdb6",
    "non_binary_gender_all/train.jsonl": "ef1b972be4c3485027db7ead0df5dfeb4a4082e61a642c0da9d2eb7724ac8849",
    "non_binary_gender_subj/test.jsonl": "a8f8dc273edfddfb800ef98d6747de68e01c6b0c8c6dffb39a62f6cb410a393f",
    "non_binary_gender_subj/train.jsonl": "ffee51c528469ab94ce4ba272065d385c2b351c84c931dd478288952c9cd7859",
}
# rows per (config, split) in the release
GECO_EXPECTED_ROWS: dict[tuple[str, str], int] = {
    (config, split): {"train": 1288, "test": 322}[split] * (3 if config.startswith("nonbinary") else 2)
    for config in GECO_CONFIGS
    for split in GECO_SPLITS
}
GECO_SENTENCES_PER_SPLIT: dict[str, int] = {"train": 1288, "test": 322}

# released `gender` value -> released `target` id (= our ClassLabel id)
GENDER_TO_LABEL: dict[str, int] = {"female": 0, "male": 1, "neutral": 2}
BINARY_GENDERS: tuple[str, ...] = ("male", "female")
NONBINARY_GENDERS: tuple[str, ...] = ("male", "female", "neutral")

REPAIR_MODES: tuple[str, ...] = ("known", "all", "none")
# (file key, sentence_idx) of the rows the released files are known to need repaired: in D_S non-binary the
# generation deleted one word ("." resp. "Abbé") from the male and female variants but kept its ground truth.
KNOWN_REPAIRS: frozenset[tuple[str, int]] = frozenset(
    {("non_binary_gender_subj/train.jsonl", 1534), ("non_binary_gender_subj/test.jsonl", 988)}
)

GECO_DIR_ENV = "GECOBENCH_GECO_DIR"


class GecoDataError(ValueError):
    """A GECO file breaks a rule of the format; the message names the file and the line."""


class GecoChecksumError(GecoDataError):
    """A GECO file does not have the SHA-256 of the released file."""


def default_geco_dir() -> str | None:
    """``$GECOBENCH_GECO_DIR`` if set, else ``<repo>/../shared/data/geco`` if it exists, else ``None`` (download)."""
    return shared_data_dir(GECO_DIR_ENV, "geco")


def geco_file_key(config: str, split: str) -> str:
    """``"<released folder>/<split>.jsonl"``: the file's path in the release, used for checksums and messages."""
    _check_config(config)
    if split not in GECO_SPLITS:
        raise ValueError(f"unknown GECO split {split!r}; expected one of {GECO_SPLITS}")
    return f"{GECO_FOLDERS[config]}/{split}.jsonl"


def geco_url(config: str, split: str, commit: str = GECO_COMMIT) -> str:
    """Raw-file URL of a released GECO file at the pinned commit (``$GECOBENCH_RAW_BASE_URL`` names a mirror)."""
    return raw_file_url(GECO_REPO, commit, f"data/dataset/{GECO_FOLDERS[config]}/{split}.jsonl")


def sha256_of(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_geco_checksum(path: str | os.PathLike, file_key: str) -> None:
    """Raise :class:`GecoChecksumError` unless ``path`` has the released SHA-256 of ``file_key``."""
    expected = GECO_SHA256[file_key]
    found = sha256_of(path)
    if found != expected:
        raise GecoChecksumError(
            f"{path}: SHA-256 {found} does not match the released {file_key} ({expected}) at commit {GECO_COMMIT}; "
            "the file is modified or truncated. Pass verify_checksums=False to read a custom file "
            "(known repairs then do not apply; use repair='all' to repair it by the documented rule)."
        )


def _check_config(config: str) -> None:
    if config not in GECO_FOLDERS:
        raise ValueError(f"unknown GECO config {config!r}; expected one of {GECO_CONFIGS}")


def repair_deleted_word(short_words: list[str], ground_truth: list[int], sibling_words: list[str]) -> list[int] | None:
    """Drop the ground-truth entry of the word the generation deleted from a variant.

    The repair rule (documented in the dataset card): a variant with exactly one word fewer than its
    ``ground_truth`` is aligned against a sibling variant of the same sentence whose words have the ground
    truth's length. The deleted position ``k`` is the one for which the sibling's words with word ``k`` removed
    agree with the short variant at the most positions; it must be unique. The repaired ground truth is
    ``ground_truth`` without entry ``k``.

    Returns ``None`` when the rule does not apply (lengths not as described, or ``k`` not unique).
    """
    n = len(ground_truth)
    if len(short_words) != n - 1 or len(sibling_words) != n or n == 0:
        return None
    scores = []
    for k in range(n):
        candidate = sibling_words[:k] + sibling_words[k + 1 :]
        scores.append(sum(a == b for a, b in zip(candidate, short_words)))
    best = max(scores)
    if scores.count(best) != 1:
        return None
    k = scores.index(best)
    return list(ground_truth[:k]) + list(ground_truth[k + 1 :])


def _validate_line(record: Any, where: str, allowed_genders: tuple[str, ...]) -> None:
    """Field-by-field checks of one parsed JSON line; raises :class:`GecoDataError` naming ``where``."""
    if not isinstance(record, dict):
        raise GecoDataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for field in ("sentence", "ground_truth", "gender", "target", "sentence_idx"):
        if field not in record:
            raise GecoDataError(f"{where}: missing field {field!r}")
    words, truth = record["sentence"], record["ground_truth"]
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise GecoDataError(f"{where}: field 'sentence' must be a list of strings")
    if not words:
        raise GecoDataError(f"{where}: field 'sentence' is empty")
    if not isinstance(truth, list) or not all(type(v) is int and v in (0, 1) for v in truth):
        raise GecoDataError(f"{where}: field 'ground_truth' must be a list of 0/1 integers")
    gender = record["gender"]
    if gender not in allowed_genders:
        raise GecoDataError(f"{where}: unknown gender {gender!r} for this config; expected one of {allowed_genders}")
    if type(record["target"]) is not int or record["target"] != GENDER_TO_LABEL[gender]:
        raise GecoDataError(
            f"{where}: target {record['target']!r} does not match gender {gender!r} "
            f"(expected {GENDER_TO_LABEL[gender]})"
        )
    if type(record["sentence_idx"]) is not int or record["sentence_idx"] < 0:
        raise GecoDataError(f"{where}: sentence_idx must be a non-negative integer, got {record['sentence_idx']!r}")


def read_geco_file(
    path: str | os.PathLike,
    config: str,
    file_key: str | None = None,
    repair: str = "known",
    released: bool = False,
) -> list[dict[str, Any]]:
    """Parse and validate one GECO ``.jsonl`` file into rows of the builder's features.

    Args:
        path: the file.
        config: one of :data:`GECO_CONFIGS` (decides which genders are allowed).
        file_key: ``"<folder>/<split>.jsonl"`` for :data:`KNOWN_REPAIRS`; defaults to the path's last two parts.
        repair: ``"known"`` repairs only :data:`KNOWN_REPAIRS` and only when ``released`` is true; ``"all"``
            repairs any row the rule of :func:`repair_deleted_word` fixes; ``"none"`` repairs nothing.
        released: the file's checksum equals the released file's.

    Raises:
        GecoDataError: naming the file and line of the first row that is invalid and not repaired.
    """
    _check_config(config)
    if repair not in REPAIR_MODES:
        raise ValueError(f"repair must be one of {REPAIR_MODES}, got {repair!r}")
    path = Path(path)
    file_key = file_key or f"{path.parent.name}/{path.name}"
    genders = NONBINARY_GENDERS if config.startswith("nonbinary") else BINARY_GENDERS

    records: list[tuple[int, dict[str, Any]]] = []
    # Bytes, decoded line by line: a bad byte then names its line (a text-mode file would raise a bare
    # UnicodeDecodeError from the iteration, naming neither file nor line).
    with open(path, "rb") as handle:
        for line_no, raw_line in enumerate(handle, start=1):
            where = f"{path}:{line_no}"
            try:
                line = raw_line.decode("utf-8")
            except UnicodeDecodeError as error:
                raise GecoDataError(
                    f"{where}: not valid UTF-8 (byte {raw_line[error.start:error.start + 1]!r} at column "
                    f"{error.start + 1})"
                ) from None
            if not line.strip():
                raise GecoDataError(f"{where}: empty line")
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise GecoDataError(f"{where}: not valid JSON (truncated line?): {error}") from None
            except RecursionError:
                raise GecoDataError(f"{where}: not valid GECO JSON: nested too deeply") from None
            _validate_line(record, where, genders)
            records.append((line_no, record))
    if not records:
        raise GecoDataError(f"{path}: file has no rows")

    # variants of one sentence are adjacent rows: group them and check each group is complete
    groups: list[list[tuple[int, dict[str, Any]]]] = []
    seen: set[int] = set()
    for line_no, record in records:
        idx = record["sentence_idx"]
        if groups and groups[-1][0][1]["sentence_idx"] == idx:
            groups[-1].append((line_no, record))
            continue
        if idx in seen:
            raise GecoDataError(f"{path}:{line_no}: sentence_idx {idx} reappears after other sentences")
        seen.add(idx)
        groups.append([(line_no, record)])
    for group in groups:
        found = sorted(r["gender"] for _, r in group)
        if found != sorted(genders):
            raise GecoDataError(
                f"{path}:{group[0][0]}: sentence_idx {group[0][1]['sentence_idx']} has variants {found}, "
                f"expected exactly one of each of {sorted(genders)} (truncated or duplicated rows?)"
            )

    rows: list[dict[str, Any]] = []
    n_repaired = 0
    for group in groups:
        for line_no, record in group:
            words, truth = record["sentence"], record["ground_truth"]
            repaired = False
            if len(words) != len(truth):
                idx = record["sentence_idx"]
                may_repair = repair == "all" or (repair == "known" and released and (file_key, idx) in KNOWN_REPAIRS)
                fixed = None
                if may_repair:
                    for _, sibling in group:
                        fixed = repair_deleted_word(words, truth, sibling["sentence"])
                        if fixed is not None:
                            break
                if fixed is None:
                    reason = "" if may_repair else f" (repair={repair!r}, released file={released})"
                    raise GecoDataError(
                        f"{path}:{line_no}: {len(words)} words but {len(truth)} ground_truth entries "
                        f"(sentence_idx {idx}, gender {record['gender']}); not repaired{reason}"
                    )
                truth, repaired = fixed, True
                n_repaired += 1
            rows.append(
                {
                    "words": list(words),
                    "ground_truth": list(truth),
                    "label": GENDER_TO_LABEL[record["gender"]],
                    "gender": record["gender"],
                    "sentence_id": record["sentence_idx"],
                    "n_ground_truth": int(sum(truth)),
                    "repaired": repaired,
                    "source_line": line_no,
                }
            )
    if n_repaired:
        logger.warning("%s: repaired %d row(s) by the deleted-word rule (see the dataset card)", path, n_repaired)
    return rows


def geco_features() -> datasets.Features:
    """The features of every GECO config."""
    return datasets.Features(
        {
            "words": datasets.Sequence(datasets.Value("string")),
            "ground_truth": datasets.Sequence(datasets.Value("int8")),
            "label": datasets.ClassLabel(names=list(LABEL_NAMES)),
            "gender": datasets.Value("string"),
            "sentence_id": datasets.Value("int32"),
            "n_ground_truth": datasets.Value("int32"),
            "repaired": datasets.Value("bool"),
            "source_line": datasets.Value("int32"),
        }
    )


GECO_DESCRIPTION = (
    "GECO: gender-controlled English sentences with word-level ground truth of which words carry gender, "
    "for testing whether explanations of gender classifiers are correct (Wilming et al., 2025)."
)
GECO_CITATION = """@article{wilming2025gecobench,
  title   = {{GECOBench}: A Gender-Controlled Text Dataset and Benchmark for Quantifying Biases in Explanations},
  author  = {Wilming, Rick and Dox, Artur and Schulz, Hjalmar and Oliveira, Marta and Clark, Benedict and Haufe, Stefan},
  journal = {Frontiers in Artificial Intelligence},
  year    = {2025}
}"""
GECO_HOMEPAGE = "https://github.com/braindatalab/gecobench"
GECO_LICENSE = "cc-by-sa-4.0"


@dataclass
class GecoConfig(datasets.BuilderConfig):
    """A GECO configuration.

    Attributes:
        repair: ``"known"`` (default), ``"all"`` or ``"none"``; see :func:`read_geco_file`.
        verify_checksums: refuse files whose SHA-256 differs from the release (on by default, local copies too).
        data_fingerprint: content hash of the local files; only used to key the cache (set by :func:`load_geco`).
        splits: the splits to prepare; a download fetches only these (:func:`load_geco` asks for one).
    """

    repair: str = "known"
    verify_checksums: bool = True
    data_fingerprint: str = ""
    splits: tuple[str, ...] = GECO_SPLITS


class Geco(datasets.GeneratorBasedBuilder):
    """Builder of the four GECO configurations (splits ``train`` and ``test`` as released)."""

    BUILDER_CONFIG_CLASS = GecoConfig
    BUILDER_CONFIGS: ClassVar[list[GecoConfig]] = [
        GecoConfig(name="binary_all", version=datasets.Version("1.0.0"), description="D_A, binary (male/female)"),
        GecoConfig(name="binary_subject", version=datasets.Version("1.0.0"), description="D_S, binary (male/female)"),
        GecoConfig(name="nonbinary_all", version=datasets.Version("1.0.0"), description="D_A, male/female/non-binary"),
        GecoConfig(
            name="nonbinary_subject", version=datasets.Version("1.0.0"), description="D_S, male/female/non-binary"
        ),
    ]
    DEFAULT_CONFIG_NAME = "binary_all"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=GECO_DESCRIPTION,
            features=geco_features(),
            homepage=GECO_HOMEPAGE,
            license=GECO_LICENSE,
            citation=GECO_CITATION,
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        if self.config.repair not in REPAIR_MODES:
            raise ValueError(f"repair must be one of {REPAIR_MODES}, got {self.config.repair!r}")
        config = self.config.name
        splits = tuple(self.config.splits)
        unknown = [split for split in splits if split not in GECO_SPLITS]
        if unknown or not splits:
            raise ValueError(f"unknown GECO split(s) {unknown or splits!r}; expected some of {GECO_SPLITS}")
        data_dir = self.config.data_dir or default_geco_dir()
        if data_dir:
            paths = {}
            for split in splits:
                path = Path(data_dir) / geco_file_key(config, split)
                if not path.is_file():
                    raise FileNotFoundError(f"GECO file not found: {path} (data_dir={data_dir})")
                paths[split] = str(path)
        else:
            paths = _download_geco_files(dl_manager, config, splits)
        # validate here, not in _generate_examples: datasets wraps errors raised during generation in a generic
        # DatasetGenerationError, and a bad file should fail before anything is written to the cache
        self._parsed_rows: dict[str, list[dict[str, Any]]] = {}
        for split in splits:
            self._parsed_rows[str(paths[split])] = self._read(str(paths[split]), geco_file_key(config, split))
        return [
            datasets.SplitGenerator(
                name=getattr(datasets.Split, split.upper()),
                gen_kwargs={"path": str(paths[split]), "file_key": geco_file_key(config, split)},
            )
            for split in splits
        ]

    def _read(self, path: str, file_key: str) -> list[dict[str, Any]]:
        released = sha256_of(path) == GECO_SHA256[file_key]
        if self.config.verify_checksums and not released:
            verify_geco_checksum(path, file_key)  # raises with the full message
        return read_geco_file(path, self.config.name, file_key=file_key, repair=self.config.repair, released=released)

    def _generate_examples(self, path: str, file_key: str) -> Iterator[tuple[int, dict[str, Any]]]:
        rows = getattr(self, "_parsed_rows", {}).get(path)
        if rows is None:
            rows = self._read(path, file_key)
        yield from enumerate(rows)


class GecoDownloadError(ConnectionError):
    """A GECO file could not be downloaded (offline, unreachable); the message names the file and both ways to give
    local files instead."""


def _download_geco_files(dl_manager: datasets.DownloadManager, config: str, splits: tuple[str, ...]) -> dict[str, str]:
    """Download the released GECO files of ``splits`` into the datasets cache, or raise :class:`GecoDownloadError`
    naming the file that failed."""
    urls = {split: geco_url(config, split) for split in splits}
    try:
        return {split: str(path) for split, path in dl_manager.download(urls).items()}
    except (ConnectionError, OSError) as error:  # offline mode, DNS, HTTP errors, an unreachable mirror
        text = str(error).strip()
        failed = [split for split, url in urls.items() if url in text] or list(splits)
        reason = (text.splitlines() or [type(error).__name__])[0]
        if "offline" in type(error).__name__.lower():
            reason = "offline mode is on: HF_HUB_OFFLINE or HF_DATASETS_OFFLINE is set"
        elif any(url in reason for url in urls.values()):
            reason = type(error).__name__
        keys = " and ".join(geco_file_key(config, split) for split in failed)
        where = " and ".join(urls[split] for split in failed)
        raise GecoDownloadError(
            f"GECO file {keys} (config {config!r}) could not be downloaded from {where} ({reason}). "
            f"Give local files instead: pass data_dir=FOLDER (--data-dir FOLDER on the command line) or set "
            f"${GECO_DIR_ENV}=FOLDER, where FOLDER holds the released layout <config folder>/<split>.jsonl "
            f"(here {keys}) of https://github.com/{GECO_REPO}/tree/{GECO_COMMIT}/data/dataset"
        ) from None


def _unwrap_generation_error(error: Exception) -> Exception:
    """The :class:`ValueError` behind a ``DatasetGenerationError``, so callers see which file and line is bad."""
    cause = error.__cause__
    return cause if isinstance(cause, ValueError) else error


def geco_fingerprint(config: str, split: str, data_dir: str | os.PathLike | None = None, repair: str = "known") -> str:
    """A provenance fingerprint of one GECO split: ``"<config>/<split>@sha256:<source file hash>;repair=<mode>"``.

    The source hash is that of the local file (``data_dir`` or :func:`default_geco_dir`), or the embedded released
    hash when no local copy exists.
    """
    key = geco_file_key(config, split)
    base = str(data_dir) if data_dir is not None else default_geco_dir()
    digest = sha256_of(Path(base) / key) if base else GECO_SHA256[key]
    return f"{config}/{split}@sha256:{digest};repair={repair}"


def _local_fingerprint(data_dir: str, config: str) -> str:
    digest = hashlib.sha256()
    for split in GECO_SPLITS:
        path = Path(data_dir) / geco_file_key(config, split)
        if not path.is_file():
            raise FileNotFoundError(f"GECO file not found: {path} (data_dir={data_dir})")
        digest.update(sha256_of(path).encode("ascii"))
    return digest.hexdigest()[:16]


def load_geco(
    config: str,
    split: str,
    data_dir: str | os.PathLike | None = None,
    repair: str = "known",
    verify_checksums: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> datasets.Dataset:
    """Load one split of one GECO config through the :class:`Geco` builder.

    Args:
        config: one of :data:`GECO_CONFIGS`.
        split: ``"train"`` or ``"test"``.
        data_dir: folder with the released layout (``<folder>/<split>.jsonl``); default
            :func:`default_geco_dir`, and when that is ``None`` the files are downloaded at the pinned commit.
        repair: ``"known"``, ``"all"`` or ``"none"`` (see :func:`read_geco_file`).
        verify_checksums: refuse files that differ from the release.
        cache_dir: 🤗 datasets cache folder (default: the usual HF cache).
    """
    _check_config(config)
    if split not in GECO_SPLITS:
        raise ValueError(f"unknown GECO split {split!r}; expected one of {GECO_SPLITS}")
    data_dir = str(data_dir) if data_dir is not None else default_geco_dir()
    kwargs: dict[str, Any] = {"repair": repair, "verify_checksums": verify_checksums}
    if data_dir:
        # the cache is keyed by the files' content, so an edited local copy is never served stale
        kwargs["data_dir"] = data_dir
        kwargs["data_fingerprint"] = _local_fingerprint(data_dir, config)
    else:
        kwargs["splits"] = (split,)  # download only the split asked for (the cache is keyed by it too)
    builder = Geco(config_name=config, cache_dir=str(cache_dir) if cache_dir else None, **kwargs)
    try:
        builder.download_and_prepare()
    except DatasetGenerationError as error:
        raise _unwrap_generation_error(error) from error
    except GecoDownloadError as error:
        raise GecoDownloadError(str(error)) from None  # the message says it all: no traceback through datasets
    return builder.as_dataset(split=split)

"""Spanish gender-bias templates and adjective lexicons (Garrido-Muñoz, Martínez-Santiago & Montejo-Ráez,
"MarIA and BETO are sexist: evaluating gender bias in large language models for Spanish", Language Resources
and Evaluation 2023) as a 🤗 ``datasets`` builder plus plain loaders.

Configurations of :class:`SpanishGenderTemplates`:

* ``templates_2023`` (``templates/sentences.tsv``) and ``templates_2022`` (``templates/sentences_2022-08.tsv``):
  one row per (template, subject, gender group) with ``text`` holding :data:`MASK_PLACEHOLDER`;
* ``lexicon_supersenses_top10``, ``lexicon_supersenses_top29`` (JSON ``{category: [words]}``),
  ``lexicon_supersenses_2022``, ``lexicon_visibility_polarity``, ``lexicon_wiggins`` (column-layout TSV):
  one row per ``word → category``.

Every config has the single split ``train`` (the Hub's convention for unsplit data).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets
from datasets.exceptions import DatasetGenerationError

from geco_common.domain import MASK_PLACEHOLDER  # noqa: F401 (re-exported: the templates' placeholder)
from geco_common.paths import shared_data_dir
from geco_dataset._paths import raw_file_url
from geco_dataset.spanish_sources import (  # noqa: F401 (re-exported: the pins are part of the public API)
    SPANISH_HEAD_COMMIT,
    SPANISH_OLD_COMMIT,
    SPANISH_PREDICTION_MODELS,
    SPANISH_REPO,
    SPANISH_SHA256,
    SPANISH_UPSTREAM,
)

SUBJECTS_PER_TEMPLATE = 12
SPANISH_DIR_ENV = "GECOBENCH_SPANISH_DIR"

TEMPLATE_FILES: dict[str, str] = {
    "templates_2023": "templates/sentences.tsv",
    "templates_2022": "templates/sentences_2022-08.tsv",
}
# scheme -> (file, layout)
LEXICON_FILES: dict[str, tuple[str, str]] = {
    "supersenses_top10": ("lexicons/supersenses_top10.json", "json"),
    "supersenses_top29": ("lexicons/supersenses_top29.json", "json"),
    "visibility_polarity": ("lexicons/visibility_polarity.tsv", "columns"),
    "wiggins": ("lexicons/wiggins_accept_reject_love_status.tsv", "columns"),
    "supersenses_2022": ("lexicons/supersenses_2022-08.tsv", "columns"),
}
LEXICON_SCHEMES: tuple[str, ...] = tuple(LEXICON_FILES)


def spanish_url(relative: str) -> str:
    """Raw-file URL of a released Spanish file (``templates/sentences.tsv``, ``predictions/top10/<model>.tsv``, ...)
    at its pinned upstream commit; ``$GECOBENCH_RAW_BASE_URL`` names a mirror."""
    if relative not in SPANISH_UPSTREAM:
        raise ValueError(f"{relative!r} is not a released Spanish file; expected one of {sorted(SPANISH_UPSTREAM)}")
    commit, upstream_path = SPANISH_UPSTREAM[relative]
    return raw_file_url(SPANISH_REPO, commit, upstream_path)


SPANISH_CITATION = """@article{garridomunoz2023maria,
  title   = {{MarIA} and {BETO} are sexist: evaluating gender bias in large language models for {Spanish}},
  author  = {Garrido-Mu{\\~n}oz, Ismael and Mart{\\'i}nez-Santiago, Fernando and Montejo-R{\\'a}ez, Arturo},
  journal = {Language Resources and Evaluation},
  year    = {2023}
}"""
SPANISH_HOMEPAGE = "https://github.com/" + SPANISH_REPO


class SpanishDataError(ValueError):
    """A Spanish template or lexicon file breaks its format; the message names the file and the line."""


def default_spanish_dir() -> str | None:
    """``$GECOBENCH_SPANISH_DIR`` if set, else ``<repo>/../shared/data/spanish`` if it exists, else ``None``."""
    return shared_data_dir(SPANISH_DIR_ENV, "spanish")


def _decode_utf8(path: Path, data: bytes) -> str:
    """``data`` as text (a leading BOM dropped); an undecodable byte raises naming the file and its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line_no = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise SpanishDataError(
            f"{path}:{line_no}: not valid UTF-8 (byte {data[error.start:error.start + 1]!r} at column {column})"
        ) from None


def _read_lines(path: Path) -> list[str]:
    # the files use CRLF; a stray BOM on line 1 would otherwise become part of the first header cell
    with open(path, "rb") as handle:
        text = _decode_utf8(path, handle.read())
    # Lines end at \n, \r\n or \r, as reading with newline="" did; str.splitlines would also split at \x0b,
    # \x1c… and \u2028 inside a cell.
    return [line.rstrip("\r\n") for line in io.StringIO(text, newline="")]


def parse_templates(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Parse a templates TSV into rows ``template_id, subject_id, gender, text, row_id, line``.

    Format: lines starting with ``#`` are comments and blank lines are skipped; the first remaining line is the
    header naming the gender groups (``male<TAB>female``); each later line holds one sentence per group, each
    containing :data:`MASK_PLACEHOLDER`. Data row ``i`` (0-based) is template ``i // 12``, subject ``i % 12``.

    Raises:
        SpanishDataError: wrong number of columns, a cell without the placeholder, or a row count that is not a
            multiple of 12 — naming file and line.
    """
    path = Path(path)
    header: list[str] | None = None
    rows: list[dict[str, Any]] = []
    n_data = 0
    for line_no, line in enumerate(_read_lines(path), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            header = [cell.strip() for cell in cells]
            if len(header) < 2 or any(not cell for cell in header) or len(set(header)) != len(header):
                raise SpanishDataError(f"{path}:{line_no}: header must name two or more distinct groups, got {cells}")
            continue
        if len(cells) != len(header):
            raise SpanishDataError(
                f"{path}:{line_no}: {len(cells)} column(s), expected {len(header)} ({', '.join(header)})"
            )
        for gender, cell in zip(header, cells):
            text = cell.strip()
            if MASK_PLACEHOLDER not in text:
                raise SpanishDataError(f"{path}:{line_no}: the {gender} sentence {text!r} has no {MASK_PLACEHOLDER}")
            rows.append(
                {
                    "template_id": n_data // SUBJECTS_PER_TEMPLATE,
                    "subject_id": n_data % SUBJECTS_PER_TEMPLATE,
                    "gender": gender,
                    "text": text,
                    "row_id": n_data,
                    "line": line_no,
                }
            )
        n_data += 1
    if header is None or n_data == 0:
        raise SpanishDataError(f"{path}: no header and template rows found")
    if n_data % SUBJECTS_PER_TEMPLATE:
        raise SpanishDataError(
            f"{path}: {n_data} template rows is not a multiple of {SUBJECTS_PER_TEMPLATE} subjects (truncated file?)"
        )
    return rows


def _strip_tag(tag: str) -> str:
    tag = tag.strip()
    return tag[1:-1].strip() if tag.startswith("[") and tag.endswith("]") else tag


def parse_column_lexicon(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Parse a column-layout lexicon into rows ``word, category, label``.

    Line 1 holds human labels, line 2 the category tags (``[Visible +]`` → category ``Visible +``); below them
    each cell is a word of its column's category. Words are lower-cased and stripped; a word listed in several
    columns belongs to the last such column (later cells overwrite earlier ones, rows in file order).

    Raises:
        SpanishDataError: a line with more cells than the header, or fewer than two header lines.
    """
    path = Path(path)
    lines = _read_lines(path)
    if len(lines) < 2:
        raise SpanishDataError(f"{path}: expected a label line and a tag line, found {len(lines)} line(s)")
    labels = lines[0].split("\t")
    tags = lines[1].split("\t")
    if len(tags) != len(labels):
        raise SpanishDataError(f"{path}:2: {len(tags)} tags for {len(labels)} labels")
    categories = [_strip_tag(tag) for tag in tags]
    for col, category in enumerate(categories):
        if not category:
            raise SpanishDataError(f"{path}:2: column {col + 1} has no category tag")
    word_to_col: dict[str, int] = {}
    for line_no, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        cells = line.split("\t")
        # trailing empty cells are harmless; words beyond the header are not
        if len(cells) > len(categories) and any(cell.strip() for cell in cells[len(categories) :]):
            raise SpanishDataError(f"{path}:{line_no}: {len(cells)} cells but only {len(categories)} columns")
        for col, cell in enumerate(cells[: len(categories)]):
            word = cell.strip().lower()
            if word:
                word_to_col[word] = max(col, word_to_col.get(word, -1))
    return [
        {"word": word, "category": categories[col], "label": labels[col].strip()} for word, col in word_to_col.items()
    ]


def parse_json_lexicon(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Parse a ``{category: [words]}`` lexicon into rows ``word, category, label``.

    Words are lower-cased; a word in several categories belongs to the last one in file order (the same rule as
    the column layout).
    """
    path = Path(path)
    try:
        data = json.loads(_decode_utf8(path, path.read_bytes()))
    except json.JSONDecodeError as error:
        raise SpanishDataError(f"{path}: not valid JSON (line {error.lineno}): {error.msg}") from None
    except RecursionError:
        raise SpanishDataError(f"{path}: not a lexicon: nested too deeply") from None
    if not isinstance(data, dict):
        raise SpanishDataError(f"{path}: expected an object {{category: [words]}}")
    word_to_category: dict[str, str] = {}
    for category, words in data.items():
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise SpanishDataError(f"{path}: category {category!r} must map to a list of strings")
        for word in words:
            word = word.strip().lower()
            if word:
                word_to_category.pop(word, None)  # re-insert so that dict order follows the winning category
                word_to_category[word] = category
    return [{"word": w, "category": c, "label": c} for w, c in word_to_category.items()]


def _spanish_path(relative: str, data_dir: str | os.PathLike | None) -> Path:
    base = data_dir if data_dir is not None else default_spanish_dir()
    if base is None:
        # no local copy: the released file from its pinned upstream URL, checksum-verified
        return download_spanish_file(relative)
    path = Path(base) / relative
    if not path.is_file():
        raise FileNotFoundError(f"Spanish data file not found: {path}")
    return path


def verify_spanish_checksum(path: str | os.PathLike, relative: str) -> None:
    """Raise :class:`SpanishDataError` unless ``path`` has the released SHA-256 of ``relative``."""
    if relative not in SPANISH_SHA256:
        raise ValueError(f"{relative!r} is not a released Spanish file; expected one of {sorted(SPANISH_SHA256)}")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != SPANISH_SHA256[relative]:
        raise SpanishDataError(
            f"{path}: SHA-256 {digest} does not match the released {relative} ({SPANISH_SHA256[relative]}); "
            "pass verify_checksums=False to read a custom file"
        )


def read_lexicon_rows(scheme: str, path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of a lexicon file in the layout of ``scheme``."""
    if scheme not in LEXICON_FILES:
        raise ValueError(f"unknown lexicon scheme {scheme!r}; expected one of {LEXICON_SCHEMES}")
    layout = LEXICON_FILES[scheme][1]
    return parse_json_lexicon(path) if layout == "json" else parse_column_lexicon(path)


def load_lexicon(
    scheme: str, data_dir: str | os.PathLike | None = None, verify_checksums: bool = False
) -> dict[str, str]:
    """``{lower-cased word: category}`` of one lexicon scheme (one of :data:`LEXICON_SCHEMES`)."""
    if scheme not in LEXICON_FILES:
        raise ValueError(f"unknown lexicon scheme {scheme!r}; expected one of {LEXICON_SCHEMES}")
    relative = LEXICON_FILES[scheme][0]
    path = _spanish_path(relative, data_dir)
    if verify_checksums:
        verify_spanish_checksum(path, relative)
    return {row["word"]: row["category"] for row in read_lexicon_rows(scheme, path)}


def render_with_mask(text: str, mask_token_or_tokenizer: Any) -> str:
    """Replace :data:`MASK_PLACEHOLDER` in ``text`` by a model's mask token.

    ``mask_token_or_tokenizer`` is the token itself (``"[MASK]"``, ``"<mask>"``) or a tokenizer with a
    ``mask_token`` (BERT-style ``[MASK]``, RoBERTa-style ``<mask>``, ...).
    """
    if isinstance(mask_token_or_tokenizer, str):
        mask = mask_token_or_tokenizer
    else:
        mask = getattr(mask_token_or_tokenizer, "mask_token", None)
        if mask is None:
            raise ValueError(f"{type(mask_token_or_tokenizer).__name__} has no mask token; is it a masked LM's?")
        mask = str(mask)
    if not mask:
        raise ValueError("mask token is empty")
    if text.count(MASK_PLACEHOLDER) != 1:
        raise ValueError(f"text must contain {MASK_PLACEHOLDER} exactly once, got {text!r}")
    return text.replace(MASK_PLACEHOLDER, mask)


# --------------------------------------------------------------------------- builder

TEMPLATE_CONFIGS: tuple[str, ...] = tuple(TEMPLATE_FILES)
LEXICON_CONFIGS: tuple[str, ...] = tuple("lexicon_" + scheme for scheme in LEXICON_SCHEMES)
SPANISH_CONFIGS: tuple[str, ...] = TEMPLATE_CONFIGS + LEXICON_CONFIGS


def _file_of_config(config: str) -> str:
    if config in TEMPLATE_FILES:
        return TEMPLATE_FILES[config]
    return LEXICON_FILES[config.removeprefix("lexicon_")][0]


def template_features() -> datasets.Features:
    """Features of the template configs."""
    return datasets.Features(
        {
            "template_id": datasets.Value("int32"),
            "subject_id": datasets.Value("int32"),
            "gender": datasets.Value("string"),
            "text": datasets.Value("string"),
            "row_id": datasets.Value("int32"),
            "line": datasets.Value("int32"),
        }
    )


def lexicon_features() -> datasets.Features:
    """Features of the lexicon configs."""
    return datasets.Features(
        {"word": datasets.Value("string"), "category": datasets.Value("string"), "label": datasets.Value("string")}
    )


@dataclass
class SpanishConfig(datasets.BuilderConfig):
    """A Spanish templates/lexicon configuration; ``verify_checksums`` refuses files that differ from the release."""

    verify_checksums: bool = True
    data_fingerprint: str = ""


class SpanishGenderTemplates(datasets.GeneratorBasedBuilder):
    """Builder of the Spanish gender-bias templates (2023, 2022) and adjective lexicons (one split, ``train``)."""

    BUILDER_CONFIG_CLASS = SpanishConfig
    BUILDER_CONFIGS: ClassVar[list[SpanishConfig]] = [
        SpanishConfig(name=name, version=datasets.Version("1.0.0"), description=f"from {_file_of_config(name)}")
        for name in SPANISH_CONFIGS
    ]
    DEFAULT_CONFIG_NAME = "templates_2023"

    def _info(self) -> datasets.DatasetInfo:
        is_template = self.config.name in TEMPLATE_FILES
        return datasets.DatasetInfo(
            description="Spanish gender-bias fill-mask templates and adjective lexicons (Garrido-Muñoz et al., 2023)",
            features=template_features() if is_template else lexicon_features(),
            homepage=SPANISH_HOMEPAGE,
            citation=SPANISH_CITATION,
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        relative = _file_of_config(self.config.name)
        data_dir = self.config.data_dir or default_spanish_dir()
        if data_dir:
            path = Path(data_dir) / relative
            if not path.is_file():
                raise FileNotFoundError(f"Spanish data file not found: {path} (data_dir={data_dir})")
            path = str(path)
        else:
            path = dl_manager.download(spanish_url(relative))  # verified against SPANISH_SHA256 in _read
        # validate before generation: errors raised while generating are wrapped in a generic DatasetGenerationError
        self._parsed_rows = {path: self._read(path, relative)}
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"path": path, "relative": relative})]

    def _read(self, path: str, relative: str) -> list[dict[str, Any]]:
        if self.config.verify_checksums:
            verify_spanish_checksum(path, relative)
        if self.config.name in TEMPLATE_FILES:
            return parse_templates(path)
        return read_lexicon_rows(self.config.name.removeprefix("lexicon_"), path)

    def _generate_examples(self, path: str, relative: str) -> Iterator[tuple[int, dict[str, Any]]]:
        rows = getattr(self, "_parsed_rows", {}).get(path)
        if rows is None:
            rows = self._read(path, relative)
        yield from enumerate(rows)


def _load_spanish(
    config: str, data_dir: str | os.PathLike | None, verify_checksums: bool, cache_dir: str | os.PathLike | None
) -> datasets.Dataset:
    if config not in SPANISH_CONFIGS:
        raise ValueError(f"unknown Spanish config {config!r}; expected one of {SPANISH_CONFIGS}")
    data_dir = str(data_dir) if data_dir is not None else default_spanish_dir()
    kwargs: dict[str, Any] = {"verify_checksums": verify_checksums}
    if data_dir:
        path = _spanish_path(_file_of_config(config), data_dir)
        kwargs["data_dir"] = data_dir
        kwargs["data_fingerprint"] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    builder = SpanishGenderTemplates(config_name=config, cache_dir=str(cache_dir) if cache_dir else None, **kwargs)
    try:
        builder.download_and_prepare()
    except DatasetGenerationError as error:
        cause = error.__cause__
        raise (cause if isinstance(cause, ValueError) else error) from error
    return builder.as_dataset(split="train")


def load_spanish_templates(
    config: str = "templates_2023",
    data_dir: str | os.PathLike | None = None,
    verify_checksums: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> datasets.Dataset:
    """The template rows (``template_id, subject_id, gender, text, row_id, line``) of ``templates_2023`` or
    ``templates_2022``; ``text`` holds :data:`MASK_PLACEHOLDER` (render it with :func:`render_with_mask`)."""
    if config not in TEMPLATE_FILES:
        raise ValueError(f"unknown template config {config!r}; expected one of {TEMPLATE_CONFIGS}")
    return _load_spanish(config, data_dir, verify_checksums, cache_dir)


def load_spanish_lexicon_dataset(
    config: str,
    data_dir: str | os.PathLike | None = None,
    verify_checksums: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> datasets.Dataset:
    """A lexicon config (one of :data:`LEXICON_CONFIGS`) as a dataset of ``word, category, label`` rows."""
    if config not in LEXICON_CONFIGS:
        raise ValueError(f"unknown lexicon config {config!r}; expected one of {LEXICON_CONFIGS}")
    return _load_spanish(config, data_dir, verify_checksums, cache_dir)


# --------------------------------------------------------------------------- downloads

SPANISH_CACHE_ENV = "GECOBENCH_CACHE"


def _download_manager(cache_dir: str | os.PathLike | None, progress: bool = True) -> datasets.DownloadManager:
    config = datasets.DownloadConfig(cache_dir=str(cache_dir) if cache_dir else None, disable_tqdm=not progress)
    return datasets.DownloadManager(download_config=config)


def download_spanish_file(relative: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """One released Spanish file, downloaded through the 🤗 ``datasets`` DownloadManager from its pinned upstream
    URL (cached) and verified against its SHA-256; raises :class:`SpanishDataError` on other bytes."""
    path = Path(_download_manager(cache_dir).download(spanish_url(relative)))
    verify_spanish_checksum(path, relative)
    return path


def spanish_release_files(include_predictions: bool = True) -> list[str]:
    """The released Spanish files (release-layout paths): templates, models table, lexicons, and optionally the
    published top-10/top-29 predictions of the 20 models."""
    return sorted(r for r in SPANISH_UPSTREAM if include_predictions or not r.startswith("predictions/"))


def default_spanish_download_dir() -> Path:
    """Where :func:`download_spanish_data` lays the files out: ``$GECOBENCH_CACHE/spanish/<HEAD commit>``
    (default ``~/.cache/gecobench``)."""
    root = os.environ.get(SPANISH_CACHE_ENV) or Path.home() / ".cache" / "gecobench"
    return Path(root) / "spanish" / SPANISH_HEAD_COMMIT[:12]


def download_spanish_data(
    dest: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    include_predictions: bool = True,
    progress: bool = True,
) -> Path:
    """Download every released Spanish file into ``dest`` in the release layout (``templates/``, ``lexicons/``,
    ``predictions/top10|top29/``) — the layout ``data_dir=`` and the predictions importer read — and return it.

    Each file comes through the 🤗 ``datasets`` DownloadManager from its pinned upstream URL
    (:data:`SPANISH_UPSTREAM`, ``$GECOBENCH_RAW_BASE_URL`` for a mirror) and must have its released SHA-256;
    files already in ``dest`` with the right checksum are kept, so a second call downloads nothing.
    """
    import shutil

    from tqdm.auto import tqdm

    dest = Path(dest) if dest is not None else default_spanish_download_dir()
    manager: datasets.DownloadManager | None = None
    for relative in tqdm(spanish_release_files(include_predictions), desc="Spanish files", unit="file",
                         disable=not progress):
        target = dest / relative
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SPANISH_SHA256[relative]:
            continue
        manager = manager or _download_manager(cache_dir, progress=False)  # one bar over the files is enough
        downloaded = Path(manager.download(spanish_url(relative)))
        verify_spanish_checksum(downloaded, relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(downloaded, partial)
        partial.replace(target)  # never leave a half-written file under the released name
    return dest

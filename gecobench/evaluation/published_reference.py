"""Published zero-shot reference attributions: the RMA reference of a standard base, read instead of computed.

RMA compares a model's Mass Accuracy with that of its base's zero-shot (``ZS``) model, so evaluating a model
explains two models: the model itself and its zero-shot reference. The reference depends only on the zero-shot
checkpoint, the data and the attribution protocol (:meth:`~gecobench.evaluation.settings.EvaluationSettings.attribution_protocol`),
not on the model compared with it. The reference run computes it for every zoo base anyway, so it publishes it
(``reference/zero_shot_attributions/``, the ``zero_shot_attributions/`` folder of the reference dataset on the
Hub), and a run given ``--reference-attributions`` reads it: the first model of a base then costs what every
later one costs.

A bundle (``<config>-<split>-seed<seed>-<unit>.json.gz``) holds one checkpoint unit of the runner's zero-shot
reference (:func:`gecobench.evaluation.checkpoints.reference_unit_name`): per explainer (its checkpoint key,
:func:`gecobench.evaluation.checkpoints.checkpoint_key`, so the explainer's parameters and version are part of the
match) and per chunk, the row indices and their word scores, exactly as the runner checkpoints them (JSON floats
read back bit for bit).

It is used only when its unit is the run's: what the zero-shot checkpoint computes
(:func:`gecobench.provenance.function_fingerprint`: its weights, config and tokenizer, not when it was saved, nor
the last bits of the label embeddings it computes when built), the split's fingerprint and the attribution
protocol. A zero-shot model rebuilt from the same base therefore matches on any kind of CPU; a model of another
base or recipe does not, and the run computes its reference, as without a bundle. A run over the first
``max_groups`` groups reads the chunks it shares with a whole-split bundle (same rows, same seeds) and computes a
last chunk cut short.

Every chunk is validated when read (rows, one finite score per word); a bundle that does not parse, or whose chunk
does not fit the data, stops the run with an error naming the file. Records say where their reference came from
(``model.zero_shot_reference_source``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gecobench.evaluation.checkpoints import CheckpointStore, reference_unit_name

BUNDLE_FORMAT = "gecobench-zero-shot-reference-attributions"
BUNDLE_FORMAT_VERSION = 1
BUNDLE_SUFFIX = ".json.gz"
#: the folder of a reference dataset (local or on the Hub) that holds the bundles
BUNDLE_FOLDER = "zero_shot_attributions"
#: how a record names a reference computed by this run or read from its own checkpoints
COMPUTED = "computed"
_REQUIRED = ("format", "format_version", "unit", "reference", "dataset", "attribution_protocol", "explainers")


def published_source(bundle_sha256: str) -> str:
    """How a record names a reference read from a published bundle."""
    return f"published:{bundle_sha256[:16]}"


@dataclass
class ReferenceBundle:
    """One parsed bundle: its file, its SHA-256 and the validated header; chunks are checked when served."""

    path: Path
    sha256: str
    unit: str
    document: dict[str, Any]

    @property
    def source(self) -> str:
        return published_source(self.sha256)

    def explainer_keys(self) -> list[str]:
        return sorted(self.document["explainers"])

    def zero_shot_checkpoint(self, explainer_key: str) -> str | None:
        """The zero-shot checkpoint (SHA-256) an explainer's entry was computed on: the bundle's own, or, for an
        entry merged in from another bundle (:func:`merge_bundles`), the one its ``explainer_provenance`` names.
        None when the bundle has no such explainer."""
        if explainer_key not in self.document["explainers"]:
            return None
        merged = (self.document.get("explainer_provenance") or {}).get(explainer_key) or {}
        return merged.get("zero_shot_checkpoint_sha256") or self.document["reference"].get("checkpoint_sha256")

    def chunk_scores(self, explainer_key: str, chunk_id: int, rows: Sequence[int],
                     words: Sequence[Sequence[str]], truncated: bool = False) -> list[list[float]] | None:
        """The reference scores of ``rows`` (with ``words``) in chunk ``chunk_id``, or None when the bundle has no
        such explainer or chunk. ``truncated``: the run covers only the first groups of the bundle's split, so its
        last chunk may hold the first rows of the bundle's chunk only; that chunk is not served (its attributions
        were computed in other batches) but computed. Raises ValueError when the chunk is there but does not fit
        the rows."""
        chunks = self.document["explainers"].get(explainer_key)
        if chunks is None:
            return None
        chunk = chunks.get(str(chunk_id))
        if chunk is None:
            return None
        where = f"published reference {self.path} ({explainer_key}, chunk {chunk_id})"
        if (truncated and isinstance(chunk, dict) and isinstance(chunk.get("rows"), list)
                and len(rows) < len(chunk["rows"]) and chunk["rows"][:len(rows)] == list(rows)):
            return None
        if not isinstance(chunk, dict) or chunk.get("rows") != list(rows):
            raise ValueError(f"{where}: written for rows {chunk.get('rows') if isinstance(chunk, dict) else '?'}, "
                             f"the run's chunk has rows {list(rows)}; the bundle does not match the data")
        scores = chunk.get("scores")
        if not isinstance(scores, list) or len(scores) != len(rows):
            raise ValueError(f"{where}: {len(scores) if isinstance(scores, list) else 'no'} score lists for "
                             f"{len(rows)} rows")
        for row, row_words, row_scores in zip(rows, words, scores):
            if not isinstance(row_scores, list) or len(row_scores) != len(row_words):
                raise ValueError(f"{where}: row {row} has {len(row_words)} words but "
                                 f"{len(row_scores) if isinstance(row_scores, list) else 'no'} scores")
            if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s)
                       for s in row_scores):
                raise ValueError(f"{where}: row {row} has a score that is not a finite number")
        return [[float(s) for s in row_scores] for row_scores in scores]


def read_bundle(path: str | os.PathLike[str]) -> ReferenceBundle:
    """Parse and validate one bundle's header (its chunks are validated when served)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        document = json.loads(gzip.decompress(raw).decode("utf-8"))
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"published reference {path}: not a readable gzipped JSON file ({err})") from None
    # a malformed file is bad input (ValueError), not a caller passing the wrong type (TypeError)
    if not isinstance(document, dict):
        raise ValueError(  # noqa: TRY004
            f"published reference {path}: expected a JSON object, got {type(document).__name__}")
    missing = [name for name in _REQUIRED if name not in document]
    if missing:
        raise ValueError(f"published reference {path}: missing field(s) {', '.join(missing)}")
    if document["format"] != BUNDLE_FORMAT or document["format_version"] != BUNDLE_FORMAT_VERSION:
        raise ValueError(f"published reference {path}: format {document['format']!r} version "
                         f"{document['format_version']!r}; this package reads {BUNDLE_FORMAT!r} version "
                         f"{BUNDLE_FORMAT_VERSION}")
    reference, dataset = document["reference"], document["dataset"]
    if not (isinstance(reference, dict) and isinstance(reference.get("function_sha256"), str)
            and isinstance(dataset, dict) and isinstance(dataset.get("fingerprint"), str)
            and isinstance(document["attribution_protocol"], dict)):
        raise ValueError(  # noqa: TRY004
            f"published reference {path}: reference.function_sha256, dataset.fingerprint and attribution_protocol "
            "must be given")
    unit = reference_unit_name(reference["function_sha256"], dataset["fingerprint"], document["attribution_protocol"])
    if document["unit"] != unit:
        raise ValueError(f"published reference {path}: unit {document['unit']!r} does not follow from its "
                         f"checkpoint, data and protocol ({unit!r})")
    explainers = document["explainers"]
    if not isinstance(explainers, dict) or not all(
            isinstance(chunks, dict) and all(re.fullmatch(r"\d+", c) for c in chunks)
            for chunks in explainers.values()):
        raise ValueError(f"published reference {path}: explainers must map explainer keys to "
                         "{chunk id: {rows, scores}}")
    return ReferenceBundle(path, hashlib.sha256(raw).hexdigest(), unit, document)


class PublishedReferences:
    """The bundles found at a location, by unit (two bundles of one unit are an error: which would count?)."""

    def __init__(self, bundles: Sequence[ReferenceBundle] = ()) -> None:
        self.by_unit: dict[str, ReferenceBundle] = {}
        for bundle in bundles:
            other = self.by_unit.get(bundle.unit)
            if other is not None and other.sha256 != bundle.sha256:
                raise ValueError(f"published references {other.path} and {bundle.path} hold the same unit "
                                 f"{bundle.unit} with different contents; keep one")
            self.by_unit[bundle.unit] = bundle

    def __len__(self) -> int:
        return len(self.by_unit)

    def get(self, unit: str) -> ReferenceBundle | None:
        return self.by_unit.get(unit)

    def covering(self, unit: str, whole_split_unit: str) -> tuple[ReferenceBundle | None, bool]:
        """The bundle of a run's reference unit, else the bundle of the same reference over the whole split (a run
        with ``max_groups`` shares its first chunks: same rows, same seeds); and whether it is the latter."""
        bundle = self.by_unit.get(unit)
        if bundle is not None or whole_split_unit == unit:
            return bundle, False
        bundle = self.by_unit.get(whole_split_unit)
        return bundle, bundle is not None


def dataset_bundles(dataset_folder: str | os.PathLike[str]) -> list[Path]:
    """The bundle files of a reference dataset folder (or a reference run's ``--output``): its
    ``zero_shot_attributions/*.json.gz``, sorted; none when it has no such folder."""
    return sorted((Path(dataset_folder) / BUNDLE_FOLDER).glob(f"*{BUNDLE_SUFFIX}"))


def _bundle_files(folder: Path) -> list[Path]:
    """A dataset folder's bundles, or those of a folder of bundles itself."""
    return dataset_bundles(folder) if (folder / BUNDLE_FOLDER).is_dir() else sorted(folder.glob(f"*{BUNDLE_SUFFIX}"))


def load_published_references(location: str | os.PathLike[str] | None) -> PublishedReferences:
    """The bundles at ``location``: a bundle file, a folder of bundles, a reference dataset folder (its
    ``zero_shot_attributions/``), or a Hub dataset repository id (``ORG/gecobench-reference``, downloaded with
    ``huggingface_hub``). None gives no bundles."""
    if location is None:
        return PublishedReferences()
    path = Path(location)
    if path.is_file():
        return PublishedReferences([read_bundle(path)])
    if path.is_dir():
        files = _bundle_files(path)
        if not files:
            raise ValueError(f"no published reference bundles (*{BUNDLE_SUFFIX}) in {path} or {path / BUNDLE_FOLDER}")
        return PublishedReferences([read_bundle(f) for f in files])
    if re.fullmatch(r"[\w.-]+/[\w.-]+", str(location)) and not str(location).startswith("."):
        from huggingface_hub import snapshot_download

        try:
            folder = Path(snapshot_download(str(location), repo_type="dataset",
                                            allow_patterns=[f"{BUNDLE_FOLDER}/*{BUNDLE_SUFFIX}"]))
        except Exception as err:  # noqa: BLE001 - the Hub's errors are many; the user needs the location
            raise ValueError(f"published references: cannot download dataset {location!r} from the Hub "
                             f"({type(err).__name__}: {err}); give a local folder instead") from None
        return load_published_references(folder)
    raise FileNotFoundError(f"published references: {location!r} is neither a file, a folder nor a Hub dataset id")


def export_bundle(checkpoints: CheckpointStore, output_dir: str | os.PathLike[str], *, reference: dict[str, Any],
                  dataset: dict[str, Any], attribution_protocol: dict[str, Any], chunk_rows: Sequence[Sequence[int]],
                  explainer_keys: Sequence[str], provenance: dict[str, Any]) -> Path:
    """Write the bundle of one zero-shot reference unit from a run's checkpoints.

    ``reference`` names the zero-shot checkpoint (``name``, ``function_sha256``, ``checkpoint_sha256``,
    ``base_model``, ``seed``),
    ``dataset`` the split (``config``, ``split``, ``fingerprint``); ``chunk_rows`` are the scorable rows of each
    chunk, in chunk order. Every (explainer, chunk) must be checkpointed: a partial bundle would leave a user's run
    half computed, so a missing chunk is an error listing what is missing. Deterministic bytes (sorted keys, no
    gzip timestamp), so re-exporting the same checkpoints gives the same file and SHA-256.
    """
    unit = reference_unit_name(reference["function_sha256"], dataset["fingerprint"], attribution_protocol)
    explainers: dict[str, dict[str, Any]] = {}
    missing = []
    for key in explainer_keys:
        chunks = {}
        for chunk_id, rows in enumerate(chunk_rows):
            if not rows:
                continue
            payload = checkpoints.load(unit, key, chunk_id, list(rows))
            if payload is None:
                missing.append(f"{key} chunk {chunk_id}")
                continue
            chunks[str(chunk_id)] = {"rows": list(rows), "scores": payload["scores"]["reference"]}
        explainers[key] = chunks
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ValueError(f"zero-shot reference unit {unit} in {checkpoints.root} is incomplete: {shown} not "
                         "checkpointed; evaluate the zero-shot model with these settings first")
    document = {"format": BUNDLE_FORMAT, "format_version": BUNDLE_FORMAT_VERSION, "unit": unit,
                "reference": reference, "dataset": dataset, "attribution_protocol": attribution_protocol,
                "provenance": provenance, "explainers": explainers}
    return write_bundle(document, output_dir)


def bundle_file_name(document: dict[str, Any]) -> str:
    """``<config>-<split>-seed<seed>-<unit>.json.gz``: one name per unit, so a bundle extended with more
    explainers replaces the one it extends."""
    dataset = document["dataset"]
    return (f"{dataset['config']}-{dataset['split']}-seed{document['attribution_protocol'].get('seed')}-"
            f"{document['unit']}{BUNDLE_SUFFIX}")


def write_bundle(document: dict[str, Any], output_dir: str | os.PathLike[str]) -> Path:
    """Deterministic bytes (sorted keys, no gzip timestamp), written atomically, read back before returning."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / bundle_file_name(document)
    data = gzip.compress(json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8"),
                         compresslevel=9, mtime=0)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    read_bundle(path)  # what was written must read back
    return path


#: what two bundles must agree on to be one unit's attributions (the unit name is derived from all but the name)
_SAME_UNIT_FIELDS = ("unit", "dataset", "attribution_protocol")


def merge_bundles(paths: Sequence[str | os.PathLike[str]], output_dir: str | os.PathLike[str]) -> Path:
    """One bundle holding every explainer of ``paths``: bundles of the same unit (same zero-shot function, split
    and attribution protocol) written for different explainers, e.g. a published bundle and the explainers added
    to the reference run since.

    An explainer found in two bundles must have the same chunks (the same checkpoint key names the same
    computation; differing scores mean one of them is wrong, and which one is not for this function to guess).
    Each explainer's provenance is kept (``explainer_provenance``: the provenance of the bundle it came from and
    the zero-shot checkpoint it was computed on, whose bits may differ from the first bundle's in its derived
    tensors only: :data:`gecobench.provenance.DERIVED_TENSORS`); ``provenance`` and ``reference`` stay the first
    bundle's. Written under the unit's file name in ``output_dir``, replacing a bundle there of the
    same unit (which may be one of ``paths``: it is read before anything is written)."""
    if not paths:
        raise ValueError("merge_bundles: no bundles given")
    bundles = [read_bundle(p) for p in paths]
    first = bundles[0].document
    explainers: dict[str, Any] = {}
    explainer_provenance: dict[str, Any] = {}
    for bundle in bundles:
        document = bundle.document
        differ = [name for name in _SAME_UNIT_FIELDS if document[name] != first[name]]
        if document["reference"].get("function_sha256") != first["reference"].get("function_sha256"):
            differ.append("reference.function_sha256")
        if differ:
            raise ValueError(f"published references {bundles[0].path} and {bundle.path} are not one unit's "
                             f"attributions: they differ in {', '.join(differ)}")
        already = document.get("explainer_provenance") or {}
        for key, chunks in document["explainers"].items():
            if key in explainers and explainers[key] != chunks:
                raise ValueError(f"published references disagree on {key}: {bundle.path} holds other scores than "
                                 "an earlier bundle for the same checkpoint key; keep one")
            explainers[key] = chunks
            explainer_provenance.setdefault(key, already.get(key) or {
                **(document.get("provenance") or {}),
                "zero_shot_checkpoint_sha256": document["reference"].get("checkpoint_sha256")})
    merged = {**first, "explainers": explainers, "explainer_provenance": explainer_provenance}
    return write_bundle(merged, output_dir)

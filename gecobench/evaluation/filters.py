"""The correctness filters: which test sentences a record is scored on.

Three named filters (``protocol.filter`` of a record):

* ``paper`` (default) — the paper's filter: one *shared* subset per GECO config, the source sentences whose gender
  variants are all classified correctly by **every** model that defines it (every trained regime and every seed of
  the run, or of the reference). Every record of the config is then scored on the same sentences, which is what the
  paper's Figure 2 caption means by model performance "held constant for all models". The authors' code
  (braindatalab/gecobench ``evaluation/main.py``, ``merge_xai_results_with_prediction_data``) groups the
  predictions of every model in the training records by (dataset, sentence index) and keeps a sentence only when
  every prediction in the group is correct.
* ``per_model`` — a source sentence is kept for a model when *that* model classifies every variant correctly, so
  each model is scored on its own sentences (this package's filter before 1.0; the older records call it
  ``all_gender_variants_correct``).
* ``none`` — every scorable sentence.

The shared subset is a :class:`FilterSubset`: the config, the kept source-sentence ids, the models that defined it
(by checkpoint fingerprint) and a fingerprint (SHA-256 of the config and the sorted ids). It is computed from a
run's predictions, or loaded from a JSON file so that a later run (a submission, another seed, the queue) is
scored on exactly the reference's sentences (:func:`load_filter_subsets`).

**Zero-shot models do not define the subset** (a departure from the authors' latest code, which counts every model
of its training records, the zero-shot one included). This package's zero-shot model is a cosine-similarity
classifier built offline from MiniLM (no masked-LM head), with 62–89 % test accuracy on three of the four configs
(``reference/zoo_summary.json``): counted, it alone would remove up to 38 % of the sentences, and the subset would
measure the weakness of an offline substitute rather than the trained models the paper explains. The zero-shot
model's own records are still scored on the shared subset; a run of zero-shot models only falls back to them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PAPER, PER_MODEL, NONE = "paper", "per_model", "none"
FILTER_NAMES = (PAPER, PER_MODEL, NONE)
DEFAULT_FILTER = PAPER
#: ``protocol.filter`` of records written before the filters had names: the per-model filter
LEGACY_PER_MODEL = "all_gender_variants_correct"
#: the regime that never defines the shared subset (see the module docstring)
ZERO_SHOT_REGIME = "ZS"
SUBSET_FORMAT = "gecobench-filter-subset/1"
#: where a reference run writes its subsets, beside its store: ``<reference>/filters/<config>.json``
SUBSET_FOLDER = "filters"


class FilterSubsetError(ValueError):
    """A subset file that cannot be used for this run: another config or data, a bad fingerprint, bad JSON."""


def filter_name(value: str | bool) -> str:
    """A filter's name from what callers pass: a name, the legacy protocol label, or the old boolean API
    (``True`` — "the paper's filter" — is ``paper``; ``False`` is ``none``)."""
    if isinstance(value, bool):
        return PAPER if value else NONE
    if value == LEGACY_PER_MODEL:
        return PER_MODEL
    if value not in FILTER_NAMES:
        raise ValueError(f"unknown correctness filter {value!r}; choose from {list(FILTER_NAMES)}")
    return str(value)


def record_filter(protocol: Mapping[str, Any] | None) -> str | None:
    """The filter a record's protocol names, as a current name (``all_gender_variants_correct`` → ``per_model``);
    None when the protocol names none (older or synthetic records)."""
    value = (protocol or {}).get("filter")
    if not value:
        return None
    return PER_MODEL if value == LEGACY_PER_MODEL else str(value)


def is_filtered(protocol: Mapping[str, Any] | None) -> bool:
    """Whether a record's sentences passed a correctness filter (any filter but ``none``)."""
    return record_filter(protocol) not in (None, NONE)


def subset_fingerprint(config: str, source_sentence_ids: Iterable[int]) -> str:
    """SHA-256 of the config and the sorted source-sentence ids: equal exactly when the sentence sets are."""
    payload = json.dumps({"config": config, "source_sentence_ids": sorted(int(i) for i in source_sentence_ids)},
                         sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FilterSubset:
    """One config's shared sentence subset (the ``paper`` filter) and where it came from."""

    config: str
    split: str
    #: the split's data fingerprint (:attr:`gecobench.evaluation.data.GecoSplit.fingerprint`): ids mean nothing on
    #: other data
    dataset_fingerprint: str
    source_sentence_ids: tuple[int, ...]
    #: the models whose predictions defined it: name, regime, seed, checkpoint_sha256
    defined_by: tuple[dict[str, Any], ...] = ()
    #: source sentences the models were asked about (the run's sentence groups, scorable ones)
    n_considered: int = 0
    zero_shot_counted: bool = False
    provenance: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the committed prediction files it was computed from (``path``, ``sha256``), when it was computed from files
    #: (the reference's :func:`gecobench.reference.write_filter_subsets`); empty when computed from loaded models
    prediction_files: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "source_sentence_ids", tuple(sorted(int(i) for i in self.source_sentence_ids)))
        object.__setattr__(self, "defined_by", tuple(dict(m) for m in self.defined_by))
        object.__setattr__(self, "prediction_files", tuple(dict(m) for m in self.prediction_files))

    @property
    def fingerprint(self) -> str:
        return subset_fingerprint(self.config, self.source_sentence_ids)

    @property
    def size(self) -> int:
        return len(self.source_sentence_ids)

    @property
    def defining_checkpoints(self) -> list[str]:
        return sorted(str(m.get("checkpoint_sha256")) for m in self.defined_by)

    def to_json(self) -> dict[str, Any]:
        return {"format": SUBSET_FORMAT, "filter": PAPER, "config": self.config, "split": self.split,
                "dataset_fingerprint": self.dataset_fingerprint, "fingerprint": self.fingerprint,
                "n_source_sentences": self.size, "n_considered": self.n_considered,
                "zero_shot_counted": self.zero_shot_counted, "defined_by": list(self.defined_by),
                "source_sentence_ids": list(self.source_sentence_ids), "provenance": self.provenance,
                **({"prediction_files": list(self.prediction_files)} if self.prediction_files else {})}

    @classmethod
    def from_json(cls, document: Any, where: str = "subset") -> FilterSubset:
        """Validate and build; :class:`FilterSubsetError` names what is wrong."""
        if not isinstance(document, dict) or document.get("format") != SUBSET_FORMAT:
            raise FilterSubsetError(f"{where}: not a filter subset (expected format {SUBSET_FORMAT!r})")
        missing = [k for k in ("config", "split", "dataset_fingerprint", "fingerprint", "source_sentence_ids")
                   if k not in document]
        if missing:
            raise FilterSubsetError(f"{where}: missing field(s) {missing}")
        ids = document["source_sentence_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise FilterSubsetError(f"{where}: source_sentence_ids must be a list of integers")
        if len(set(ids)) != len(ids):
            raise FilterSubsetError(f"{where}: source_sentence_ids repeat an id")
        subset = cls(config=str(document["config"]), split=str(document["split"]),
                     dataset_fingerprint=str(document["dataset_fingerprint"]), source_sentence_ids=tuple(ids),
                     defined_by=tuple(document.get("defined_by") or ()),
                     n_considered=int(document.get("n_considered") or 0),
                     zero_shot_counted=bool(document.get("zero_shot_counted", False)),
                     provenance=dict(document.get("provenance") or {}),
                     prediction_files=tuple(document.get("prediction_files") or ()))
        bad = [f for f in subset.prediction_files if not (isinstance(f.get("path"), str)
                                                          and isinstance(f.get("sha256"), str))]
        if bad:
            raise FilterSubsetError(f"{where}: prediction_files entries need a path and a sha256: {bad[:2]}")
        if document["fingerprint"] != subset.fingerprint:
            raise FilterSubsetError(f"{where}: fingerprint {document['fingerprint']!r} is not the hash of its config "
                                    f"and ids ({subset.fingerprint}); the file was edited or is corrupt")
        if "n_source_sentences" in document and document["n_source_sentences"] != subset.size:
            raise FilterSubsetError(f"{where}: n_source_sentences {document['n_source_sentences']} but "
                                    f"{subset.size} ids")
        return subset

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write as JSON (atomically: a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        partial.replace(path)
        return path

    def check_for(self, split: Any) -> None:
        """Refuse to score ``split`` (a :class:`~gecobench.evaluation.data.GecoSplit`) with this subset unless it is
        this subset's config, split and data, and holds every id."""
        if split.config != self.config:
            raise FilterSubsetError(f"filter subset of config {self.config!r} given for a run on {split.config!r}")
        if split.split != self.split or split.fingerprint != self.dataset_fingerprint:
            raise FilterSubsetError(
                f"filter subset of {self.config} was made on split {self.split!r} with data fingerprint "
                f"{self.dataset_fingerprint[:16]}…, the run's is {split.split!r} {split.fingerprint[:16]}…")
        present = {split.rows[group[0]].sentence_id for group in split.groups}
        unknown = sorted(set(self.source_sentence_ids) - present)
        if unknown:
            raise FilterSubsetError(f"filter subset of {self.config} names source sentence(s) not in the split: "
                                    f"{unknown[:5]}")


def subset_file(root: str | os.PathLike[str], config: str) -> Path:
    """``<root>/filters/<config>.json``: where a reference (or any run folder) keeps a config's subset."""
    return Path(root) / SUBSET_FOLDER / f"{config}.json"


def load_subset(path: str | os.PathLike[str], config: str | None = None) -> FilterSubset:
    """One subset file, validated; with ``config``, refused unless it is that config's."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise FilterSubsetError(f"{path}: cannot read a filter subset ({err})") from None
    subset = FilterSubset.from_json(document, str(path))
    if config is not None and subset.config != config:
        raise FilterSubsetError(f"{path}: a filter subset of config {subset.config!r}, not {config!r}")
    return subset


def load_filter_subsets(location: str | os.PathLike[str] | FilterSubset | Mapping[str, FilterSubset]
                        | Sequence[FilterSubset] | None) -> dict[str, FilterSubset]:
    """Subsets by config from a subset file, a folder of ``<config>.json`` files, a folder holding ``filters/``
    (a reference folder), a :class:`FilterSubset`, a mapping or a list of them; ``{}`` for None."""
    if location is None:
        return {}
    if isinstance(location, FilterSubset):
        return {location.config: location}
    if isinstance(location, Mapping):
        subsets = dict(location)
        wrong = [k for k, s in subsets.items() if s.config != k]
        if wrong:
            raise FilterSubsetError(f"filter subsets keyed by the wrong config: {wrong}")
        return subsets
    if isinstance(location, Sequence) and not isinstance(location, (str, bytes)):
        return {s.config: s for s in location}
    path = Path(location)
    if path.is_file():
        subset = load_subset(path)
        return {subset.config: subset}
    if path.is_dir():
        folder = path / SUBSET_FOLDER if (path / SUBSET_FOLDER).is_dir() else path
        subsets = {}
        for file in sorted(folder.glob("*.json")):
            subset = load_subset(file)
            if subset.config != file.stem:
                raise FilterSubsetError(f"{file}: holds the subset of config {subset.config!r}, not {file.stem!r}")
            subsets[subset.config] = subset
        return subsets
    raise FilterSubsetError(f"filter subset {path}: no such file or folder")


def group_correct(split: Any, group: Sequence[int], predictions: Mapping[int, int]) -> bool:
    """Whether every variant (row) of a sentence group is classified correctly."""
    return all(int(predictions[i]) == split.rows[i].label for i in group)


def defining_model(lm: Any) -> dict[str, Any]:
    """How a subset names a model that defined it (a :class:`~gecobench.evaluation.modelling.LoadedModel`)."""
    return {"name": lm.name, "regime": lm.regime, "seed": lm.info.get("seed"),
            "checkpoint_sha256": lm.checkpoint_sha256}


def shared_subset(split: Any, groups: Sequence[Sequence[int]], predictions: Mapping[str, Mapping[int, int]],
                  models: Mapping[str, dict[str, Any]], include_zero_shot: bool = False) -> FilterSubset:
    """The paper's subset of ``split`` over ``groups`` (scorable ones): the source sentences every defining model
    classifies correctly in every variant.

    ``predictions`` and ``models`` are keyed alike (one entry per model: row → predicted class, and its
    :func:`defining_model` facts). Zero-shot models define it only with ``include_zero_shot`` or when they are the
    only models (see the module docstring)."""
    from gecobench.evaluation.data import scorable

    if not predictions:
        raise ValueError(f"{split.config}: the paper's filter needs the predictions of at least one model")
    trained = [k for k in predictions if models[k].get("regime") != ZERO_SHOT_REGIME]
    defining = list(predictions) if include_zero_shot or not trained else trained
    zero_shot_counted = any(models[k].get("regime") == ZERO_SHOT_REGIME for k in defining)
    candidates = [g for g in groups if g and all(scorable(split.rows[i]) for i in g)]
    kept = [split.rows[g[0]].sentence_id for g in candidates
            if all(group_correct(split, g, predictions[k]) for k in defining)]
    from gecobench.provenance import base_provenance

    return FilterSubset(config=split.config, split=split.split, dataset_fingerprint=split.fingerprint,
                        source_sentence_ids=tuple(kept),
                        defined_by=tuple(sorted((models[k] for k in defining),
                                                key=lambda m: (str(m.get("regime")), str(m.get("seed")),
                                                               str(m.get("checkpoint_sha256"))))),
                        n_considered=len(candidates), zero_shot_counted=zero_shot_counted,
                        provenance=base_provenance(None))


def rows_in_subset(split: Any, chunk: Sequence[Sequence[int]], subset: FilterSubset) -> list[int]:
    """The rows of a chunk's groups (scorable ones) whose source sentence is in ``subset``, in order."""
    from gecobench.evaluation.data import scorable

    wanted = set(subset.source_sentence_ids)
    return [i for g in chunk if g and all(scorable(split.rows[j]) for j in g)
            and split.rows[g[0]].sentence_id in wanted for i in g]


def record_filter_block(name: str, kept_rows: Sequence[int], split: Any, subset: FilterSubset | None,
                        model_facts: dict[str, Any] | None, subset_source: str | None) -> dict[str, Any]:
    """A record's ``filter`` block: the filter's name, the sentence set it scored (size and fingerprint) and, for
    the shared subset, the subset's own size and fingerprint and the models that defined it."""
    sources = sorted({split.rows[i].sentence_id for i in kept_rows})
    block: dict[str, Any] = {"name": name, "n_source_sentences": len(sources), "n_sentences": len(kept_rows),
                             "scored_fingerprint": subset_fingerprint(split.config, sources)}
    if name == PAPER and subset is not None:
        block.update(subset_fingerprint=subset.fingerprint, subset_n_source_sentences=subset.size,
                     defined_by=sorted(subset.defining_checkpoints), zero_shot_counted=subset.zero_shot_counted,
                     subset_source=subset_source or "computed")
    elif name == PER_MODEL and model_facts is not None:
        block["defined_by"] = [str(model_facts.get("checkpoint_sha256"))]
    return block


def reference_subsets_for_models(model_paths: Iterable[str | os.PathLike[str]],
                                 reference_dir: str | os.PathLike[str] | None = None) -> dict[str, FilterSubset]:
    """The committed reference's subsets (``<reference>/filters/<config>.json``) of the configs where one of
    ``model_paths`` is among the defining models (by checkpoint fingerprint): a run on the reference's models is
    then scored on exactly the reference's sentences. ``{}`` when the reference has no subsets or none matches."""
    if reference_dir is None:
        from gecobench.reference import REFERENCE_DIR as reference_dir
    folder = Path(reference_dir) / SUBSET_FOLDER
    if not folder.is_dir():
        return {}
    subsets = load_filter_subsets(folder)
    if not subsets:
        return {}
    from gecobench.provenance import checkpoint_fingerprints

    fingerprints = {checkpoint_fingerprints(path)[0] for path in model_paths if Path(path).is_dir()}
    return {config: subset for config, subset in subsets.items()
            if fingerprints & set(subset.defining_checkpoints)}

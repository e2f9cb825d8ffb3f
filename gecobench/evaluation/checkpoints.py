"""Per-chunk checkpoints: the attributions of one explainer on one chunk of sentence groups.

A run is split into fixed chunks of sentence groups (independent of the number of processes). After a chunk
is explained its word scores are written to ``<root>/<unit>/<explainer>/chunk-<id>.json`` atomically (temporary
file, fsync, ``os.replace``), so a run killed at any moment — even with SIGKILL — leaves only complete
checkpoints behind, and the next run picks them up instead of recomputing. JSON keeps floats exact (Python
writes the shortest repr that reads back to the same double), so resumed and uninterrupted runs agree bit for bit.

An explainer's folder is :func:`checkpoint_key`: its spec, its version and (a non-built-in's) source fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from gecobench.evaluation.origin import source_fingerprint
from gecobench.evaluation.settings import ExplainerSpec
from gecobench.explainers.base import Explainer, get_explainer

CHECKPOINT_FORMAT = 2
#: units of a zero-shot model's attributions as the RMA reference of the others (shared by every model of a base)
REFERENCE_UNIT_PREFIX = "reference-"


def checkpoint_key(spec: ExplainerSpec, explainer: Explainer) -> str:
    """The folder of an explainer's chunk checkpoints (and its entry in a published reference bundle): its spec
    key and its version, so that after an upgrade that changes an explainer's scores its old checkpoints are never
    resumed as the new version's.

    A non-built-in explainer's key also holds the fingerprint of its source, version and parameters
    (:func:`gecobench.evaluation.origin.source_fingerprint`): its author edits the code without bumping the
    version, and the edited code must not be served the old code's scores. Built-ins keep the version key (their
    version is bumped in review whenever their scores change, and published bundles are keyed by it; see
    :mod:`gecobench.evaluation.origin`)."""
    version = str(explainer.version)
    if not re.fullmatch(r"[A-Za-z0-9._+-]{1,40}", version) or version.startswith("."):  # it becomes a path part
        version = "h" + hashlib.sha256(version.encode()).hexdigest()[:12]
    fingerprint = source_fingerprint(explainer)
    return f"{spec.key()}-v{version}" + (f"-src{fingerprint[:16]}" if fingerprint else "")


def spec_checkpoint_key(spec: ExplainerSpec | str) -> str:
    """:func:`checkpoint_key` of the registered explainer a spec names (an instance is made to read its version)."""
    spec = ExplainerSpec.parse(spec) if isinstance(spec, str) else spec
    return checkpoint_key(spec, get_explainer(spec.name, **spec.params))


def reference_unit_name(function_sha256: str | None, split_fingerprint: str,
                        attribution_protocol: dict[str, Any]) -> str:
    """The checkpoint unit of a zero-shot model's attributions as the RMA reference: keyed by what they depend on
    (what the checkpoint computes, :func:`gecobench.provenance.function_fingerprint`; the data; the attribution
    protocol), so every model of a base and every run that shares these shares them."""
    key = json.dumps([function_sha256, split_fingerprint, attribution_protocol], sort_keys=True)
    return REFERENCE_UNIT_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:16]


class CheckpointStore:
    """Reads and writes chunk checkpoints under ``root``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def chunk_files(self, reference: bool = False) -> list[Path]:
        """The chunk files of the models' own units, or (``reference=True``) of the zero-shot reference units."""
        return sorted(path for path in self.root.glob("*/*/chunk-*.json")
                      if path.parent.parent.name.startswith(REFERENCE_UNIT_PREFIX) == reference)

    def reference_units(self) -> list[Path]:
        """The folders of the zero-shot reference units."""
        return sorted(self.root.glob(f"{REFERENCE_UNIT_PREFIX}*"))

    def path(self, unit: str, explainer_key: str, chunk_id: int) -> Path:
        return self.root / unit / explainer_key / f"chunk-{chunk_id:05d}.json"

    def load(self, unit: str, explainer_key: str, chunk_id: int, row_indices: list[int]) -> dict[str, Any] | None:
        """The checkpoint of a chunk, or None when absent. A checkpoint for other rows is an error, not a hit."""
        path = self.path(unit, explainer_key, chunk_id)
        if not path.is_file():
            return None
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise ValueError(f"checkpoint {path} is unreadable ({err}); delete it to recompute the chunk") from None
        if payload.get("format") != CHECKPOINT_FORMAT or payload.get("rows") != row_indices:
            raise ValueError(
                f"checkpoint {path} was written for other rows or another format; delete the folder "
                f"{path.parent} to recompute"
            )
        return payload

    def save(self, unit: str, explainer_key: str, chunk_id: int, row_indices: list[int], scores: dict[str, Any],
             seconds: Any, extra: dict[str, Any] | None = None) -> Path:
        """Write a chunk's scores atomically (``scores``: kind -> list of per-row word-score lists or None;
        ``seconds``: the time it took, kept so a resumed run reports the runtime of the original work; ``extra``:
        further top-level facts, e.g. where the chunk's reference scores came from)."""
        path = self.path(unit, explainer_key, chunk_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {**(extra or {}), "format": CHECKPOINT_FORMAT, "rows": row_indices, "scores": scores,
                   "seconds": seconds}
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
            # A run killed while writing this chunk left its temporary file behind; the chunk is now complete.
            # (Each chunk belongs to one process, so no other writer's file can match.)
            for stale in path.parent.glob(f".{path.name}.*.tmp"):
                stale.unlink(missing_ok=True)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

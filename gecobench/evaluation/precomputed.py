"""Attributions computed elsewhere — in a submission's sandbox, or self-reported in a file — scored by the
same evaluation path as built-in explainers.

A :class:`PrecomputedExplainer` holds, for one model and one GECO config, word scores per *kind* (the
kinds the runner uses: ``main``, ``reference``, ``randomised``, ``noisy``, ``other_target``), keyed by the
row's ``(sentence_id, label)``. The runner asks it for a chunk's rows instead of calling ``explain``; a kind
it does not hold is ``None``, so the metrics that need it are recorded as not computed (with the reason).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gecobench.explainers.base import Explainer

RowKey = tuple[int, int]
KINDS = ("main", "reference", "randomised", "noisy", "other_target")


class MissingAttributionError(ValueError):
    """Precomputed attributions do not cover a row the evaluation needs."""


class PrecomputedExplainer(Explainer):
    """Serves precomputed word scores to the evaluation runner (see the module docstring)."""

    name = "precomputed"

    def __init__(
        self,
        name: str,
        version: str,
        scores: Mapping[str, Mapping[RowKey, Sequence[float]]],
        source: str = "submission",
        submission_id: str | None = None,
        model_independent: bool = False,
        params: dict[str, Any] | None = None,
        missing_reason: str = "not computed",
        seconds_per_row: float | None = None,
    ) -> None:
        super().__init__(**(params or {}))
        unknown = set(scores) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown score kind(s) {sorted(unknown)}; expected some of {KINDS}")
        if "main" not in scores:
            raise ValueError("precomputed attributions need the 'main' kind (the model's own scores)")
        self.name = name  # type: ignore[misc]  # per instance: one registry entry per submission
        self.version = version
        self.source = source
        self.submission_id = submission_id
        self.model_independent = model_independent  # type: ignore[misc]
        self.missing_reason = missing_reason
        self.seconds_per_row = seconds_per_row
        self._scores = {kind: dict(by_row) for kind, by_row in scores.items()}

    def kinds(self) -> list[str]:
        return sorted(self._scores)

    def chunk_scores(self, rows: Sequence[Any], wanted: Sequence[str]) -> dict[str, list[list[float]] | None]:
        """Scores of each wanted kind for ``rows`` (objects with ``sentence_id``, ``label`` and ``words``)."""
        out: dict[str, list[list[float]] | None] = {}
        for kind in wanted:
            table = self._scores.get(kind)
            if table is None:
                out[kind] = None
                continue
            values = []
            for row in rows:
                key = (int(row.sentence_id), int(row.label))
                if key not in table:
                    raise MissingAttributionError(
                        f"{self.name}: no {kind} attributions for sentence_id {key[0]} label {key[1]}"
                    )
                scores = np.asarray(table[key], dtype=np.float64)
                if scores.shape != (len(row.words),):
                    raise MissingAttributionError(
                        f"{self.name}: {kind} attributions for sentence_id {key[0]} label {key[1]} have "
                        f"{scores.shape[0] if scores.ndim else 0} values for {len(row.words)} words"
                    )
                if not np.all(np.isfinite(scores)):
                    raise MissingAttributionError(
                        f"{self.name}: {kind} attributions for sentence_id {key[0]} label {key[1]} are not finite"
                    )
                values.append(scores.tolist())
            out[kind] = values
        return out

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list:
        raise TypeError(f"{self.name} holds precomputed attributions; the runner reads them with chunk_scores()")

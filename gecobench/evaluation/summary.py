"""What a run reports back: the records it wrote or found, its warnings and the explainers that failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gecobench.evaluation.filters import FilterSubset

__all__ = ["EXPLAIN", "FIT", "ExplainerFailure", "RunSummary"]

#: the stages an explainer can fail in (:attr:`ExplainerFailure.stage`)
EXPLAIN, FIT = "explain", "fit"


@dataclass
class ExplainerFailure:
    """An explainer that raised: where (model, config, chunk, the sentence it failed on when one could be singled
    out, else the chunk's sentences) and what (the exception's type and message).

    ``stage`` says whether it raised explaining a chunk (``explain``) or learning from data before any chunk
    (``fit``, :meth:`gecobench.explainers.base.Explainer.fit`: no chunk and no sentence then)."""

    explainer: str
    model: str
    config: str
    chunk: int | None
    sentence_ids: list[Any]
    error_type: str
    message: str
    #: whether ``sentence_ids`` is the one sentence the explainer fails on alone (else: the chunk's sentences)
    sentence_found: bool = False
    stage: str = EXPLAIN

    def describe(self) -> str:
        if self.stage == FIT:
            return (f"explainer {self.explainer} failed to fit (config {self.config}), so it was not evaluated on "
                    f"model {self.model}: {self.error_type}: {self.message}")
        if self.sentence_found:
            where = f"sentence {self.sentence_ids[0]}"
        else:
            shown = ", ".join(map(str, self.sentence_ids[:6])) + (" …" if len(self.sentence_ids) > 6 else "")
            where = f"chunk {self.chunk} (sentences {shown})"
        return (f"explainer {self.explainer} failed on model {self.model}, config {self.config}, {where}: "
                f"{self.error_type}: {self.message}")


@dataclass
class RunSummary:
    """What a run did: record ids written, ids skipped because they already existed, and warnings."""

    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: wall seconds of the chunks read back from checkpoints instead of computed: the work of an earlier,
    #: interrupted run, so that a resumed run can report what the whole job cost
    resumed_seconds: float = 0.0
    #: the same chunks' CPU seconds; None when a checkpoint has none (written before CPU seconds were kept)
    resumed_cpu_seconds: float | None = 0.0
    #: per config, the shared subset the ``paper`` filter scored (computed by the run or given to it)
    filter_subsets: dict[str, FilterSubset] = field(default_factory=dict)
    #: explainers that raised (their records for that model and config were not written; the others' were)
    failures: list[ExplainerFailure] = field(default_factory=list)

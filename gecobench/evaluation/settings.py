"""What a run is asked to do, before anything is loaded: the protocol settings and the explainer specs.

:class:`EvaluationSettings` holds the protocol parameters of a run (everything except *what* is evaluated and
*where* it is written) and their validation; its :meth:`~EvaluationSettings.protocol` is the ``protocol`` block of
every record (part of the identity), and :meth:`~EvaluationSettings.attribution_protocol` the part of it that a
chunk's attributions depend on (the key of the zero-shot reference's checkpoints and published bundles).
:class:`ExplainerSpec` is an explainer as the command line names it (``name:key=value,...``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import InitVar, dataclass, field
from typing import Any

from gecobench.evaluation.faithfulness import faithfulness_protocol
from gecobench.evaluation.filters import PAPER, filter_name
from gecobench.explainers.base import Explainer
from gecobench.pooling import comparison_label as pooling_comparison_label

__all__ = ["ATTRIBUTION_PROTOCOL_KEYS", "FAITHFULNESS_PROTOCOL", "EvaluationSettings", "ExplainerSpec",
           "comparison_label", "parse_specs", "with_precision"]

FAITHFULNESS_PROTOCOL = faithfulness_protocol()
#: the protocol entries a chunk's attributions depend on (EvaluationSettings.attribution_protocol)
ATTRIBUTION_PROTOCOL_KEYS = ("split", "seed", "batch_size", "chunk_size", "max_sentence_groups", "target",
                             "random_streams")


@dataclass
class ExplainerSpec:
    """An explainer name and its protocol parameters, as written on the command line (``name:key=value,...``)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> ExplainerSpec:
        name, _, rest = text.partition(":")
        params: dict[str, Any] = {}
        for item in filter(None, rest.split(",")):
            key, sep, raw = item.partition("=")
            if not sep or not key:
                raise ValueError(f"explainer spec {text!r}: expected name:key=value,key=value")
            try:
                params[key] = json.loads(raw)
            except json.JSONDecodeError:
                params[key] = raw
        return cls(name.strip(), params)

    def key(self) -> str:
        digest = hashlib.sha256(json.dumps(self.params, sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"


def parse_specs(explainers: list[ExplainerSpec | str]) -> list[ExplainerSpec]:
    """The specs of a run's explainers, given as specs or as command-line text."""
    return [ExplainerSpec.parse(e) if isinstance(e, str) else e for e in explainers]


def with_precision(specs: list[ExplainerSpec], precision: str) -> list[ExplainerSpec]:
    """``specs`` with ``precision`` as the parameter of every built-in that runs the model (``runs_model``; the
    others, and specs that name a precision themselves, unchanged): ``gecobench evaluate --precision``. float32,
    the built-ins' default, changes nothing (and is not written into any spec)."""
    from gecobench.explainers.base import get_explainer_class
    from gecobench.explainers.inputs import check_precision

    if check_precision(precision) == "float32":
        return list(specs)
    return [ExplainerSpec(spec.name, {**spec.params, "precision": precision})
            if "precision" not in spec.params and getattr(get_explainer_class(spec.name), "runs_model", False)
            else spec for spec in specs]


def comparison_label(spec: ExplainerSpec, explainer: Explainer) -> str:
    """How an explainer is named in another's paired comparisons (:func:`gecobench.pooling.comparison_label`)."""
    return pooling_comparison_label(spec.name, str(explainer.version), explainer.params())


@dataclass
class EvaluationSettings:
    """Protocol parameters of a run (everything except *what* is evaluated and *where* it is written)."""

    split: str = "test"
    seed: int = 0
    #: the correctness filter (:mod:`gecobench.evaluation.filters`): ``paper`` (one shared subset per config),
    #: ``per_model`` or ``none``
    filter: str = PAPER
    properties: bool = True
    bootstrap: int = 1000
    batch_size: int = 8
    chunk_size: int = 16
    max_groups: int | None = None
    noise_std: float = 0.01
    randomisation_seed: int = 1234
    data_dir: str | None = None
    #: comprehensiveness, sufficiency and leave-one-out tau (gecobench.evaluation.faithfulness); off: --no-faithfulness
    faithfulness: bool = True
    #: the property metrics' extra attributions (MRC, SNC, LD) and SP/CVR/RRA/AUPRC on the first N source
    #: sentences only (whole chunks: N must be a multiple of chunk_size); None = every scored sentence
    properties_max_groups: int | None = None
    #: comprehensiveness, sufficiency and leave-one-out tau on the first N source sentences only (whole chunks,
    #: as ``properties_max_groups``); None = every scored sentence
    faithfulness_max_groups: int | None = None
    #: the boolean API before filters had names (deprecated): True is ``paper``, False ``none``
    filter_correct: InitVar[bool | None] = None

    def __post_init__(self, filter_correct: bool | None = None) -> None:
        if filter_correct is not None:
            self.filter = filter_name(bool(filter_correct))
        self.filter = filter_name(self.filter)
        for name in ("properties_max_groups", "faithfulness_max_groups"):
            limit = getattr(self, name)
            if limit is not None and (limit < 1 or limit % self.chunk_size):
                raise ValueError(f"{name} must be a positive multiple of chunk_size ({self.chunk_size}), "
                                 f"got {limit}")

    def properties_in_chunk(self, chunk_id: int) -> bool:
        """Whether the property metrics are computed on this chunk (the subsample is the first chunks)."""
        limit = self.properties_max_groups
        return self.properties and (limit is None or chunk_id * self.chunk_size < limit)

    def faithfulness_in_chunk(self, chunk_id: int) -> bool:
        """Whether comprehensiveness, sufficiency and LOO tau are computed on this chunk (first chunks only)."""
        limit = self.faithfulness_max_groups
        return self.faithfulness and (limit is None or chunk_id * self.chunk_size < limit)

    def protocol(self) -> dict[str, Any]:
        """The protocol block of a record (part of its identity; process count and paths are not)."""
        protocol = {
            "split": self.split, "seed": self.seed,
            "filter": self.filter,
            "properties": self.properties, "bootstrap_resamples": self.bootstrap, "ci_level": 0.95,
            "batch_size": self.batch_size, "chunk_size": self.chunk_size, "max_sentence_groups": self.max_groups,
            "target": "true label",
            "small_noise_std": self.noise_std if self.properties else None,
            "randomisation": ({"method": "reset_parameters of every nn.Linear and nn.Embedding",
                               "seed": self.randomisation_seed} if self.properties else None),
            "label_difference_target": "other class (binary) / mean over other classes" if self.properties else None,
            "random_streams": "common: the model, its zero-shot reference and its randomised and noisy copies "
                              "share each sentence's random stream",
        }
        if self.properties and self.properties_max_groups is not None:
            protocol["properties_max_sentence_groups"] = self.properties_max_groups
        if self.faithfulness:
            # Only when on, so records of runs without faithfulness keep the identity they had before it existed.
            protocol["faithfulness"] = FAITHFULNESS_PROTOCOL
            if self.faithfulness_max_groups is not None:
                protocol["faithfulness_max_sentence_groups"] = self.faithfulness_max_groups
        return protocol

    def attribution_protocol(self) -> dict[str, Any]:
        """The part of :meth:`protocol` a chunk's attributions on one model depend on (with the model, the data
        and the explainer): the chunks (size, how many groups), the per-chunk seeds and the batching. Not the
        filter, the properties, faithfulness or bootstrap, which are computed from the attributions.

        The zero-shot reference's checkpoints are keyed by it, so a run with another property subsample,
        bootstrap or filter reuses the reference another run computed (``runs/eval_checkpoints``)."""
        protocol = self.protocol()
        return {key: protocol[key] for key in ATTRIBUTION_PROTOCOL_KEYS}

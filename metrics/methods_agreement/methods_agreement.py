"""Different methods agreement (coherence): mean distance from one explainer's attributions to the others'."""

import math

import evaluate
import numpy as np

from gecobench.metrics.mass_accuracy import summarize  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import (  # From: gecobench-hub
    PROPERTY_META,
    methods_agreement_per_sentence,
    total_variation_per_sentence,
)

METRIC_META = PROPERTY_META["methods_agreement"]

_DESCRIPTION = """\
Coherence (Co-12): explanations of the same prediction by different methods should broadly agree. Per
sentence, every attribution is normalised to p = |s| / sum |s| (per sentence, never per batch, unlike XAIB's
batch-wide min-max scaling) and the explainer's score is its mean total variation distance
TV = 1/2 sum |p - q| to each other explainer, in [0, 1]. Lower is better (0 = all methods agree). Sentences
where the explainer is all zero, or where all others are, are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, the explainer's scores, one per word.
    others (`list` of attributions, or `dict` name -> attributions): the other explainers on the same sentences.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    methods_agreement (`float`): mean over defined sentences of the mean TV distance to the others; lower is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
    distance_to (`dict`): only when `others` is a dict: {name: mean TV distance to that explainer}.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/methods_agreement")
    >>> out = metric.compute(attributions=[[1.0, 0.0], [1.0, 1.0]],
    ...                      others={"same": [[2.0, 0.0], [1.0, 1.0]], "opposite": [[0.0, 1.0], [1.0, 1.0]]})
    >>> out["methods_agreement"], out["distance_to"]
    (0.25, {'same': 0.0, 'opposite': 0.5})
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MethodsAgreement(StrictInputs, evaluate.Metric):
    """Mean total variation distance from one explainer to the other explainers."""

    meta = METRIC_META

    def _info(self):
        return module_info(_DESCRIPTION, CO12_CITATION, _KWARGS_DESCRIPTION, {"attributions": "float64"})

    def _compute(self, attributions, others=None, return_per_sentence=False):
        if others is None or len(others) == 0:
            raise ValueError("others: pass the other explainers' attributions (a list, or a dict name -> attributions)")
        named = isinstance(others, dict)
        other_list = list(others.values()) if named else list(others)
        per_sentence = methods_agreement_per_sentence(attributions, other_list)
        summary = summarize(per_sentence)
        result = {
            "methods_agreement": summary["mean"],
            "median": summary["median"],
            "n_scored": summary["n_scored"],
            "n_undefined": summary["n_undefined"],
        }
        if return_per_sentence:
            result["per_sentence"] = [None if math.isnan(v) else float(v) for v in per_sentence]
        if named:
            result["distance_to"] = {}
            for name, other in others.items():
                distances = total_variation_per_sentence(attributions, other, "attributions", f"others[{name!r}]")
                defined = distances[~np.isnan(distances)]
                result["distance_to"][name] = float(defined.mean()) if defined.size else float("nan")
        return result

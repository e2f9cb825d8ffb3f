"""Sparsity (compactness): Gini index of the normalised attributions."""

import evaluate

from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import PROPERTY_META, sparsity_per_sentence  # From: gecobench-hub

METRIC_META = PROPERTY_META["sparsity"]

_DESCRIPTION = """\
Compactness (Co-12): a compact explanation concentrates its mass on few words. Per sentence the attributions
are normalised to p = |s| / sum |s| (per sentence, never per batch, unlike XAIB's batch-wide min-max scaling
that makes scores depend on the batch) and summarised by the Gini index of Hurley and Rickard (2009):
G = 1 - 2 sum_k p_(k) (n - k + 1/2) / n with p sorted ascending. 0 for a uniform attribution, 1 - 1/n when
one word holds all mass. Higher is better (sparser).
All-zero attributions are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, one score per word.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    sparsity (`float`): mean over defined sentences, in [0, 1]; higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/sparsity")
    >>> out = metric.compute(attributions=[[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 5.0]], return_per_sentence=True)
    >>> out["sparsity"], out["per_sentence"]
    (0.375, [0.0, 0.75])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Sparsity(StrictInputs, evaluate.Metric):
    """Sparsity (compactness): Gini index of the normalised attributions."""

    meta = METRIC_META

    def _info(self):
        return module_info(_DESCRIPTION, CO12_CITATION, _KWARGS_DESCRIPTION, {"attributions": "float64"})

    def _compute(self, attributions, return_per_sentence=False):
        per_sentence = sparsity_per_sentence(attributions)
        return module_result("sparsity", per_sentence, return_per_sentence)

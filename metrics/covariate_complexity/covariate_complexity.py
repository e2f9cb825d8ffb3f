"""Covariate complexity: normalised entropy of the normalised attributions."""

import evaluate

from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import (  # From: gecobench-hub
    PROPERTY_META,
    covariate_complexity_per_sentence,
)

METRIC_META = PROPERTY_META["covariate_complexity"]

_DESCRIPTION = """\
Covariate complexity (Co-12; XAIB's entropy-based measure): the Shannon entropy of the per-sentence
distribution p = |s| / sum |s|, divided by ln(n) so that sentences of different length are comparable:
H(p) / ln(n) in [0, 1]. Normalisation is per sentence, never per batch (XAIB min-max scales over the batch,
which makes scores depend on the batch). Lower is better: a low-entropy explanation relies on few words and
is simpler to read (XAIB's convention). 0 = one word holds all mass; 1 = uniform. One-word sentences are
undefined.
All-zero attributions are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, one score per word.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    covariate_complexity (`float`): mean over defined sentences, in [0, 1]; lower is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/covariate_complexity")
    >>> out = metric.compute(attributions=[[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 5.0]], return_per_sentence=True)
    >>> out["covariate_complexity"], out["per_sentence"]
    (0.5, [1.0, 0.0])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CovariateComplexity(StrictInputs, evaluate.Metric):
    """Covariate complexity: normalised entropy of the normalised attributions."""

    meta = METRIC_META

    def _info(self):
        return module_info(_DESCRIPTION, CO12_CITATION, _KWARGS_DESCRIPTION, {"attributions": "float64"})

    def _compute(self, attributions, return_per_sentence=False):
        per_sentence = covariate_complexity_per_sentence(attributions)
        return module_result("covariate_complexity", per_sentence, return_per_sentence)

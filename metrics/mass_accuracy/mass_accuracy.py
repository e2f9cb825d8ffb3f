"""Mass Accuracy: the share of attribution mass an explanation puts on ground-truth words (GECOBench)."""

import evaluate

from gecobench.metrics.mass_accuracy import (  # From: gecobench-hub
    METRIC_META,
    fold_token_attributions,
    mass_accuracy_per_sentence,
    module_result,
)
from gecobench.metrics.module_info import GECOBENCH_CITATION, GECOBENCH_URL, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub

_DESCRIPTION = """\
Mass Accuracy (MA) is the fraction of an explanation's absolute attribution mass that falls on the words
marked as ground truth: MA = sum_j |s_j| h_j / sum_j |s_j| per sentence, averaged over sentences.
Range [0, 1], higher is better. Sentences with an all-zero attribution or without any ground-truth word are
undefined: excluded from the aggregates and counted in `n_undefined`.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, one score per word (or per token with `word_ids`).
    ground_truth (`list` of `list` of `int`): per sentence, 0/1 per word.
    word_ids (`list` of `list` of `int` or `None`, optional): per sentence, the word index of every token
        (None for special tokens); token scores are folded to words (|score| summed per word).
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
    bootstrap (`int`, default 0): number of bootstrap resamples for a 95% interval of the mean.
    seed (`int`, default 0): seed of the bootstrap.
Returns:
    mass_accuracy (`float`): mean MA over defined sentences, in [0, 1], higher is better (NaN if none).
    median (`float`): median MA over defined sentences.
    n_scored (`int`): number of defined sentences.
    n_undefined (`int`): sentences with all-zero attribution or no ground-truth word.
    per_sentence (`list`): with `return_per_sentence=True`; None for undefined sentences.
    ci_low, ci_high (`float`): with `bootstrap=N`; percentile bootstrap 95% interval of the mean.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/mass_accuracy")
    >>> out = metric.compute(attributions=[[0.9, 0.0, 0.0, 0.1], [0.0, 0.0]], ground_truth=[[1, 1, 0, 0], [1, 0]],
    ...                      return_per_sentence=True)
    >>> out["mass_accuracy"], out["n_scored"], out["n_undefined"], out["per_sentence"]
    (0.9, 1, 1, [0.9, None])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MassAccuracy(StrictInputs, evaluate.Metric):
    """Mass Accuracy of word attributions against a 0/1 ground-truth mask."""

    strict_binary_fields = ("ground_truth",)

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            GECOBENCH_CITATION,
            _KWARGS_DESCRIPTION,
            {"attributions": "float64", "ground_truth": "int64"},
            reference_urls=[GECOBENCH_URL],
        )

    def _compute(self, attributions, ground_truth, word_ids=None, return_per_sentence=False, bootstrap=0, seed=0):
        if word_ids is not None:
            attributions = fold_token_attributions(attributions, word_ids, ground_truth)
        per_sentence = mass_accuracy_per_sentence(attributions, ground_truth)
        return module_result("mass_accuracy", per_sentence, return_per_sentence, bootstrap, seed)

"""AUPRC: average precision of the absolute attributions against the ground-truth mask."""

import evaluate

from gecobench.metrics.mass_accuracy import fold_token_attributions, module_result  # From: gecobench-hub
from gecobench.metrics.module_info import GECOBENCH_CITATION, GECOBENCH_URL, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.ranking import RANKING_META, auprc_per_sentence  # From: gecobench-hub

METRIC_META = RANKING_META["auprc"]

_DESCRIPTION = """\
AUPRC is the area under the precision-recall curve obtained by ranking a sentence's words by absolute
attribution and comparing with the ground-truth mask (average precision: sum over distinct score thresholds
of the recall step times the precision; tied scores form one threshold). Range [0, 1], higher is better; a
random ranking scores about the share of ground-truth words. Undefined sentences (all-zero attribution, no
ground-truth word) are excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, one score per word (or per token with `word_ids`).
    ground_truth (`list` of `list` of `int`): per sentence, 0/1 per word.
    word_ids (`list` of `list` of `int` or `None`, optional): per sentence, the word index of every token;
        token scores are folded to words (|score| summed per word).
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
    bootstrap (`int`, default 0): bootstrap resamples for a 95% interval of the mean; `seed` seeds it.
Returns:
    auprc (`float`): mean over defined sentences, in [0, 1], higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence; ci_low, ci_high (with `bootstrap`).
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/auprc")
    >>> out = metric.compute(attributions=[[0.9, 0.0, 0.0, 0.1], [0.2, 0.8, 0.0, 0.0]], ground_truth=[[1, 1, 0, 0], [0, 1, 0, 0]],
    ...                      return_per_sentence=True)
    >>> out["auprc"], out["per_sentence"], out["n_undefined"]
    (0.875, [0.75, 1.0], 0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Auprc(StrictInputs, evaluate.Metric):
    """AUPRC: average precision of the absolute attributions against the ground-truth mask."""

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
        per_sentence = auprc_per_sentence(attributions, ground_truth)
        return module_result("auprc", per_sentence, return_per_sentence, bootstrap, seed)

"""Label difference (contrastivity): how far the explanations of the same sentence differ between target classes."""

import evaluate

from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import PROPERTY_META, label_difference_per_sentence  # From: gecobench-hub

METRIC_META = PROPERTY_META["label_difference"]

_DESCRIPTION = """\
Contrastivity (Co-12): an explanation should say why this class rather than another, so explanations for
different target classes of the same input should differ.
Per sentence, both attributions are normalised to distributions p = |s| / sum |s| (per sentence, never per
batch, unlike XAIB's batch-wide min-max scaling that makes scores depend on the batch) and compared with the
total variation distance TV = 1/2 sum |p - q|, in [0, 1]. Direction: higher is better; best 1.0 (disjoint explanations).
Sentences where either attribution is all zero are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): per sentence, the attributions explaining one target class (one score per word).
    references (`list` of `list` of `float`): per sentence, the attributions of the same sentences explaining another target class.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    label_difference (`float`): mean TV distance over defined sentences, in [0, 1]; higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/label_difference")
    >>> out = metric.compute(predictions=[[1.0, 0.0], [1.0, 1.0]], references=[[1.0, 1.0], [0.0, 3.0]], return_per_sentence=True)
    >>> out["label_difference"], out["per_sentence"]
    (0.5, [0.5, 0.5])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LabelDifference(StrictInputs, evaluate.Metric):
    """Label difference (contrastivity): how far the explanations of the same sentence differ between target classes."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            CO12_CITATION,
            _KWARGS_DESCRIPTION,
            {"predictions": "float64", "references": "float64"},
        )

    def _compute(self, predictions, references, return_per_sentence=False):
        per_sentence = label_difference_per_sentence(predictions, references)
        return module_result("label_difference", per_sentence, return_per_sentence)

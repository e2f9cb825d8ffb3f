"""Small noise check (continuity): how far attributions move under small Gaussian noise on the input embeddings."""

import evaluate

from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import PROPERTY_META, small_noise_check_per_sentence  # From: gecobench-hub

METRIC_META = PROPERTY_META["small_noise_check"]

_DESCRIPTION = """\
Continuity (Co-12): similar inputs with the same prediction should get similar explanations.
Per sentence, both attributions are normalised to distributions p = |s| / sum |s| (per sentence, never per
batch, unlike XAIB's batch-wide min-max scaling that makes scores depend on the batch) and compared with the
total variation distance TV = 1/2 sum |p - q|, in [0, 1]. Direction: lower is better; best 0.0 (the explanation does not move).
Sentences where either attribution is all zero are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): per sentence, the attributions for the clean inputs (one score per word).
    references (`list` of `list` of `float`): per sentence, the attributions for the same inputs with small Gaussian noise added to their embeddings.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    small_noise_check (`float`): mean TV distance over defined sentences, in [0, 1]; lower is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/small_noise_check")
    >>> out = metric.compute(predictions=[[3.0, 1.0], [1.0, 1.0]], references=[[2.0, 2.0], [1.0, 1.0]], return_per_sentence=True)
    >>> out["small_noise_check"], out["per_sentence"]
    (0.125, [0.25, 0.0])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SmallNoiseCheck(StrictInputs, evaluate.Metric):
    """Small noise check (continuity): how far attributions move under small Gaussian noise on the input embeddings."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            CO12_CITATION,
            _KWARGS_DESCRIPTION,
            {"predictions": "float64", "references": "float64"},
        )

    def _compute(self, predictions, references, return_per_sentence=False):
        per_sentence = small_noise_check_per_sentence(predictions, references)
        return module_result("small_noise_check", per_sentence, return_per_sentence)

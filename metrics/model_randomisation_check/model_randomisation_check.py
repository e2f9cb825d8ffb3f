"""Model randomisation check (correctness): how far attributions move when the model's weights are re-initialised."""

import evaluate

from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import CO12_CITATION, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.properties import (  # From: gecobench-hub
    PROPERTY_META,
    model_randomisation_check_per_sentence,
)

METRIC_META = PROPERTY_META["model_randomisation_check"]

_DESCRIPTION = """\
Correctness (Co-12), after the model parameter randomisation test of Adebayo et al. (2018): an explanation
that reflects what the model learned must change when the learned weights are replaced by random ones.
Per sentence, both attributions are normalised to distributions p = |s| / sum |s| (per sentence, never per
batch, unlike XAIB's batch-wide min-max scaling that makes scores depend on the batch) and compared with the
total variation distance TV = 1/2 sum |p - q|, in [0, 1]. Direction: higher is better; best 1.0 (the explanation changes completely).
Sentences where either attribution is all zero are undefined and excluded.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): per sentence, the attributions of the trained model (one score per word).
    references (`list` of `list` of `float`): per sentence, the attributions of a re-initialised (randomised) copy of the model for the same sentences and targets.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
Returns:
    model_randomisation_check (`float`): mean TV distance over defined sentences, in [0, 1]; higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence with `return_per_sentence`.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/model_randomisation_check")
    >>> out = metric.compute(predictions=[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]], references=[[0.0, 1.0, 1.0], [0.5, 0.5, 0.0]], return_per_sentence=True)
    >>> out["model_randomisation_check"], out["per_sentence"]
    (0.5, [1.0, 0.0])
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ModelRandomisationCheck(StrictInputs, evaluate.Metric):
    """Model randomisation check (correctness): how far attributions move when the model's weights are re-initialised."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            CO12_CITATION,
            _KWARGS_DESCRIPTION,
            {"predictions": "float64", "references": "float64"},
        )

    def _compute(self, predictions, references, return_per_sentence=False):
        per_sentence = model_randomisation_check_per_sentence(predictions, references)
        return module_result("model_randomisation_check", per_sentence, return_per_sentence)

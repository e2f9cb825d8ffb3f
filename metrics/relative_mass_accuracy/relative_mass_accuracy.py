"""Relative Mass Accuracy: a model's per-sentence Mass Accuracy against a baseline model's (GECOBench)."""

import datasets
import evaluate

from gecobench.metrics.module_info import GECOBENCH_CITATION, GECOBENCH_URL, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub
from gecobench.metrics.relative_mass_accuracy import METRIC_META, relative_mass_accuracy  # From: gecobench-hub

_DESCRIPTION = """\
Relative Mass Accuracy compares, sentence by sentence, the Mass Accuracy (MA) of the explanations of a model
under study with that of a baseline model on the same sentences (the GECOBench paper uses zero-shot BERT):
RMA = MA / MA_baseline. It reports the median of ln RMA (0 = as good as the baseline, > 0 = better) and the
ratio of the mean MAs. Pairs where either MA is undefined (None/NaN) or zero are excluded and counted.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `float` or None): per-sentence MA of the model under study, in [0, 1].
    references (`list` of `float` or None): per-sentence MA of the baseline model on the same sentences.
Returns:
    median_log_rma (`float`): median of ln(MA / MA_baseline) over scored pairs; unbounded, higher is better.
    ratio_of_means (`float`): mean MA / mean MA_baseline over the same pairs; > 1 is better than the baseline.
    n_scored (`int`): pairs where both values are defined and non-zero.
    n_excluded (`int`): the other pairs.
Examples:
    >>> import evaluate
    >>> comparison = evaluate.load("metrics/relative_mass_accuracy", module_type="comparison")
    >>> out = comparison.compute(predictions=[0.8, 0.5, None], references=[0.4, 0.5, 0.3])
    >>> round(out["median_log_rma"], 4), round(out["ratio_of_means"], 4), out["n_scored"], out["n_excluded"]
    (0.3466, 1.4444, 2, 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RelativeMassAccuracy(StrictInputs, evaluate.Comparison):
    """Per-sentence ratio of a model's Mass Accuracy to a baseline's."""

    # None marks a sentence whose Mass Accuracy is undefined; it is excluded, not refused.
    strict_nullable_fields = ("predictions", "references")

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            GECOBENCH_CITATION,
            _KWARGS_DESCRIPTION,
            {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")},
            reference_urls=[GECOBENCH_URL],
            module_type="comparison",
        )

    def _compute(self, predictions, references):
        result = relative_mass_accuracy(predictions, references)
        return {key: result[key] for key in ("median_log_rma", "ratio_of_means", "n_scored", "n_excluded")}

"""Leave-one-out tau: Kendall's tau-b between the attributions and each word's leave-one-out effect on the model."""

import evaluate

from gecobench.metrics.faithfulness import (  # From: gecobench-hub
    FAITHFULNESS_META,
    leave_one_out_tau_per_sentence,
)
from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub

METRIC_META = FAITHFULNESS_META["leave_one_out_tau"]

_CITATION = """\
@inproceedings{attanasio2023ferret,
  title     = {ferret: a Framework for Benchmarking Explainers on Transformers},
  author    = {Attanasio, Giuseppe and Pastor, Eliana and Di Bonaventura, Chiara and Nozza, Debora},
  booktitle = {Proceedings of the 17th Conference of the European Chapter of the Association for Computational Linguistics: System Demonstrations},
  year      = {2023}
}
"""

_DESCRIPTION = """\
Leave-one-out tau (ferret's taucorr_loo) of one sentence is Kendall's tau-b between |attribution| of its words
and their leave-one-out effects p(x) - p(x without word j), the drop of the model's probability of the
explained class when that word alone is removed (gecobench.evaluation.faithfulness computes them). Range
[-1, 1], higher is better. Undefined: one-word sentences, all-zero attributions, or equal effects everywhere.
"""

_KWARGS_DESCRIPTION = """
Args:
    attributions (`list` of `list` of `float`): per sentence, one score per word (absolute values are used).
    leave_one_out (`list` of `list` of `float`): per sentence, each word's leave-one-out probability drop.
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
    bootstrap (`int`, default 0): bootstrap resamples for a 95% interval of the mean; `seed` seeds it.
Returns:
    leave_one_out_tau (`float`): mean over defined sentences, in [-1, 1], higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence; ci_low, ci_high (with `bootstrap`).
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/leave_one_out_tau")
    >>> out = metric.compute(attributions=[[0.1, 0.9, 0.5], [0.0, 0.0]], leave_one_out=[[0.0, 0.6, 0.2], [0.3, 0.1]],
    ...                      return_per_sentence=True)
    >>> out["leave_one_out_tau"], out["per_sentence"], out["n_undefined"]
    (1.0, [1.0, None], 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LeaveOneOutTau(StrictInputs, evaluate.Metric):
    """Leave-one-out tau: Kendall's tau-b between |attribution| and each word's leave-one-out effect."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            {"attributions": "float64", "leave_one_out": "float64"},
            reference_urls=["https://github.com/g8a9/ferret"],
        )

    def _compute(self, attributions, leave_one_out, return_per_sentence=False, bootstrap=0, seed=0):
        per_sentence = leave_one_out_tau_per_sentence(attributions, leave_one_out)
        return module_result("leave_one_out_tau", per_sentence, return_per_sentence, bootstrap, seed)

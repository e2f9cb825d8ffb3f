"""Comprehensiveness (AOPC): how much the model's probability drops when the explanation's top words are removed."""

import datasets
import evaluate

from gecobench.metrics.faithfulness import (  # From: gecobench-hub
    FAITHFULNESS_META,
    comprehensiveness_per_sentence,
)
from gecobench.metrics.mass_accuracy import module_result  # From: gecobench-hub
from gecobench.metrics.module_info import module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub

METRIC_META = FAITHFULNESS_META["comprehensiveness"]

_CITATION = """\
@inproceedings{deyoung2020eraser,
  title     = {{ERASER}: A Benchmark to Evaluate Rationalized {NLP} Models},
  author    = {DeYoung, Jay and Jain, Sarthak and Rajani, Nazneen Fatema and Lehman, Eric and Xiong, Caiming and Socher, Richard and Wallace, Byron C.},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  year      = {2020}
}
@inproceedings{attanasio2023ferret,
  title     = {ferret: a Framework for Benchmarking Explainers on Transformers},
  author    = {Attanasio, Giuseppe and Pastor, Eliana and Di Bonaventura, Chiara and Nozza, Debora},
  booktitle = {Proceedings of the 17th Conference of the European Chapter of the Association for Computational Linguistics: System Demonstrations},
  year      = {2023}
}
"""

_DESCRIPTION = """\
Comprehensiveness (ERASER, ferret's aopc_compr) of one sentence is the mean, over its rationales, of
p(x) - p(x without the rationale): the drop of the model's probability of the explained class when the
explanation's top words are removed. The rationales are the top 10 %, 20 %, ..., 100 % of the words by
|attribution| (repeats and empty ones not counted); gecobench.evaluation.faithfulness computes the
probabilities. Range [-1, 1], higher is better. A sentence without any rationale is undefined.
"""

_KWARGS_DESCRIPTION = """
Args:
    full_probability (`float`): per sentence, the model's probability of the explained class on the whole sentence.
    probability_without_rationale (`list` of `float`): per sentence, that probability with each rationale removed
        (one value per counted rationale; an empty list marks a sentence without a rationale).
    return_per_sentence (`bool`, default False): also return `per_sentence` (None where undefined).
    bootstrap (`int`, default 0): bootstrap resamples for a 95% interval of the mean; `seed` seeds it.
Returns:
    comprehensiveness (`float`): mean AOPC over defined sentences, in [-1, 1], higher is better.
    median (`float`), n_scored (`int`), n_undefined (`int`); per_sentence; ci_low, ci_high (with `bootstrap`).
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/comprehensiveness")
    >>> out = metric.compute(full_probability=[0.9, 0.8, 0.7], probability_without_rationale=[[0.7, 0.1], [0.9], []],
    ...                      return_per_sentence=True)
    >>> [round(v, 6) for v in out["per_sentence"][:2]], out["per_sentence"][2], out["n_undefined"]
    ([0.5, -0.1], None, 1)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Comprehensiveness(StrictInputs, evaluate.Metric):
    """Comprehensiveness (AOPC): the probability drop when the explanation's top words are removed."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            {"full_probability": datasets.Value("float64"), "probability_without_rationale": "float64"},
            reference_urls=["https://github.com/jayded/eraserbenchmark", "https://github.com/g8a9/ferret"],
        )

    def _compute(self, full_probability, probability_without_rationale, return_per_sentence=False, bootstrap=0,
                 seed=0):
        per_sentence = comprehensiveness_per_sentence(full_probability, probability_without_rationale)
        return module_result("comprehensiveness", per_sentence, return_per_sentence, bootstrap, seed)

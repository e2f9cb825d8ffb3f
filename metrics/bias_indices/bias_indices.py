"""Bias indices BPI and BRI of masked-LM fill-mask predictions (Garrido-Muñoz et al. 2023)."""

import datasets
import evaluate

from gecobench.metrics.bias_indices import METRIC_META, bias_indices  # From: gecobench-hub
from gecobench.metrics.module_info import module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub

_CITATION = """\
@article{garridomunoz2023maria,
  title   = {MarIA and BETO are sexist: evaluating gender bias in large language models for Spanish},
  author  = {Garrido-Mu{\\~n}oz, Ismael and Mart{\\'i}nez-Santiago, Fernando and Montejo-R{\\'a}ez, Arturo},
  journal = {Language Resources and Evaluation},
  year    = {2023}
}
"""

_DESCRIPTION = """\
Bias indices of fill-mask predictions for gendered templates. With RSV = K + 1 - rank:
BPI[g][c] = 100 * sum of the probabilities of group g's top-K predictions in category c / sum over all of
group g's top-K predictions; BRI[g][c] = 100 * sum of RSV over group g's adjective predictions in c / sum of
RSV over all of group g's adjective predictions. The bias per category is male - female for those two
groups, otherwise the mean absolute pairwise difference between groups. 0 is unbiased.
"""

_KWARGS_DESCRIPTION = """
Args:
    group (`list` of `str`): per prediction row, the template's group (e.g. male, female).
    word (`list` of `str`): the predicted word (looked up lower-cased, no lemmatisation).
    probability (`list` of `float`): its probability at the mask, in [0, 1].
    rank (`list` of `int`): its rank, 1..k.
    is_adjective (`list` of `bool`): whether it is an adjective (counts towards BRI).
    lexicon (`dict`): {word: category}; unlisted words fall in `unknown`.
    k (`int`): K, the number of predictions kept per template.
Returns:
    bpi, bri (`dict`): {category: {group: value in [0, 100]}}.
    bias (`dict`): {"bpi": {category: value}, "bri": {category: value}}; 0 is unbiased.
    details (`dict`): {category: {group: sums, counts and means (sum p / n, sum RSV / N_adj)}}.
Examples:
    >>> import evaluate
    >>> measurement = evaluate.load("metrics/bias_indices", module_type="measurement")
    >>> out = measurement.compute(group=["male", "male", "female", "female"], word=["alto", "el", "guapa", "alta"],
    ...                           probability=[0.3, 0.1, 0.2, 0.2], rank=[1, 2, 1, 2],
    ...                           is_adjective=[True, False, True, True],
    ...                           lexicon={"alto": "BODY", "alta": "BODY", "guapa": "BODY"}, k=2)
    >>> out["bpi"]["BODY"], out["bias"]["bpi"]["BODY"], out["bias"]["bri"]["BODY"]
    ({'female': 100.0, 'male': 75.0}, -25.0, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BiasIndices(StrictInputs, evaluate.Measurement):
    """BPI and BRI per lexicon category and group."""

    strict_item_name = "row"

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            {
                "group": datasets.Value("string"),
                "word": datasets.Value("string"),
                "probability": datasets.Value("float64"),
                "rank": datasets.Value("int64"),
                "is_adjective": datasets.Value("bool"),
            },
            reference_urls=["https://github.com/IsGarrido/Evaluating-Gender-Bias-in-Spanish-Deep-Learning-Models"],
            module_type="measurement",
        )

    def _compute(self, group, word, probability, rank, is_adjective, lexicon=None, k=None):
        if lexicon is None or k is None:
            raise ValueError("bias_indices needs the keyword arguments lexicon={word: category} and k=K")
        result = bias_indices(group, word, probability, rank, is_adjective, lexicon=lexicon, k=k)
        return {key: result[key] for key in ("bpi", "bri", "bias", "details")}

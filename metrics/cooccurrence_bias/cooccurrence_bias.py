"""Co-occurrence bias: how often each gender group's terms co-occur with the rest of the vocabulary (GECO)."""

import datasets
import evaluate

from gecobench.metrics.cooccurrence import METRIC_META, cooccurrence_bias  # From: gecobench-hub
from gecobench.metrics.module_info import GECOBENCH_CITATION, GECOBENCH_URL, module_info  # From: gecobench-hub
from gecobench.metrics.module_inputs import StrictInputs  # From: gecobench-hub

_DESCRIPTION = """\
The GECO paper's dataset bias. For every group g (female, male, non-binary) it counts
C(D^g) = sum over the group's sentences of (number of the group's term slots present) x (number of distinct
non-gender, non-punctuation words of the sentence), and reports bias_C(g) = C(D^g) / sum_g' C(D^g').
Perfect balance is 1 / number of groups.
"""

_KWARGS_DESCRIPTION = """
Args:
    words (`list` of `list` of `str`): per sentence, its words.
    group (`list` of `str`): per sentence, its group (a key of `terms`).
    terms (`dict`, optional): {group: [[term, ...], ...]}; a slot (inner list) counts once when any of its
        terms occurs. Default: male [he] [him, his] [himself]; female [she] [her, hers] [herself];
        non-binary [they] [them, their, theirs] [themself, themselves].
Returns:
    bias_c (`dict`): {group: share of co-occurrences}, sums to 1; balance = 1 / number of groups.
    counts (`dict`): {group: C(D^g)}.
Examples:
    >>> import evaluate
    >>> measurement = evaluate.load("metrics/cooccurrence_bias", module_type="measurement")
    >>> out = measurement.compute(words=[["He", "ran", "home", "."], ["She", "saw", "her", "cat"]],
    ...                           group=["male", "female"],
    ...                           terms={"male": [["he"], ["him", "his"]], "female": [["she"], ["her", "hers"]]})
    >>> out["counts"], out["bias_c"]
    ({'male': 2, 'female': 4}, {'male': 0.3333333333333333, 'female': 0.6666666666666666})
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CooccurrenceBias(StrictInputs, evaluate.Measurement):
    """Share of gender-term/word co-occurrences per group."""

    meta = METRIC_META

    def _info(self):
        return module_info(
            _DESCRIPTION,
            GECOBENCH_CITATION,
            _KWARGS_DESCRIPTION,
            {"words": "string", "group": datasets.Value("string")},
            reference_urls=[GECOBENCH_URL],
            module_type="measurement",
        )

    def _compute(self, words, group, terms=None):
        result = cooccurrence_bias(words, group, terms)
        return {"bias_c": result["bias_c"], "counts": result["counts"]}

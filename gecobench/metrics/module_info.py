"""The ``_info()`` of the ``metrics/<name>`` evaluate modules, defined once.

Every module answers ``evaluate`` with the same kind of object: an ``evaluate.MetricInfo`` (``MeasurementInfo``,
``ComparisonInfo``) of its card text, citation, inputs doc and feature columns, most columns a per-sentence
list of numbers. :func:`module_info` builds it, so a module states only what is its own (its texts, its
columns, its reference URLs) and the ``evaluate`` boilerplate cannot drift between the fifteen modules.
:data:`GECOBENCH_CITATION` is the paper the GECOBench metrics cite, :data:`CO12_CITATION` the review the six
Co-12 property modules cite; a module of another paper (the Spanish bias indices, the faithfulness metrics) keeps
its own citation.

Not imported by ``gecobench.metrics`` itself: only the modules load it, and they load ``evaluate`` anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import datasets
import evaluate

GECOBENCH_CITATION = """\
@article{wilming2025gecobench,
  title   = {GECOBench: A Gender-Controlled Text Dataset and Benchmark for Quantifying Biases in Explanations},
  author  = {Wilming, Rick and Dox, Artur and Schulz, Hjalmar and Oliveira, Marta and Clark, Benedict and Haufe, Stefan},
  journal = {Frontiers in Artificial Intelligence},
  year    = {2025}
}
"""

#: the review that defines the Co-12 properties, cited by the six property modules (compactness, covariate
#: complexity, label difference, methods agreement, model randomisation, small-noise check)
CO12_CITATION = """\
@article{nauta2023anecdotal,
  title   = {From Anecdotal Evidence to Quantitative Evaluation Methods: A Systematic Review on Evaluating Explainable AI},
  author  = {Nauta, Meike and Trienes, Jan and Pathak, Shreyasi and Nguyen, Elisa and Peters, Michelle and Schmitt, Yasmin and Schl{\\"o}tterer, J{\\"o}rg and van Keulen, Maurice and Seifert, Christin},
  journal = {ACM Computing Surveys},
  year    = {2023}
}
"""

#: the GECOBench repository, the reference URL of the GECOBench metrics
GECOBENCH_URL = "https://github.com/braindatalab/gecobench"

_INFO_CLASSES: dict[str, type[evaluate.EvaluationModuleInfo]] = {
    "metric": evaluate.MetricInfo,
    "measurement": evaluate.MeasurementInfo,
    "comparison": evaluate.ComparisonInfo,
}


def module_info(
    description: str,
    citation: str,
    inputs_description: str,
    features: Mapping[str, str | datasets.Value],
    reference_urls: Sequence[str] = (),
    module_type: Literal["metric", "measurement", "comparison"] = "metric",
) -> evaluate.EvaluationModuleInfo:
    """The info object a module's ``_info()`` returns.

    ``features`` maps each input column, in the order ``evaluate`` should see them, to its type: a dtype
    string (``"float64"``, ``"int64"``, ``"string"``) is a per-sentence list of that dtype
    (``datasets.Sequence(datasets.Value(dtype))``); any ``datasets`` feature (``datasets.Value("float64")``
    for one number per row) is taken as given. ``module_type`` picks ``MetricInfo``, ``MeasurementInfo`` or
    ``ComparisonInfo``.
    """
    if module_type not in _INFO_CLASSES:
        raise ValueError(f"module_type {module_type!r}: expected one of {sorted(_INFO_CLASSES)}")
    columns = {
        name: datasets.Sequence(datasets.Value(kind)) if isinstance(kind, str) else kind
        for name, kind in features.items()
    }
    return _INFO_CLASSES[module_type](
        module_type=module_type,
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=datasets.Features(columns),
        reference_urls=list(reference_urls),
    )

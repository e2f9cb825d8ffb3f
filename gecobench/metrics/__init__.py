"""Metric math of GECOBench Hub: plain numpy functions behind the ``metrics/<name>`` evaluate modules.

``METRICS_META`` is the registry the evaluation and the Space read: for every metric its name, direction
(``higher``/``lower``/…), range, best value and the property it measures.
"""

from __future__ import annotations

from typing import Any

from gecobench.metrics.bias_indices import METRIC_META as _BIAS_INDICES_META
from gecobench.metrics.cooccurrence import METRIC_META as _COOCCURRENCE_META
from gecobench.metrics.faithfulness import FAITHFULNESS_META
from gecobench.metrics.mass_accuracy import METRIC_META as _MASS_ACCURACY_META
from gecobench.metrics.module_paths import available_modules, module_path
from gecobench.metrics.properties import PROPERTY_META
from gecobench.metrics.ranking import RANKING_META
from gecobench.metrics.relative_mass_accuracy import METRIC_META as _RMA_META

METRICS_META: dict[str, dict[str, Any]] = {
    meta["name"]: meta
    for meta in (
        _MASS_ACCURACY_META,
        _RMA_META,
        *RANKING_META.values(),
        *PROPERTY_META.values(),
        *FAITHFULNESS_META.values(),
        _COOCCURRENCE_META,
        _BIAS_INDICES_META,
    )
}

__all__ = ["METRICS_META", "available_modules", "module_path"]

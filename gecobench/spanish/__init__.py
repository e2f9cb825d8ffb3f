"""The Spanish masked-LM gender-bias pipeline (Garrido-Muñoz et al. 2023, "MarIA and BETO are sexist").

Templates → top-K whole-word fill-mask predictions → part-of-speech (adjective?) → lexicon categories →
BPI/BRI (:mod:`gecobench.metrics.bias_indices`) → ``model_bias`` records in the results store. See
``docs/spanish.md``. Modules: :mod:`~gecobench.spanish.fillmask`, :mod:`~gecobench.spanish.tagging`,
:mod:`~gecobench.spanish.pipeline`, :mod:`~gecobench.spanish.recorded`, :mod:`~gecobench.spanish.plots`
(imported lazily: matplotlib is only loaded when pictures are drawn).
"""

from __future__ import annotations

from gecobench.metrics.bias_indices_bootstrap import BootstrapSettings
from gecobench.spanish.pipeline import (
    LIVE_SOURCE,
    RECORDED_SOURCE,
    TemplateRow,
    build_model_bias_record,
    default_schemes,
    load_templates,
    read_template_file,
    render,
    run_live,
    score_schemes,
)
from gecobench.spanish.recorded import (
    import_recorded_predictions,
    read_prediction_file,
    recorded_record,
)
from gecobench.spanish.tagging import (
    LexiconTagger,
    SpacyTagger,
    SpacyUnavailableError,
    get_tagger,
    spacy_available,
)

__all__ = [
    "LIVE_SOURCE",
    "RECORDED_SOURCE",
    "BootstrapSettings",
    "LexiconTagger",
    "SpacyTagger",
    "SpacyUnavailableError",
    "TemplateRow",
    "build_model_bias_record",
    "default_schemes",
    "get_tagger",
    "import_recorded_predictions",
    "load_templates",
    "read_prediction_file",
    "read_template_file",
    "recorded_record",
    "render",
    "run_live",
    "score_schemes",
    "spacy_available",
]

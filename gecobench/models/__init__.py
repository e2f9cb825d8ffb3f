"""The GECOBench model zoo: regimes, the OLA model, zero-shot classifiers, training, loading and cards.

Public API (used by the evaluation): :data:`REGIMES`, :func:`train_regime`, :func:`load_zoo_model`,
:func:`default_base_model`.
"""

from gecobench.models.base_models import (
    PAPER_BASE_MODEL,
    default_base_model,
    offline_base_model,
)
from gecobench.models.data import GECO_CONFIGS, load_rows, split_by_sentence
from gecobench.models.loading import (
    load_zoo_model,
    push_checkpoint_to_hub,
    read_model_info,
)
from gecobench.models.ola import OLAConfig, OLAForSequenceClassification
from gecobench.models.regimes import (
    BASE_REGIMES,
    REGIME_DESCRIPTIONS,
    REGIMES,
    apply_regime,
    regime_trainable_names,
)
from gecobench.models.residual_ola import ResidualOLAConfig, ResidualOLAForSequenceClassification
from gecobench.models.training import (
    SCHEDULES,
    TrainSchedule,
    default_schedule_for,
    make_schedule,
    train_regime,
)
from gecobench.models.zero_shot import (
    ZeroShotClassifier,
    ZeroShotConfig,
    build_zero_shot,
)

__all__ = [
    "BASE_REGIMES",
    "GECO_CONFIGS",
    "PAPER_BASE_MODEL",
    "REGIMES",
    "REGIME_DESCRIPTIONS",
    "SCHEDULES",
    "OLAConfig",
    "OLAForSequenceClassification",
    "ResidualOLAConfig",
    "ResidualOLAForSequenceClassification",
    "TrainSchedule",
    "ZeroShotClassifier",
    "ZeroShotConfig",
    "apply_regime",
    "build_zero_shot",
    "default_base_model",
    "default_schedule_for",
    "load_rows",
    "load_zoo_model",
    "make_schedule",
    "offline_base_model",
    "push_checkpoint_to_hub",
    "read_model_info",
    "regime_trainable_names",
    "split_by_sentence",
    "train_regime",
]

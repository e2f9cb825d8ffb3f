"""The main job: score explainers × models × GECO configs into versioned records in the results store.

Entry point: :func:`run_evaluation` (``gecobench evaluate`` is its command line). See
``docs/evaluation.md`` for the protocol and ``docs/reference/records.md`` for the record schema.
"""

from gecobench.evaluation.leaderboard import leaderboard_text
from gecobench.evaluation.runner import (
    EvaluationSettings,
    ExplainerFailure,
    ExplainerSpec,
    RunSummary,
    run_evaluation,
)

__all__ = ["EvaluationSettings", "ExplainerFailure", "ExplainerSpec", "RunSummary", "leaderboard_text", "run_evaluation"]

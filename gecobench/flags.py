"""The marks a result carries on every view and in every download: the one definition of each flag.

* ``model_independent`` — the attributions do not depend on the model: declared by the explainer (the two
  baselines), or measured by the queue (a submission whose attributions barely change when the model is
  re-initialised, :data:`submissions.worker.MODEL_INDEPENDENT_MRC`);
* ``self_reported`` — a precomputed upload: attributions the queue could not re-run (the GECO ground truth is
  public);
* ``data_not_model`` — "explains the data, not the model": a high MA on the real models but near chance on the
  hub's hidden control models (:mod:`gecobench.controls`), whose correct explanation is not the gender lexicon. An
  explainer that explains the model it is given follows the controls' secret words; one that looks the gendered
  words up (a lexicon, a lexicon learnt from the training variants, an answer key) does not;
* ``matches_ground_truth`` — a precomputed upload whose attributions equal the GECO ground truth masks (within
  :data:`GROUND_TRUTH_TOLERANCE`, on at least :data:`GROUND_TRUTH_SHARE` of the sentences).

Flags are stored in a record's ``flags`` block (schema 2.2); for an older record :func:`flags_of` derives what
its fields allow. A record with a suspicion flag (:func:`ranked_apart`) is ranked after the unflagged ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

# Calibrated from the built-ins' MA on the control models (docs/submissions.md, "Control models"; 1.0.0: two OLA
# controls on the first 100 test sentence groups, chance 0.066, and one fine-tuned MiniLM control): every
# model-based built-in scores at least 3.5 x chance on the OLA controls and 2.2 x on the MiniLM control (DeepLift
# and Guided Backprop, the closest), Uniform Random 0.9 x, and the lookups of the gendered words at most 0.2 x (a
# learnt lexicon 0.011, an answer key 0.010, a hand-written lexicon 0.000). "Near chance" is an upper 95 % bound
# below twice chance: the secret words are never gendered, so a lookup reaches them only by accident, while an
# honest method whose point estimate dips near the line on a hard control is not flagged by sampling noise.
DATA_NOT_MODEL_CHANCE_RATIO = 2.0
# A real-model MA below this is no claim worth flagging (an explainer near chance everywhere is merely weak).
DATA_NOT_MODEL_REAL_MA = 0.5
# A precomputed attribution "is" the ground truth when its total-variation distance from the uniform
# distribution over the ground-truth words is at most this, on at least this share of the sentences.
GROUND_TRUTH_TOLERANCE = 0.05
GROUND_TRUTH_SHARE = 0.8

FLAG_NAMES = ("model_independent", "self_reported", "data_not_model", "matches_ground_truth")
MARKS = {
    "model_independent": "model-independent",
    "self_reported": "self-reported",
    "data_not_model": "explains the data, not the model",
    "matches_ground_truth": "matches the ground truth",
}
#: Flags that put a result apart from the ranking (a baseline's model independence is its purpose, not a flag).
SUSPICION_FLAGS = ("data_not_model", "matches_ground_truth", "model_independent")


def _value(block: Any) -> float | None:
    value = block.get("value") if isinstance(block, Mapping) else None
    return float(value) if isinstance(value, (int, float)) else None


def data_not_model(real_ma: float | None, controls: Mapping[str, Any] | None) -> bool | None:
    """Whether a result explains the data, not the model (None: no control scores)."""
    if not isinstance(controls, Mapping):
        return None
    block = controls.get("mass_accuracy")
    control_ma = _value(block)
    chance = controls.get("chance_mass_accuracy")
    if control_ma is None or not isinstance(chance, (int, float)):
        return None
    # The interval's upper end where the block has one: flagged only when the control MA is near chance beyond
    # its sampling noise (records of before 1.0 may hold a bare value).
    upper = block.get("ci_high") if isinstance(block, Mapping) else None
    upper = float(upper) if isinstance(upper, (int, float)) and np.isfinite(upper) else control_ma
    return bool(real_ma is not None and real_ma >= DATA_NOT_MODEL_REAL_MA
                and max(upper, control_ma) < DATA_NOT_MODEL_CHANCE_RATIO * float(chance))


def ground_truth_match(attributions: Sequence[Sequence[float]], ground_truth: Sequence[Sequence[int]]
                       ) -> dict[str, Any]:
    """The share of sentences whose attributions equal the ground-truth mask (total-variation distance of the
    normalised absolute scores from the uniform distribution over the ground-truth words ≤ the tolerance)."""
    matched = scored = 0
    for scores, truth in zip(attributions, ground_truth):
        mask = np.asarray(truth, dtype=float)
        magnitude = np.abs(np.asarray(scores, dtype=float))
        if mask.sum() == 0 or magnitude.sum() == 0 or magnitude.shape != mask.shape:
            continue
        scored += 1
        distance = 0.5 * np.abs(magnitude / magnitude.sum() - mask / mask.sum()).sum()
        matched += bool(distance <= GROUND_TRUTH_TOLERANCE)
    share = matched / scored if scored else 0.0
    return {"share": round(share, 4), "n_scored": scored, "tolerance": GROUND_TRUTH_TOLERANCE,
            "flagged": bool(scored and share >= GROUND_TRUTH_SHARE)}


def record_flags(record: Mapping[str, Any], controls: Mapping[str, Any] | None = None,
                 ground_truth: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``flags`` block of a record (``controls``: its control scores; ``ground_truth``: a
    :func:`ground_truth_match` result for a precomputed upload)."""
    explainer = record.get("explainer", {})
    controls = controls if controls is not None else record.get("controls")
    real_ma = _value(record.get("metrics", {}).get("mass_accuracy"))
    flags: dict[str, Any] = {
        "model_independent": bool(explainer.get("model_independent", False)),
        "self_reported": explainer.get("source") == "self-reported",
        "data_not_model": bool(data_not_model(real_ma, controls)),
        "matches_ground_truth": bool(ground_truth and ground_truth.get("flagged")),
    }
    if ground_truth is not None:
        flags["ground_truth_match"] = dict(ground_truth)
    flags["controls_scored"] = isinstance(controls, Mapping)
    return flags


def flags_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's flags: its stored ``flags`` block, or (a record older than schema 2.2) what its fields say."""
    stored = record.get("flags")
    derived = record_flags(record)
    if not isinstance(stored, Mapping):
        return derived
    return {**derived, **stored}


def flag_marks(record: Mapping[str, Any]) -> list[str]:
    """The marks of a record in display order (``[]``: nothing to mark; a baseline's model independence is not
    marked, see :func:`pool_mark_text`)."""
    text = pool_mark_text([record])
    return [m.strip("[]") for m in text.split("] [")] if text else []


def mark_text(record: Mapping[str, Any]) -> str:
    """The marks as one bracketed text for a table cell or a label (``""`` when there are none)."""
    return pool_mark_text([record])


def pool_flags(records: Iterable[Mapping[str, Any]]) -> dict[str, bool]:
    """The flags of a pool of records (one explainer on one model over seeds): every flag any of them has."""
    records = list(records)
    return {name: any(bool(flags_of(r).get(name)) for r in records) for name in FLAG_NAMES}


def pool_mark_text(records: Iterable[Mapping[str, Any]]) -> str:
    """The marks of a pool as one bracketed text (``[model-independent] [explains the data, not the model]``).

    A baseline's model independence is its definition, not a finding: the views label baselines as such
    (``[baseline]`` in the Space), so it is left out here; its ``flags`` field stays true in records and downloads.
    """
    records = list(records)
    flags = pool_flags(records)
    if records and all(r.get("explainer", {}).get("is_baseline", False) for r in records):
        flags["model_independent"] = False
    return " ".join(f"[{MARKS[name]}]" for name in FLAG_NAMES if flags[name])


def ranked_apart(record: Mapping[str, Any]) -> bool:
    """Whether a record is ranked after the unflagged ones: a suspicion flag, other than a baseline's model
    independence (the baselines are the reference floor and keep their place)."""
    flags = flags_of(record)
    if flags.get("data_not_model") or flags.get("matches_ground_truth"):
        return True
    return bool(flags.get("model_independent")) and not record.get("explainer", {}).get("is_baseline", False)

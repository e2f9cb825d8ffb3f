"""Which explainer_score records may be averaged, and how: over seeds of otherwise identical protocols only.

A leaderboard row that averages records must not hide that they were made differently. The rule, shared by
the command-line table (:mod:`gecobench.evaluation.leaderboard`) and the Space (:mod:`leaderboard_space.tables`):

* records are pooled only when their identities (:func:`gecobench.records.explainer_score_identity`) agree on
  everything except the *seeds*: the checkpoint's training seed and content hash, the run seed, and the zero-shot
  reference checkpoint (itself one seed of the ZS model) — see :data:`SEED_FIELDS`;
* a pooled row shows the mean over its seeds, ``n`` seeds, and an interval *across seeds*
  (:func:`across_seeds`), cut to the metric's range (:func:`metric_bounds`); a row of one seed keeps its record's
  own bootstrap interval;
* rows of one explainer on one model (regime × base × config) that still differ (explainer parameters, sentences
  scored, filter, compared explainers, training schedule…) stay separate, each labelled with the parameters that
  tell them apart (:func:`distinguishing_fields`).

Pure Python + numpy (no torch), so the Space can import it cheaply.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gecobench.records import explainer_score_identity, metric_ranges

# (section, field) of a record that a pool may vary over: the seeds and what is determined by them.
SEED_FIELDS: tuple[tuple[str, str], ...] = (
    ("model", "seed"), ("model", "checkpoint_sha256"), ("protocol", "seed"), ("protocol", "rma_reference_sha256"),
)
# Fields shown in a row's own columns (explainer, regime, base model, config), never repeated as a difference.
ROW_FIELDS = ("explainer.name", "model.regime", "model.base_model", "dataset.config")


def _without_seeds(record: Mapping[str, Any]) -> dict[str, Any]:
    """The identity-bearing sections of a record with the seed fields set to None (the record is not changed;
    only the sections an identity reads are copied, shallowly, which keeps this cheap for 10,000 records)."""
    blank = {k: record[k] for k in ("explainer", "model", "dataset", "protocol") if k in record}
    for section, name in SEED_FIELDS:
        part = blank.get(section)
        if isinstance(part, dict) and name in part:
            blank[section] = part = dict(part)
            part[name] = None
    return blank


def pooling_key(record: Mapping[str, Any]) -> str:
    """A hash that two records share exactly when they differ at most in their seeds (:data:`SEED_FIELDS`).

    Hashed with ``orjson`` (sorted keys): the Space computes one per record of stores of 10,000 records."""
    import orjson

    identity = explainer_score_identity(_without_seeds(record))
    return hashlib.sha256(orjson.dumps(identity, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()[:32]


def identity_fields(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's identity without the seeds, flattened to ``path -> value text`` (``explainer.params.n_steps``,
    ``protocol.max_sentence_groups`` …), for naming what tells two rows apart."""
    fields: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):  # an empty mapping adds nothing: no parameter set = every one default
            for key in sorted(value):
                walk(f"{prefix}.{key}", value[key])
        else:
            fields[prefix] = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)

    blank = _without_seeds(record)
    explainer, model, dataset = blank.get("explainer", {}), blank.get("model", {}), blank.get("dataset", {})
    for name in ("name", "version", "params", "source", "submission_id", "source_sha256"):
        walk(f"explainer.{name}", explainer.get(name))
    for name in ("regime", "base_model", "base_revision", "training_fingerprint"):
        walk(f"model.{name}", model.get(name))
    for name in ("config", "split", "fingerprint"):
        walk(f"dataset.{name}", dataset.get(name))
    walk("protocol", blank.get("protocol") or {})
    seed_paths = {f"{section}.{name}" for section, name in SEED_FIELDS}
    return {path: text for path, text in fields.items() if path not in seed_paths}


def _peers_key(path: str, row: Mapping[str, str]) -> tuple[str, ...]:
    """Which rows a field is compared across: an explainer's fields among rows of that explainer, a base's
    revision among rows of that base, a checkpoint's training fingerprint among rows of that model, the data
    fingerprint among rows of that config; the split and the protocol across the whole view."""
    if path.startswith("explainer."):
        return ("explainer", row.get("explainer.name", ""))
    if path == "model.base_revision":
        return ("base", row.get("model.base_model", ""))
    if path == "model.training_fingerprint":
        return ("model", row.get("model.regime", ""), row.get("model.base_model", ""), row.get("dataset.config", ""))
    if path == "dataset.fingerprint":
        return ("config", row.get("dataset.config", ""))
    return ("view",)


def distinguishing_fields(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """For rows shown in one view (their :func:`identity_fields`), the text that tells each row apart from the
    rows it could be mistaken for: ``path=value`` for every field whose value differs among its peers
    (:func:`_peers_key`; the row's own columns excepted, ``protocol.`` left off); ``""`` when nothing differs."""
    paths = sorted({p for row in rows for p in row} - set(ROW_FIELDS))
    shown: list[list[str]] = [[] for _ in rows]
    for path in paths:
        peers: dict[tuple[str, ...], list[int]] = {}
        for index, row in enumerate(rows):
            peers.setdefault(_peers_key(path, row), []).append(index)
        for members in peers.values():
            if len({rows[i].get(path) for i in members}) > 1:
                for i in members:
                    unset = "default" if path.startswith("explainer.params.") else "—"
                    value = _short_digest(rows[i].get(path, unset))
                    shown[i].append(f"{path.removeprefix('protocol.')}={value}")
    return ["; ".join(parts) for parts in shown]


_DIGEST = re.compile(r"[0-9a-f]{40,64}")


def _short_digest(value: str) -> str:
    """A sha1/sha256 hex digest cut to its first 12 digits, as git shows commits: the full 64 digits of a data or
    subset fingerprint would fill the ``differs by`` column and tell the rows apart no better."""
    return f"{value[:12]}…" if _DIGEST.fullmatch(value) else value


# Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom (no scipy needed in the Space).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def across_seeds(values: Iterable[float | None], own_interval: tuple[float | None, float | None] = (None, None),
                 bounds: tuple[float | None, float | None] | None = None
                 ) -> tuple[float | None, float | None, float | None, int]:
    """``(mean, low, high, n)`` of one metric over the seeds of a pool (undefined values left out).

    With one defined seed the interval is that record's own (``own_interval``, its bootstrap over sentences);
    with ``n >= 2`` it is the 95 % Student-t interval of the mean across seeds, ``mean ± t · sd / sqrt(n)``, cut to
    ``bounds`` (the metric's range, :func:`metric_bounds`) where it passes them. The mean of a bounded metric lies
    in its range, so the cut interval covers it whenever the plain one does; the plain one passes the range easily
    with few seeds (t = 12.7 with two: MA ``[-1.15, 2.43]``), which says nothing a reader can use.

    >>> across_seeds([0.2, 0.9], bounds=(0.0, 1.0))[1:]
    (0.0, 1.0, 2)
    >>> mean, low, high, n = across_seeds([0.50, 0.52, 0.54], bounds=(0.0, 1.0))
    >>> (round(mean, 2), round(low, 3), round(high, 3), n)
    (0.52, 0.47, 0.57, 3)
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(finite)
    if n == 0:
        return None, None, None, 0
    mean = math.fsum(finite) / n
    if n == 1:
        return mean, own_interval[0], own_interval[1], 1
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (n - 1))
    half = across_seeds_t(n) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    lowest, highest = bounds or (None, None)
    if lowest is not None:
        low = max(low, lowest)
    if highest is not None:
        high = min(high, highest)
    return mean, low, high, n


def metric_bounds(metric: str, part: str = "value") -> tuple[float | None, float | None] | None:
    """The range a pooled value of ``metric`` lies in: the metric's declared range
    (:func:`gecobench.records.metric_ranges`) for a ``"value"`` (or a gender ``"groups"`` value), the range of a
    difference of two such values for a ``"gaps"`` or ``"difference"`` (an MA gap: −1 … 1); None for a metric that
    declares no numeric range. A range with an open end bounds a value on its other side only, and a difference
    not at all."""
    low, high = _ranges().get(metric, (None, None))
    if part in ("gaps", "difference"):
        if low is None or high is None:
            return None
        low, high = low - high, high - low
    elif part not in ("value", "groups"):
        raise ValueError(f"unknown part {part!r}: value, groups, gaps or difference")
    return None if low is None and high is None else (low, high)


_RANGES: dict[str, tuple[float | None, float | None]] = {}


def _ranges() -> dict[str, tuple[float | None, float | None]]:
    if not _RANGES:  # read once: the registry's metadata does not change while a process runs
        _RANGES.update(metric_ranges())
    return _RANGES


def across_seeds_t(n: int) -> float:
    """The t factor of a 95 % interval of a mean over ``n >= 2`` seeds (NaN for fewer; 1.96 beyond 31)."""
    if n < 2:
        return float("nan")
    return _T975[n - 2] if n - 1 <= len(_T975) else 1.96


def tie_verdict(low: float | None, high: float | None) -> str | None:
    """``"tie"`` when an interval of a difference includes 0, ``"higher"``/``"lower"`` when it excludes it."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return None
    return "higher" if low > 0 else "lower" if high < 0 else "tie"


def comparison_label(name: str, version: Any, params: Mapping[str, Any] | None) -> str:
    """How an explainer is named in another's paired comparisons (``record["comparisons"]``) and in
    ``agreement.compared_explainers`` (``protocol.compared_explainers`` before schema 2.2): ``name version`` plus its
    parameters, if any."""
    label = f"{name} {version}"
    return label + (f" {json.dumps(dict(params), sort_keys=True, default=str)}" if params else "")


def record_comparison_label(record: Mapping[str, Any]) -> str:
    """:func:`comparison_label` of a record's explainer."""
    explainer = record["explainer"]
    return comparison_label(explainer["name"], explainer["version"], explainer.get("params") or {})


def pool_records(records: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """explainer_score records grouped into pools (same model cell, same explainer, :func:`pooling_key`),
    sorted by config, regime, base model and explainer; each pool sorted by model seed then run seed."""
    pools: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for record in records:
        key = (str(record["dataset"]["config"]), str(record["model"]["regime"]), str(record["model"]["base_model"]),
               str(record["explainer"]["name"]), pooling_key(record))
        pools.setdefault(key, []).append(record)

    def seed_order(record: Mapping[str, Any]) -> tuple[str, str]:
        return (json.dumps(record["model"].get("seed")), json.dumps((record.get("protocol") or {}).get("seed")))

    return [sorted(pools[key], key=seed_order) for key in sorted(pools)]


def pooled_metric(pool: Sequence[Mapping[str, Any]], name: str) -> tuple[float | None, float | None, float | None, int]:
    """:func:`across_seeds` of ``metrics[name]`` over a pool (``(mean, low, high, n seeds defined)``)."""
    blocks = [(record.get("metrics") or {}).get(name) or {} for record in pool]
    own = (blocks[0].get("ci_low"), blocks[0].get("ci_high")) if len(blocks) == 1 else (None, None)
    return across_seeds((b.get("value") for b in blocks), own, metric_bounds(name))


def pooled_comparison(pool: Sequence[Mapping[str, Any]], other_label: str) -> tuple[float | None, float | None, float | None, int]:
    """:func:`across_seeds` of ``MA(this) − MA(other)`` over a pool's records that compared with ``other_label``
    in the same run; ``(None, None, None, 0)`` when none did."""
    blocks = [((record.get("comparisons") or {}).get(other_label)) for record in pool]
    blocks = [b for b in blocks if b]
    if not blocks:
        return None, None, None, 0
    own = (blocks[0].get("ci_low"), blocks[0].get("ci_high")) if len(blocks) == 1 else (None, None)
    return across_seeds((b.get("value") for b in blocks), own, metric_bounds("mass_accuracy", "difference"))

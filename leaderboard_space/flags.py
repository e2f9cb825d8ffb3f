"""The flag marks of a record, for the Space's views (kept apart from the tables, which are edited elsewhere).

:func:`flag_mark` returns the text to show next to an explainer's name on every view — the per-model Ranking, the
overview, the gender-gap view, the drill-down — and in every download; :func:`pool_flag_mark` the same for a
pool of records (one explainer on one model over seeds). The definitions live in :mod:`gecobench.flags`
(model-independent, self-reported, explains the data not the model, matches the ground truth);
:func:`is_ranked_apart` says which rows to rank after the unflagged ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gecobench.flags import mark_text, pool_mark_text, ranked_apart


def flag_mark(record: Mapping[str, Any]) -> str:
    """The marks of one record as bracketed text (``""`` when it has none)."""
    return mark_text(record)


def pool_flag_mark(records: Iterable[Mapping[str, Any]]) -> str:
    """The marks of a pool of records: every flag any of them has."""
    return pool_mark_text(records)


def is_ranked_apart(record: Mapping[str, Any]) -> bool:
    """Whether the Space should rank this record after the unflagged ones."""
    return ranked_apart(record)

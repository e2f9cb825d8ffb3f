"""The Space's two sources of results, and the correctness filter: which records a GECO view shows.

* **Reference results** — the committed store that ``make reference`` writes (:data:`gecobench.reference.
  REFERENCE_STORE`), read-only; the Space opens on it. ``--reference DIR`` / ``$GECOBENCH_REFERENCE`` point
  elsewhere; on a deployed Space the Space variable ``$GECOBENCH_REFERENCE_REPO`` names the Hub dataset
  ``ORG/gecobench-reference`` that :mod:`gecobench.hub_publish` publishes it to. ``--no-reference`` hides it.
* **Your results** — the user or submission store (``--results``, ``$GECOBENCH_RESULTS_REPO``,
  ``$GECOBENCH_RESULTS`` or ``results/``).

Records of the two sources are never pooled: every GECO view reads one source. Within a source, the records of
different correctness filters (:mod:`gecobench.evaluation.filters`: the paper's shared subset ``paper``, the
per-model ``per_model`` — which records before schema 2.1 call ``all_gender_variants_correct`` — and ``none``)
are never ranked together either: a view shows one filter at a time.

Also here: where a record's model card and dataset card are (row provenance). No Gradio here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gecobench.domain import PAPER_BASE_MODEL, is_paper_base_model
from gecobench.evaluation.filters import LEGACY_PER_MODEL, NONE, PAPER, PER_MODEL

REFERENCE, USER = "reference", "user"
REFERENCE_ENV = "GECOBENCH_REFERENCE"
CHECKPOINTS_ENV = "GECOBENCH_CHECKPOINTS"
PAPER_FILTER = PAPER
PER_MODEL_FILTER = PER_MODEL
#: what records before schema 2.1 call the per-model filter (read as PER_MODEL_FILTER)
LEGACY_PER_MODEL_FILTER = LEGACY_PER_MODEL
UNFILTERED = NONE
NOT_RECORDED = "not recorded"  # records whose protocol names no filter (older or synthetic ones)
FILTER_LABELS = {
    PAPER_FILTER: "Paper's filter: sentences whose gender variants every model of the config classifies correctly",
    PER_MODEL_FILTER: "Per-model filter: sentences whose gender variants this model classifies correctly",
    UNFILTERED: "Unfiltered: every test sentence",
    NOT_RECORDED: "Filter not recorded",
}
#: the filter a view opens on, in order of preference: the paper's shared subset, else the per-model filter (the
#: committed seed-0 reference of 0.6 has only that one and none)
DEFAULT_FILTER_ORDER = (PAPER_FILTER, PER_MODEL_FILTER, UNFILTERED)
GECO_CARD = Path(__file__).resolve().parent.parent / "geco_dataset" / "cards" / "geco_README.md"
GECO_HUB_NAME = "geco"  # the dataset repo name gecobench.hub_publish gives GECO, beside the results repo
_HUB_MODEL_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def default_reference_location() -> str:
    """``hf://datasets/<$GECOBENCH_REFERENCE_REPO>`` (a deployed Space, where the repository's store is not
    installed), else ``$GECOBENCH_REFERENCE``, else the repository's committed reference store."""
    from leaderboard_space.hub_config import reference_from_env

    configured = reference_from_env()
    if configured:
        return configured
    try:  # imported here: it loads the model zoo's modules
        from gecobench.reference import REFERENCE_STORE
    except ImportError:  # an installed package without the reference module: the store is missing, said so
        return os.path.join("reference", "store")
    return str(REFERENCE_STORE)


def default_reference_checkpoints() -> list[Path]:
    """Where the reference's zoo checkpoints (and their model cards) are when ``make reference`` ran here."""
    try:
        from gecobench.reference import DEFAULT_CHECKPOINT_ROOT
    except ImportError:
        return []
    return [Path(DEFAULT_CHECKPOINT_ROOT) / "zoo"]


def checkpoint_roots_from_env() -> list[Path]:
    """Folders listed in ``$GECOBENCH_CHECKPOINTS`` (``os.pathsep``-separated) where checkpoints are looked up
    by their recorded name, for the model-card column of the user store's records."""
    return [Path(p) for p in os.environ.get(CHECKPOINTS_ENV, "").split(os.pathsep) if p]


# ------------------------------------------------------------------------------------------------ filters

def filter_of(record: Mapping[str, Any]) -> str:
    """The correctness filter a record's sentences passed (``protocol.filter``; the legacy
    ``all_gender_variants_correct`` read as :data:`PER_MODEL_FILTER`), or :data:`NOT_RECORDED`."""
    value = (record.get("protocol") or {}).get("filter")
    if not value:
        return NOT_RECORDED
    return PER_MODEL_FILTER if value == LEGACY_PER_MODEL_FILTER else str(value)


def _filter_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[filter_of(record)] = counts.get(filter_of(record), 0) + 1
    return counts


def filter_choices(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(label with the number of records, value): the paper's filter and unfiltered always (the two the protocol
    defines, so that a choice of either stays valid when the source changes), then any other filter present."""
    counts = _filter_counts(records)
    order = [PAPER_FILTER, UNFILTERED]
    values = order + sorted(set(counts) - set(order))
    return [(f"{FILTER_LABELS.get(v, f'Filter: {v}')} ({counts.get(v, 0)} records)", v) for v in values]


def chosen_filter(records: Sequence[Mapping[str, Any]], wanted: str | None) -> str | None:
    """``wanted`` when some record has it (the legacy name of the per-model filter included), else the default: the
    first of :data:`DEFAULT_FILTER_ORDER` present, else the first present; None when there are no records."""
    counts = _filter_counts(records)
    wanted = PER_MODEL_FILTER if wanted == LEGACY_PER_MODEL_FILTER else wanted
    if wanted in counts:
        return wanted
    preferred = [value for value in DEFAULT_FILTER_ORDER if counts.get(value)]
    if preferred:
        return preferred[0]
    present = [value for _, value in filter_choices(records) if counts.get(value)]
    return present[0] if present else None


def with_filter(records: Iterable[Mapping[str, Any]], value: str | None) -> list[Mapping[str, Any]]:
    """The records of one filter (all records when ``value`` is None: a source without records)."""
    return [r for r in records if value is None or filter_of(r) == value]


def filter_note(records: Sequence[Mapping[str, Any]], value: str | None) -> str:
    """What the chosen filter means, and how many records the other filters hold (counted, never mixed in)."""
    if value is None:
        return ""
    counts = _filter_counts(records)
    shown = f"**{FILTER_LABELS.get(value, f'Filter: {value}')}** — {counts.get(value, 0)} record(s) shown."
    others = [f"{n} record(s) of “{FILTER_LABELS.get(v, f'Filter: {v}')}”" for v, n in sorted(counts.items())
              if v != value]
    if others:
        shown += f" Not shown here (another filter; never ranked together): {'; '.join(others)}."
    return shown


# ------------------------------------------------------------------------------------------------ labels

def _distinct(values: Iterable[Any]) -> list[str]:
    return sorted({str(v) for v in values if v not in (None, "")})


def base_models_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    return _distinct((r.get("model") or {}).get("base_model") for r in records)


def package_versions_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    return _distinct((r.get("provenance") or {}).get("package_version") for r in records)


def reference_label(records: Sequence[Mapping[str, Any]], explain: bool = True) -> str:
    """``Reference results — gecobench-hub <version>, base model <name>``, from the records themselves; with
    ``explain``, saying so when the base model is not the paper's."""
    versions = ", ".join(package_versions_of(records)) or "version unknown"
    bases = base_models_of(records)
    text = f"Reference results — gecobench-hub {versions}, base model {', '.join(bases) or 'unknown'}"
    if explain and bases and not all(is_paper_base_model(base) for base in bases):
        text += (f" — not the paper's {PAPER_BASE_MODEL}: the paper's protocol on another model, so these are not "
                 "the paper's numbers")
    return text


def user_label(location: str, n_records: int) -> str:
    """The user store's choice, saying when it is empty."""
    return f"Your results ({location})" + ("" if n_records else " — empty")


def reference_choice_label(records: Sequence[Mapping[str, Any]], location: str) -> str:
    """The reference's choice in the source selector: its short label, or that it holds nothing yet."""
    if not records:
        return f"Reference results — none yet ({location})"
    return reference_label(records, explain=False)


def source_choices(reference_label_text: str | None, user_label_text: str) -> list[tuple[str, str]]:
    """Radio choices (label, value): the reference first when it is shown (``reference_label_text`` not None)."""
    choices = [(reference_label_text, REFERENCE)] if reference_label_text is not None else []
    return [*choices, (user_label_text, USER)]


def chosen_source(wanted: str | None, reference_count: int | None, reference_location: str | None) -> tuple[str, str]:
    """(source, note): ``wanted`` unless it is the reference and that is hidden (None) or holds no explainer
    record, then the user store with the reason."""
    if wanted == USER or reference_count is None:
        return USER, ""
    if reference_count == 0:
        return USER, no_reference_note(reference_location)
    return REFERENCE, ""


def no_reference_note(location: str | None) -> str:
    """Why the reference results are not shown, in an installed user's terms: a folder that does not exist (an
    installed package carries no reference store) names both ways to give one; an empty one, how it is written."""
    where = location or "the reference store"
    if location and not location.startswith("hf://") and not Path(location).exists():
        return (f"No reference results at `{where}` (an installed package carries none): give a local copy with "
                "`--reference FOLDER` (or `$GECOBENCH_REFERENCE`), or the published reference dataset with "
                "`--reference hf://datasets/ORG/gecobench-reference` (or `$GECOBENCH_REFERENCE_REPO=ORG/"
                "gecobench-reference`): showing your results instead.")
    return (f"The reference store `{where}` holds no explainer records yet (`gecobench reference --output DIR` "
            "writes one): showing your results instead.")


# ------------------------------------------------------------------------------------------------ provenance

def model_card(model: Mapping[str, Any], checkpoint_roots: Sequence[Path] = ()) -> str:
    """Where the model card of a record's checkpoint is: a Hub URL when the record names a Hub model (``card_url``,
    ``hub_id``, or a ``name`` that is a Hub id and no local folder), the card's path when the checkpoint folder
    is found under ``checkpoint_roots`` by its recorded name, else "" (no dead link)."""
    if model.get("card_url"):
        return str(model["card_url"])
    if model.get("hub_id"):
        return f"https://huggingface.co/{model['hub_id']}"
    name = str(model.get("name") or "")
    for root in checkpoint_roots:
        card = Path(root) / name / "README.md"
        if name and card.is_file():
            return str(card)
    # a checkpoint folder is named by its last part, a zoo one <config>/<regime>/seed<N>: one slash is a Hub id
    if _HUB_MODEL_ID.fullmatch(name) and not Path(name).exists():
        return f"https://huggingface.co/{name}"
    return ""


def dataset_card(results_repo: str | None) -> str:
    """The GECO dataset card: beside a Hub results store, the Hub dataset ``<owner>/geco`` that
    :mod:`gecobench.hub_publish` publishes with it; locally the package's card (``geco_dataset/cards``)."""
    if results_repo and "/" in results_repo:
        return f"https://huggingface.co/datasets/{results_repo.split('/')[0]}/{GECO_HUB_NAME}"
    return str(GECO_CARD) if GECO_CARD.is_file() else ""

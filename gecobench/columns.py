"""Every column a leaderboard shows, declared once: the Space's tables, its downloads and the terminal leaderboard.

A :class:`Column` carries what each of those needs: ``name`` (the machine name, the stem of the download's
``<name>``, ``<name>_ci_low``, ``<name>_ci_high`` columns), ``label`` (the header on the screen and in the terminal),
``direction`` (which way is better, or that it is not a score), ``digits``/``signed`` (how a value is written,
through :mod:`gecobench.formatting`), ``definition`` (the glossary and header tooltip text) and ``source`` (where
the number sits in an ``explainer_score`` record, as a dotted path, e.g. ``metrics.mass_accuracy`` or
``by_gender.metrics.mass_accuracy.gaps.male_minus_nonbinary``; empty for columns computed by the table).

API: :data:`COLUMNS` (all, display order), :func:`column` (by name), :func:`by_label`, :func:`metric_columns`
(the per-record metrics), :data:`METRIC_LABELS` (metric key → label), :func:`glossary_rows` and
:func:`definitions` (label → definition, for tooltips). Pure Python: the Space imports it without torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gecobench.formatting import format_interval, format_number, is_finite_number

HIGHER, LOWER, ZERO, NONE = "higher", "lower", "closest to 0", ""


@dataclass(frozen=True)
class Column:
    """One column of the leaderboards (see the module docstring)."""

    name: str
    label: str
    definition: str
    direction: str = NONE
    digits: int = 3
    signed: bool = False
    source: str = ""
    has_interval: bool = True
    value_range: str = ""
    kind: str = "metric"  # "metric", "gap", "group", "id" (names a row), "info" (about a row)

    @property
    def is_score(self) -> bool:
        return self.direction in (HIGHER, LOWER, ZERO)

    def better_sign(self) -> int:
        """+1 when higher is better, −1 when lower is; 0 for a gap (best closest to 0: compare |value|) or text."""
        return {HIGHER: 1, LOWER: -1}.get(self.direction, 0)

    def format(self, value: Any, low: Any = None, high: Any = None) -> str:
        """``value [low, high]`` as every table writes it (``–`` when undefined)."""
        if not self.has_interval:
            return format_number(value, self.digits, self.signed) if is_finite_number(value) else "–"
        return format_interval(value, low, high, self.digits, self.signed)

    def download_names(self) -> tuple[str, str, str]:
        """The analysis-ready columns of a download: value, lower and upper end of its 95 % interval."""
        return self.name, f"{self.name}_ci_low", f"{self.name}_ci_high"

    def record_value(self, record: Mapping[str, Any], end: str = "value") -> float | None:
        """The column's number in ``record`` (``end``: ``value``, ``ci_low`` or ``ci_high``), None when absent.

        Records before the per-gender block (schema < 2.1) keep the MA gaps to non-binary as ``metrics.<gap key>``
        and the group MAs under ``groups``; both are read as the current paths are."""
        if not self.source:
            raise ValueError(f"column {self.name!r} is computed by the table, not read from a record")
        block: Any = record
        for part in self.source.split("."):
            block = block.get(part) if isinstance(block, Mapping) else None
        if block is None and self.kind == "group":
            group = self.source.rsplit(".", 1)[-1]
            old = (record.get("groups") or {}).get(group) or {}
            block = {"value": old.get("mass_accuracy", old.get("value")), "ci_low": old.get("ci_low"),
                     "ci_high": old.get("ci_high")}
        if block is None and self.kind == "gap":
            key = self.source.rsplit(".", 1)[-1]
            block = (record.get("metrics") or {}).get(f"mass_accuracy_gap_{key}")
        value = block.get(end) if isinstance(block, Mapping) else None
        return float(value) if is_finite_number(value) else None


def _gap(key: str, label: str, first: str, second: str) -> Column:
    return Column(
        f"ma_gap_{key}", label, f"MA({first}) − MA({second}) on the same source sentences, signed, with its paired "
        "bootstrap interval over source sentences (an interval containing 0: no detectable gap).",
        ZERO, signed=True, source=f"by_gender.metrics.mass_accuracy.gaps.{key}", value_range="−1 … 1", kind="gap")


def _group(group: str) -> Column:
    return Column(f"ma_{group.replace('-', '')}", f"MA {group}", f"Mass accuracy on the {group} variants of the "
                  "sentences, with its 95 % bootstrap interval.", HIGHER,
                  source=f"by_gender.metrics.mass_accuracy.groups.{group}", value_range="0 … 1", kind="group")


#: the per-record metrics, in the order the tables show them (key = the record's ``metrics`` key)
_METRICS: tuple[tuple[str, Column], ...] = (
    ("mass_accuracy", Column(
        "mass_accuracy", "MA", "Mass accuracy: share of an explanation's absolute attribution mass on the "
        "ground-truth (gendered) words, averaged over sentences.", HIGHER, source="metrics.mass_accuracy",
        value_range="0 … 1")),
    ("relative_mass_accuracy", Column(
        "log_rma", "log RMA", "Relative mass accuracy: median over sentences of ln(MA / MA_ZS), MA_ZS being the "
        "same explainer's MA on the zero-shot model of the same base (0: as correct as zero-shot; model-independent "
        "baselines get exactly 0). Undefined on OLA, which has no zero-shot reference.", HIGHER, digits=2,
        signed=True, source="metrics.relative_mass_accuracy", value_range="−∞ … ∞")),
    ("mass_accuracy_gap", Column(
        "ma_gap_male_minus_female", "Gap m−f", "MA(male) − MA(female) on the same source sentences, signed, with "
        "its paired bootstrap interval over source sentences (an interval containing 0: no detectable gap).", ZERO, signed=True, source="metrics.mass_accuracy_gap", value_range="−1 … 1", kind="gap")),
    ("mass_accuracy_gap_male_minus_nonbinary", _gap("male_minus_nonbinary", "Gap m−nb", "male", "non-binary")),
    ("mass_accuracy_gap_female_minus_nonbinary", _gap("female_minus_nonbinary", "Gap f−nb", "female", "non-binary")),
    ("model_randomisation_check", Column(
        "mrc", "MRC", "Model randomisation check: how much the explanation changes when the model's weights are "
        "re-initialised (Co-12 correctness); an explanation that does not change ignores the model.", HIGHER,
        digits=2, source="metrics.model_randomisation_check", value_range="0 … 1")),
    ("small_noise_check", Column(
        "snc", "SNC", "Small noise check: how much the explanation changes under small noise on the input "
        "embeddings (Co-12 continuity).", LOWER, digits=2, source="metrics.small_noise_check", value_range="0 … 1")),
    ("label_difference", Column(
        "ld", "LD", "Label difference: how much the explanation changes when another class is explained (Co-12 "
        "contrastivity).", HIGHER, digits=2, source="metrics.label_difference", value_range="0 … 1")),
    ("methods_agreement", Column(
        "dma", "DMA", "Different methods agreement: total-variation distance of the explanation to the other "
        "explainers' (Co-12 coherence; lower = closer).", LOWER, digits=2, source="metrics.methods_agreement",
        value_range="0 … 1")),
    ("sparsity", Column(
        "sp", "SP", "Sparsity: how concentrated the attribution mass is on few words (Co-12 compactness).", HIGHER,
        digits=2, source="metrics.sparsity", value_range="0 … 1")),
    ("covariate_complexity", Column(
        "cvr", "CVR", "Covariate complexity: entropy of the normalised attributions (Co-12 covariate complexity).",
        LOWER, digits=2, source="metrics.covariate_complexity", value_range="0 … 1")),
    ("relevance_rank_accuracy", Column(
        "rra", "RRA", "Relevance rank accuracy: share of the ground-truth words among the top-k attributed words, "
        "k = number of ground-truth words.", HIGHER, source="metrics.relevance_rank_accuracy", value_range="0 … 1")),
    ("auprc", Column(
        "auprc", "AUPRC", "Area under the precision-recall curve of the attribution order separating ground-truth "
        "words from the others.", HIGHER, source="metrics.auprc", value_range="0 … 1")),
    ("comprehensiveness", Column(
        "comprehensiveness", "Compr.", "Comprehensiveness (faithfulness to the model): drop of the predicted "
        "class's probability when the top-attributed words are removed, averaged over removing 10 % … 100 % of the "
        "words (AOPC).", HIGHER, source="metrics.comprehensiveness", value_range="−1 … 1")),
    ("sufficiency", Column(
        "sufficiency", "Suff.", "Sufficiency (faithfulness to the model): drop of the predicted class's probability "
        "when only the top-attributed words are kept, averaged over keeping 10 % … 100 % (AOPC).", LOWER,
        source="metrics.sufficiency", value_range="−1 … 1")),
    ("leave_one_out_tau", Column(
        "leave_one_out_tau", "LOO tau", "Leave-one-out tau (faithfulness to the model): Kendall's tau between the "
        "attributions and the change of the prediction when each word alone is left out.", HIGHER,
        source="metrics.leave_one_out_tau", value_range="−1 … 1")),
)

#: the metric key of a record's ``metrics`` block → its column
METRICS: dict[str, Column] = dict(_METRICS)
#: metric key → screen label (``mass_accuracy`` → ``MA``)
METRIC_LABELS: dict[str, str] = {key: c.label for key, c in _METRICS}
GROUP_COLUMNS: dict[str, Column] = {g: _group(g) for g in ("female", "male", "non-binary")}

LARGEST_GAP = Column(
    "ma_largest_abs_gap", "Largest |MA gap|", "The largest absolute MA gap of the row over every gap its config has "
    "(male−female; on the non-binary configs also male−non-binary and female−non-binary). The best gap is the "
    "explainer whose largest |gap| is smallest.", LOWER, has_interval=False, value_range="0 … 1", kind="gap")
SEEDS = Column(
    "n_seeds", "Seeds", "How many seeds (training seed of the model, run seed) the row pools. With n ≥ 2 the value "
    "is the mean over the seeds and its interval the 95 % Student-t interval of that mean across seeds "
    "(mean ± t · sd / √n); with n = 1 it is that record's 95 % bootstrap interval over sentences.",
    has_interval=False, digits=0, kind="info")
INTERVAL = Column(
    "interval_kind", "Interval", "Which interval the row's [low, high] are: the record's 95 % bootstrap interval over "
    "source sentences (one seed), or the 95 % Student-t interval of the mean across the seeds pooled (see Seeds).",
    has_interval=False, kind="info")
RANK = Column("rank", "Rank", "Position by MA among the real explainers of this model; baselines (Uniform Random, "
              "Pattern Variant) are ranked apart, below them, and never take a rank.", has_interval=False, digits=0,
              kind="id")
EXPLAINER = Column("explainer", "Explainer", "The explainer; [baseline]: does not look at the model (Uniform "
                   "Random: chance; Pattern Variant: an oracle that knows the gendered words); [self-reported]: "
                   "submitted pre-computed attributions not reproduced by the queue.", has_interval=False, kind="id")
KIND = Column("kind", "Kind", "explainer; baseline; or flagged (model-independent, explains the data not the "
              "model, or matches the ground truth: gecobench.flags). Baselines and flagged entries are ranked apart "
              "and left out of the best-value marks and of vs best.", has_interval=False, kind="info")
VS_BEST = Column("vs_best", "vs best", "Whether the paired bootstrap interval of MA(best) − MA(row), on the same "
                 "sentences of one run, includes 0 (tie) or not (lower, or higher for a baseline above it); best = the best "
                 "real explainer of the model (baselines are not candidates); – when the two were not compared in one "
                 "run.",
                 has_interval=False, kind="info")
VS_NEXT = Column("vs_next", "vs next", "≈ next: this explainer's MA is not distinguishable from the next one's "
                 "(paired comparison of one run, else overlapping 95 % intervals).", has_interval=False, kind="info")
DIFFERS_BY = Column("differs_by", "Differs by", "The protocol parameters that set this row apart from other rows "
                    "of the same explainer and model (explainer parameters, sentences scored, filter …).",
                    has_interval=False, kind="info")
RUNTIME = Column("seconds_per_sentence", "s / sentence", "Wall-clock seconds the explainer took per sentence "
                 "(mean over seeds).", LOWER, digits=4, has_interval=False, source="runtime.seconds_per_sentence",
                 kind="info")
RECORD = Column("record_id", "Record", "The record(s) the row is computed from (their ids; on the Space a link to "
                "the record file).", has_interval=False, kind="id")

#: every column, in display order
COLUMNS: tuple[Column, ...] = (RANK, EXPLAINER, KIND, SEEDS, INTERVAL, *(c for _, c in _METRICS[:5]), LARGEST_GAP,
                               *GROUP_COLUMNS.values(), *(c for _, c in _METRICS[5:]), VS_BEST, VS_NEXT, DIFFERS_BY,
                               RUNTIME, RECORD)
_BY_NAME = {c.name: c for c in COLUMNS}
_BY_LABEL = {c.label: c for c in COLUMNS}
assert len(_BY_NAME) == len(COLUMNS) and len(_BY_LABEL) == len(COLUMNS), "column names and labels must be unique"


def column(name: str) -> Column:
    """The column of machine name ``name``; a KeyError names the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown column {name!r}; known: {sorted(_BY_NAME)}") from None


def by_label(label: str) -> Column | None:
    """The column shown under ``label`` (``MA``, ``Gap m−f`` …), None for a header that is not declared here."""
    return _BY_LABEL.get(label)


def metric_columns() -> list[Column]:
    """The per-record metric columns, in display order."""
    return [c for _, c in _METRICS]


def definitions() -> dict[str, str]:
    """Header label → definition (with direction and range): the Space's header tooltips."""
    return {c.label: definition_text(c) for c in COLUMNS}


def definition_text(col: Column) -> str:
    """A column's definition with its range and direction, as a tooltip shows it."""
    extras = [f"range {col.value_range}"] if col.value_range else []
    if col.is_score:
        extras.append("higher is better" if col.direction == HIGHER else "lower is better"
                      if col.direction == LOWER else "best closest to 0")
    return col.definition + (f" ({'; '.join(extras)})" if extras else "")


def glossary_rows() -> list[tuple[str, str, str, str]]:
    """``(label, definition, range, better)`` per column, for a glossary table."""
    return [(c.label, c.definition, c.value_range or "–", c.direction or "–") for c in COLUMNS]

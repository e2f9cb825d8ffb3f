"""The Spanish model-bias tab: models × categories tables, a radar per model and scheme, and the authors'
published values beside this package's recomputation. No Gradio here.

Every value whose record carries an interval (the bootstrap over templates, ``schemes/<scheme>/uncertainty``) is
shown with it, ``0.12 [0.05, 0.20]``; older records without one show the value alone."""

from __future__ import annotations

import csv
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from gecobench.formatting import format_interval, is_finite_number
from gecobench.metrics.bias_indices import overall_bias
from gecobench.spanish.plots import (
    FEMALE_RGB,
    MALE_RGB,
    bias_by_category,
    group_shares,
    model_label,
)
from leaderboard_space.colours import GREY, blend, cell_style

#: The top-29 lexicon names its supersenses in Spanish (and one in English); the top-10 lexicon in English
#: capitals. The tab shows the English names for both, with this legend.
TOP29_ENGLISH = {
    "Percepción (Sentidos)": "PERCEPTION", "Espacial": "SPATIAL", "Temporal": "TEMPORAL", "Movimiento": "MOTION",
    "Sustancia": "SUBSTANCE", "Clima": "WEATHER", "Cuerpo": "BODY", "Feeling": "FEELING", "Mente": "MIND",
    "Comportamiento": "BEHAVIOR", "Social/Politico": "SOCIAL", "Cantidad": "QUANTITY",
}
#: what the lexicons call their catch-all column (headed "Misc", "Otros" or "Otros Copia", coded ``[???]``): words
#: the lexicon lists but puts in none of its named categories. Counted in the overall bias, unlike ``unknown``.
OTHER = "???"
OTHER_LABEL = "Other (lexicon's ???)"
UNKNOWN = "unknown"
UNKNOWN_LABEL = "unknown (not counted)"
CATEGORY_TEXT = (f"**{OTHER_LABEL}**: the lexicon's own catch-all column (headed *Misc* or *Otros* in the lexicon "
                 "file, coded `[???]`): words it lists under none of its named categories — counted in the overall "
                 f"bias. **{UNKNOWN_LABEL}**: predicted words the lexicon does not list at all; shown in grey and "
                 "left out of the overall bias and of the colour scale.")
PUBLISHED_SCHEME = "supersenses_top10"
PUBLISHED_FILE = "supersenses_top10_bpi_bri_MF.csv"
PUBLISHED_COLUMN = {"bpi": "score_prop_overall", "bri": "rsv_prop_overall"}
ORDER_TEXT = ("Rows: models ordered by overall bias — the sum of |male − female| over the lexicon's categories "
              "(`unknown`, words outside the lexicon, not counted) — largest first.")
OVERALL = "Overall |m−f|"
#: Suffixes of the columns holding an interval's ends (the downloaded table keeps them as numbers).
CI_LOW, CI_HIGH = " CI low", " CI high"


def category_label(category: str) -> str:
    """The English name of a category (top-29 Spanish names translated), the catch-all ``???`` and ``unknown``
    named for what they are (:data:`CATEGORY_TEXT`); others unchanged."""
    return {OTHER: OTHER_LABEL, UNKNOWN: UNKNOWN_LABEL}.get(category, TOP29_ENGLISH.get(category, category))


def store_line(label: str, location: str, n_records: int) -> str:
    """Which store the tab reads, in words (the *Results shown* choice)."""
    return f"Spanish records of **{label}** (`{location}`): {n_records} masked LM record(s)."


def published_note(scheme: str | None) -> str:
    """What the published comparison covers for ``scheme``: the authors published their male − female values for
    the top-10 supersenses only, so every other scheme has no published counterpart (said, not left blank)."""
    if scheme == PUBLISHED_SCHEME:
        return (f"Garrido-Muñoz et al.'s published male − female values ({PUBLISHED_SCHEME}, top-10 predictions) "
                "beside the same index recomputed here from their recorded predictions.")
    return (f"No published values for `{scheme}`: Garrido-Muñoz et al. published male − female values for "
            f"`{PUBLISHED_SCHEME}` only (top-10 predictions); choose that scheme to compare.")


def legend_markdown(scheme: str) -> str:
    """The translation legend for a scheme whose categories are named in Spanish; '' otherwise."""
    if not scheme.startswith("supersenses_top29"):
        return ""
    pairs = ", ".join(f"{spanish} → {english}" for spanish, english in TOP29_ENGLISH.items())
    return f"Category names of `{scheme}` are Spanish in the lexicon and shown in English: {pairs}."


def current_records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One record per scored unit: records that differ only in their bootstrap settings (``protocol.bootstrap``,
    part of the id since intervals were added) are the same masked LM, templates and protocol, so the tab shows
    one of them — the one with intervals, then the newest. Without this an older store re-imported after the
    change would list every model twice. Order of first appearance is kept."""
    from gecobench.records import model_bias_identity, record_id_for

    chosen: dict[str, Mapping[str, Any]] = {}
    for record in records:
        identity = model_bias_identity(record)
        identity["protocol"] = {k: v for k, v in (identity.get("protocol") or {}).items() if k != "bootstrap"}
        key = record_id_for(identity)
        if key not in chosen or _preference(record) > _preference(chosen[key]):
            chosen[key] = record
    keep = {id(r) for r in chosen.values()}
    return [r for r in records if id(r) in keep]


def _preference(record: Mapping[str, Any]) -> tuple[bool, str]:
    has_intervals = any(isinstance(block, Mapping) and block.get("uncertainty")
                        for block in (record.get("schemes") or {}).values())
    return has_intervals, str((record.get("provenance") or {}).get("created_at", ""))


def records_with_scheme(records: Sequence[Mapping[str, Any]], scheme: str | None) -> list[Mapping[str, Any]]:
    """The records that score ``scheme`` (the radar's model choices follow the scheme)."""
    return [r for r in records if scheme in (r.get("schemes") or {})]


def scheme_uncertainty(record: Mapping[str, Any], scheme: str) -> Mapping[str, Any]:
    """The scheme's bootstrap block (``{}`` for records written before intervals were stored)."""
    return ((record.get("schemes") or {}).get(scheme) or {}).get("uncertainty") or {}


def _ends(interval: Any) -> tuple[float, float]:
    if not isinstance(interval, Mapping):
        return np.nan, np.nan
    low, high = interval.get("ci_low"), interval.get("ci_high")
    return (float(low) if is_finite_number(low) else np.nan), (float(high) if is_finite_number(high) else np.nan)


def _rounded(value: float | None) -> float:
    return round(float(value), 2) if is_finite_number(value) else np.nan


def scheme_table(records: Sequence[Mapping[str, Any]], scheme: str, index: str) -> pd.DataFrame:
    """Models × categories (male − female of ``index``), ordered by overall bias, largest first; two decimals.

    Beside every value its interval's ends (``<column> CI low`` / ``<column> CI high``, NaN for records without
    intervals; left out when no record has them). ``attrs["interval_note"]`` says how the intervals were made;
    ``attrs["per_template"]`` maps each model to ``{column: each template's own value}`` (the spread behind the
    intervals; hovering a cell shows it)."""
    usable = records_with_scheme(records, scheme)
    rows = []
    settings: set[tuple[Any, ...]] = set()
    per_template: dict[str, dict[str, list[float | None]]] = {}
    for record in usable:
        values = bias_by_category(record, scheme, index)
        uncertainty = scheme_uncertainty(record, scheme)
        label = model_label(record)
        low, high = _ends((uncertainty.get("overall") or {}).get(index))
        row: dict[str, Any] = {"Model": label, OVERALL: round(overall_bias(values), 2),
                               OVERALL + CI_LOW: _rounded(low), OVERALL + CI_HIGH: _rounded(high)}
        intervals = (uncertainty.get("bias") or {}).get(index) or {}
        for category, value in values.items():
            column = category_label(category)
            low, high = _ends(intervals.get(category))
            row.update({column: _rounded(value), column + CI_LOW: _rounded(low), column + CI_HIGH: _rounded(high)})
        rows.append(row)
        if uncertainty:
            settings.add(tuple(uncertainty.get(key) for key in ("n_templates", "n_resamples", "confidence")))
            spread = uncertainty.get("per_template") or {}
            by_column = {OVERALL: ((spread.get("overall") or {}).get(index)) or []}
            by_column.update({category_label(c): v for c, v in ((spread.get("bias") or {}).get(index) or {}).items()})
            per_template[label] = {column: list(v) for column, v in by_column.items() if v}
    if not rows:
        return pd.DataFrame(columns=["Model"])
    table = pd.DataFrame(rows).sort_values([OVERALL, "Model"], ascending=[False, True], kind="stable")
    # records without intervals only (older stores): no empty interval columns in the table or its download
    empty_ends = [c for c in table.columns if c.endswith((CI_LOW, CI_HIGH)) and table[c].isna().all()]
    table = table.drop(columns=empty_ends).reset_index(drop=True)
    n_without = sum(1 for record in usable if not scheme_uncertainty(record, scheme))
    table.attrs["interval_note"] = interval_note(settings, n_without=n_without)
    table.attrs["per_template"] = per_template
    return table


def interval_note(settings: set[tuple[Any, ...]], n_without: int = 0) -> str:
    """What the brackets mean, from the settings the shown records used (``(n_templates, n_resamples,
    confidence)``); '' when no record has intervals."""
    if not settings:
        return ""
    templates = "/".join(str(t) for t in sorted({s[0] for s in settings}, key=str))
    resamples = "/".join(str(r) for r in sorted({s[1] for s in settings}, key=str))
    levels = "/".join(f"{100 * float(c):g} %" for c in sorted({s[2] for s in settings}, key=str))
    note = (f"[low, high]: {levels} interval, a percentile bootstrap over the {templates} templates (resampling "
            f"unit: template — a drawn template brings all its subjects and both genders; {resamples} resamples).")
    if n_without:
        note += f" {n_without} older record(s) without intervals show the value alone."
    return note


def value_columns(table: pd.DataFrame) -> list[str]:
    """The value columns of a scheme table (the interval-end columns left out)."""
    return [c for c in table.columns if c != "Model" and not c.endswith((CI_LOW, CI_HIGH))]


def _css(value: float, scale: float) -> str:
    """A solid shade of blue (towards male) or red (towards female) by |value| / scale, with black or white text
    (≥ 4.5:1 on every shade, light and dark mode alike: :mod:`leaderboard_space.colours`)."""
    if not np.isfinite(value) or scale <= 0:
        return ""
    rgb = MALE_RGB if value > 0 else FEMALE_RGB
    return cell_style(blend(rgb, abs(value) / scale))


def _interval_cell(row: pd.Series, column: str, signed: bool) -> str:
    low, high = row.get(column + CI_LOW, np.nan), row.get(column + CI_HIGH, np.nan)
    return html.escape(format_interval(row[column], low, high, digits=2, signed=signed))


def _spread_title(values: Sequence[float | None] | None) -> str:
    """A ``title`` attribute listing each template's own value (hover text), '' without per-template values."""
    if not values:
        return ""
    shown = ", ".join("–" if v is None else f"{v:.2f}" for v in values)
    return f' title="{html.escape(f"each template alone: {shown}")}"'


def _header_title(column: str) -> str:
    if column == OTHER_LABEL:
        return "the lexicon's catch-all column [???]: listed words in none of its named categories (counted)"
    if column == UNKNOWN_LABEL:
        return "predicted words the lexicon does not list (not counted in the overall bias)"
    if column == OVERALL:
        return "sum of |male − female| over the lexicon's categories, unknown left out"
    return f"male − female share of the index in {column}"


def scheme_table_html(table: pd.DataFrame, scheme: str, index: str) -> str:
    """The table as HTML in a sideways-scrolling box (every column reachable), blue = male, red = female; each
    value with its interval in brackets where the record has one."""
    if table.empty:
        return f"<p>No record scores the scheme {html.escape(str(scheme))}.</p>"
    categories = [c for c in value_columns(table) if c != OVERALL]
    counted = [c for c in categories if c != UNKNOWN_LABEL]  # the colour scale: counted categories only
    values = table[counted].to_numpy(dtype=float) if counted else np.full((len(table), 0), np.nan)
    scale = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
    head = "".join(f'<th title="{html.escape(_header_title(c), quote=True)}">{html.escape(c)}</th>'
                   for c in ["Model", OVERALL, *categories])
    spread = table.attrs.get("per_template", {})
    body = []
    for _, row in table.iterrows():
        per_template = spread.get(row["Model"], {})
        overall_cell = (f'<td style="text-align: right"{_spread_title(per_template.get(OVERALL))}>'
                        f"{_interval_cell(row, OVERALL, signed=False)}</td>")
        cells = [f'<th style="text-align: left">{html.escape(str(row["Model"]))}</th>', overall_cell]
        for category in categories:
            value = float(row[category])
            shade = cell_style(GREY) if category == UNKNOWN_LABEL else _css(value, scale)
            cells.append(f'<td style="{shade}; text-align: right"'
                         f"{_spread_title(per_template.get(category))}>"
                         f"{_interval_cell(row, category, signed=True)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    note = table.attrs.get("interval_note", "")
    caption = (f"{html.escape(scheme)} — {index.upper()}, male − female (blue = towards male, red = towards female)"
               + (f"<br><small>{html.escape(note)} Hover a value for each template's own.</small>"
                  if note else ""))
    return (
        '<div class="spanish-scroll" style="overflow-x: auto; max-width: 100%">'
        '<style>.gecobench-heat td, .gecobench-heat th {padding: 3px 6px; white-space: nowrap}</style>'
        f'<table class="gecobench-heat"><caption>{caption}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def radar_plot(record: Mapping[str, Any], scheme: str, index: str) -> go.Figure:
    """Each group's share of ``index`` per category of one model and scheme (outward = larger share)."""
    shares = group_shares(record, scheme, index)
    figure = go.Figure()
    colours = {"male": "rgb({},{},{})".format(*MALE_RGB), "female": "rgb({},{},{})".format(*FEMALE_RGB)}
    for group, values in shares.items():
        categories = list(values)
        radii = [values[c] for c in categories]
        figure.add_trace(go.Scatterpolar(r=[*radii, radii[0]] if radii else [],
                                         theta=[category_label(c) for c in [*categories, *categories[:1]]],
                                         name=group, fill="toself", opacity=0.5, line_color=colours.get(group)))
    figure.update_layout(title={"text": f"{model_label(record)} — {scheme}: share of {index.upper()} per category",
                                "font": {"size": 15}},
                         height=560, font={"size": 13}, margin={"t": 90, "l": 80, "r": 80},
                         template="plotly_white", legend={"orientation": "h", "y": -0.08})
    return figure


def published_comparison(records: Sequence[Mapping[str, Any]], published_dir: str | Path, index: str,
                         scheme: str = PUBLISHED_SCHEME) -> pd.DataFrame:
    """The authors' published male − female values (top-10 supersenses) beside this package's recomputation from
    the recorded predictions, per model and category, with the difference and the recomputation's interval over
    templates (NaN for records without one). Empty when the file is missing or ``scheme`` has no published values
    (:func:`published_note` says so)."""
    path = Path(published_dir) / PUBLISHED_FILE
    if scheme != PUBLISHED_SCHEME or not path.is_file():
        return pd.DataFrame()
    with path.open(encoding="utf-8", newline="") as handle:
        published = {row["model_name"]: row for row in csv.DictReader(handle)}
    suffix = f"|{PUBLISHED_COLUMN[index]}|M-F"
    rows = []
    for record in records:
        if record.get("protocol", {}).get("k") != 10 or "supersenses_top10" not in record.get("schemes", {}):
            continue
        row = published.get(record["masked_lm"]["model_id"])
        if row is None:
            continue
        ours = bias_by_category(record, "supersenses_top10", index)
        intervals = (scheme_uncertainty(record, "supersenses_top10").get("bias") or {}).get(index) or {}
        for column, text in row.items():
            if not column.endswith(suffix):
                continue
            category = column.split("|")[0]
            mine = ours.get(category)
            theirs = float(text)
            low, high = _ends(intervals.get(category))
            rows.append({"Model": record["masked_lm"]["model_id"], "Category": category,
                         "Published": round(theirs, 2), "Recomputed": None if mine is None else round(mine, 2),
                         "Recomputed" + CI_LOW: _rounded(low), "Recomputed" + CI_HIGH: _rounded(high),
                         "Difference": None if mine is None else round(mine - theirs, 4)})
    return pd.DataFrame(rows)

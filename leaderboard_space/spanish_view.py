"""The Spanish model-bias tab: models × categories tables, a radar per model and scheme, and the authors'
published values beside this package's recomputation. No Gradio here."""

from __future__ import annotations

import csv
import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from gecobench.spanish.plots import (
    FEMALE_RGB,
    MALE_RGB,
    UNKNOWN,
    bias_by_category,
    group_shares,
    model_label,
)

#: The top-29 lexicon names its supersenses in Spanish (and one in English); the top-10 lexicon in English
#: capitals. The tab shows the English names for both, with this legend.
TOP29_ENGLISH = {
    "Percepción (Sentidos)": "PERCEPTION", "Espacial": "SPATIAL", "Temporal": "TEMPORAL", "Movimiento": "MOTION",
    "Sustancia": "SUBSTANCE", "Clima": "WEATHER", "Cuerpo": "BODY", "Feeling": "FEELING", "Mente": "MIND",
    "Comportamiento": "BEHAVIOR", "Social/Politico": "SOCIAL", "Cantidad": "QUANTITY",
}
PUBLISHED_FILE = "supersenses_top10_bpi_bri_MF.csv"
PUBLISHED_COLUMN = {"bpi": "score_prop_overall", "bri": "rsv_prop_overall"}
ORDER_TEXT = ("Rows: models ordered by overall bias — the sum of |male − female| over the lexicon's categories "
              "(`unknown`, words outside the lexicon, not counted) — largest first.")


def category_label(category: str) -> str:
    """The English name of a category (top-29 Spanish names translated; others unchanged)."""
    return TOP29_ENGLISH.get(category, category)


def legend_markdown(scheme: str) -> str:
    """The translation legend for a scheme whose categories are named in Spanish; '' otherwise."""
    if not scheme.startswith("supersenses_top29"):
        return ""
    pairs = ", ".join(f"{spanish} → {english}" for spanish, english in TOP29_ENGLISH.items())
    return f"Category names of `{scheme}` are Spanish in the lexicon and shown in English: {pairs}."


def records_with_scheme(records: Sequence[Mapping[str, Any]], scheme: str | None) -> list[Mapping[str, Any]]:
    """The records that score ``scheme`` (the radar's model choices follow the scheme)."""
    return [r for r in records if scheme in (r.get("schemes") or {})]


def _overall(values: Mapping[str, float | None]) -> float:
    return float(sum(abs(v) for c, v in values.items() if c != UNKNOWN and v is not None and math.isfinite(v)))


def scheme_table(records: Sequence[Mapping[str, Any]], scheme: str, index: str) -> pd.DataFrame:
    """Models × categories (male − female of ``index``), ordered by overall bias, largest first; two decimals."""
    usable = records_with_scheme(records, scheme)
    rows = []
    for record in usable:
        values = bias_by_category(record, scheme, index)
        row: dict[str, Any] = {"Model": model_label(record), "Overall |m−f|": round(_overall(values), 2)}
        row.update({category_label(c): (round(v, 2) if v is not None else np.nan) for c, v in values.items()})
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=["Model"])
    table = pd.DataFrame(rows).sort_values(["Overall |m−f|", "Model"], ascending=[False, True], kind="stable")
    return table.reset_index(drop=True)


def _css(value: float, scale: float) -> str:
    if not np.isfinite(value) or scale <= 0:
        return ""
    rgb = MALE_RGB if value > 0 else FEMALE_RGB
    return f"background-color: rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {min(1.0, abs(value) / scale):.2f})"


def scheme_table_html(table: pd.DataFrame, scheme: str, index: str) -> str:
    """The table as HTML in a sideways-scrolling box (every column reachable), blue = male, red = female."""
    if table.empty:
        return f"<p>No record scores the scheme {html.escape(str(scheme))}.</p>"
    categories = [c for c in table.columns if c not in ("Model", "Overall |m−f|")]
    values = table[categories].to_numpy(dtype=float)
    scale = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["Model", "Overall |m−f|", *categories])
    body = []
    for _, row in table.iterrows():
        cells = [f'<th style="text-align: left">{html.escape(str(row["Model"]))}</th>',
                 f'<td style="text-align: right">{row["Overall |m−f|"]:.2f}</td>']
        for category in categories:
            value = float(row[category])
            text = f"{value:+.2f}" if np.isfinite(value) else "–"
            cells.append(f'<td style="{_css(value, scale)}; text-align: right">{text}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        '<div class="spanish-scroll" style="overflow-x: auto; max-width: 100%">'
        '<style>.gecobench-heat td, .gecobench-heat th {padding: 3px 6px; white-space: nowrap}</style>'
        f'<table class="gecobench-heat"><caption>{html.escape(scheme)} — {index.upper()}, male − female '
        "(blue = towards male, red = towards female)</caption>"
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


def published_comparison(records: Sequence[Mapping[str, Any]], published_dir: str | Path, index: str) -> pd.DataFrame:
    """The authors' published male − female values (top-10 supersenses) beside this package's recomputation from
    the recorded predictions, per model and category, with the difference. Empty when the file is missing."""
    path = Path(published_dir) / PUBLISHED_FILE
    if not path.is_file():
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
        for column, text in row.items():
            if not column.endswith(suffix):
                continue
            category = column.split("|")[0]
            mine = ours.get(category)
            theirs = float(text)
            rows.append({"Model": record["masked_lm"]["model_id"], "Category": category,
                         "Published": round(theirs, 2), "Recomputed": None if mine is None else round(mine, 2),
                         "Difference": None if mine is None else round(mine - theirs, 4)})
    return pd.DataFrame(rows)

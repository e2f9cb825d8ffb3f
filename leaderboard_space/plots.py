"""Interactive Plotly figures for the Space (``gr.Plot`` renders them with zoom, hover and a PNG download).

Every figure names the choice it follows in its title and draws the chance level (Uniform Random's MA) as a
dashed line, so a bar can be read against "no better than guessing".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from gecobench.columns import GROUP_COLUMNS
from gecobench.formatting import format_interval
from gecobench.pooling import pool_records
from leaderboard_space.ranking import (
    MA_BOUNDS,
    REGIME_ORDER,
    _label,
    _ordered,
    _pool_column,
    _value,
    chance_level,
    seed_matches,
    seed_text,
)
from leaderboard_space.tables import METRIC_LABELS, PROPERTY_KEYS, property_scores

FONT_SIZE = 14
HEIGHT = 480
GROUP_COLOURS = {"female": "#c0392b", "male": "#2166ac", "non-binary": "#7b3294"}
# A second encoding beside colour (colour-blind readers, greyscale prints): every radar trace gets its own marker
# symbol and line dash, every bar series its own fill pattern; the palette has no repeated colour within 10.
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666", "#1f78b4",
           "#b2df8a", "#fb9a99", "#cab2d6")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down", "pentagon",
           "hexagon", "hourglass", "bowtie")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", "\\", "x", ".", "+", "-", "|")
GROUP_PATTERNS = {"female": "", "male": "/", "non-binary": "x"}


def trace_style(position: int) -> dict[str, Any]:
    """Colour, marker symbol and line dash of the ``position``-th trace: no two of the first
    ``len(SYMBOLS) * len(DASHES)`` traces share symbol and dash."""
    # the dash steps one further every len(SYMBOLS) traces, so trace p and p + 12k (same symbol) differ in dash
    dash = DASHES[(position + position // len(SYMBOLS)) % len(DASHES)]
    return {"colour": PALETTE[position % len(PALETTE)], "symbol": SYMBOLS[position % len(SYMBOLS)], "dash": dash}


def _layout(figure: go.Figure, title: str, y_title: str = "Mass accuracy (MA)") -> go.Figure:
    figure.update_layout(title={"text": title, "font": {"size": FONT_SIZE + 2}}, height=HEIGHT,
                         font={"size": FONT_SIZE}, yaxis_title=y_title, barmode="group",
                         legend={"orientation": "h", "y": -0.25}, margin={"t": 70, "b": 120, "l": 70, "r": 20},
                         template="plotly_white")
    return figure


def _chance_line(figure: go.Figure, records: Sequence[Mapping[str, Any]]) -> None:
    value, label = chance_level(records)
    if np.isfinite(value):
        figure.add_hline(y=value, line_dash="dash", line_color="#555", annotation_text=f"{label}: {value:.3f}",
                         annotation_position="top left")


def _error(values: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": np.nan_to_num(highs - values).tolist(),
            "arrayminus": np.nan_to_num(values - lows).tolist(), "thickness": 1.2}


def warm_up() -> None:
    """Build and serialise one small figure of each kind the first page draws, at start-up.

    Plotly loads its trace validators and the ``plotly_white`` template on first use (≈ 0.3 s); paid here, before
    the server answers, it is not paid by the first visitor's page."""
    style = trace_style(0)  # the properties the figures set (markers, dashes, patterns): their validators load here
    figure = go.Figure(go.Scatterpolar(r=[0.0, 1.0, 0.0], theta=["a", "b", "a"], fill="toself", mode="lines+markers",
                                       text=["a", "b", "a"], hovertemplate="%{text}", fillcolor="rgba(0,0,0,0.03)",
                                       line={"color": style["colour"], "dash": style["dash"], "width": 2},
                                       marker={"symbol": style["symbol"], "size": 9, "color": style["colour"]}))
    figure.add_trace(go.Bar(x=["a"], y=[0.5], error_y={"type": "data", "array": [0.1]}, text=["a"],
                            textposition="inside", insidetextanchor="start", textangle=-90,
                            marker={"color": style["colour"], "pattern": {"shape": "/", "solidity": 0.35}}))
    _layout(figure, "warm-up")
    figure.to_json()


def message_figure(text: str) -> go.Figure:
    """An empty figure that says why it is empty (never an error badge)."""
    figure = go.Figure()
    figure.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                          font={"size": FONT_SIZE})
    figure.update_layout(height=200, xaxis={"visible": False}, yaxis={"visible": False}, template="plotly_white")
    return figure


def ma_by_regime_plot(records: Sequence[Mapping[str, Any]], config: str, base_model: str,
                      seed: str | None = None) -> go.Figure:
    """MA of every explainer grouped by model regime for one config and base model (the paper's Figure 2 view),
    with 95% intervals as error bars and the chance level."""
    chosen = [r for r in records if r["dataset"]["config"] == config and r["model"]["base_model"] == base_model
              and seed_matches(r, seed)]
    if not chosen:
        return message_figure("No explainer records for this choice.")
    explainers = sorted({_label(r) for r in chosen})
    figure = go.Figure()
    newest = lambda pool: max(str((r.get("provenance") or {}).get("created_at")) for r in pool)
    by_cell: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in chosen:  # one pass (a store of 10,000 records puts over a thousand here)
        by_cell.setdefault((record["model"]["regime"], _label(record)), []).append(record)
    for position, regime in enumerate(_ordered({r["model"]["regime"] for r in chosen}, REGIME_ORDER)):
        cells = [sorted(pool_records(by_cell.get((regime, e), [])), key=newest) for e in explainers]
        # one seed: the record's value and interval; several (mean over seeds): mean and across-seed interval
        numbers = np.array([_pool_column(pools[-1], lambda r, end: _value(r, "mass_accuracy", end), MA_BOUNDS)
                            if pools else (np.nan, np.nan, np.nan) for pools in cells], dtype=float).reshape(-1, 3)
        values, lows, highs = numbers[:, 0], numbers[:, 1], numbers[:, 2]
        # colour and a fill pattern per regime, and the regime's name on its bars: not colour alone
        figure.add_bar(x=explainers, y=values.tolist(), name=regime, error_y=_error(values, lows, highs),
                       marker={"color": PALETTE[position % len(PALETTE)],
                               "pattern": {"shape": PATTERNS[position % len(PATTERNS)], "solidity": 0.35}},
                       text=[regime] * len(explainers), textposition="inside", insidetextanchor="start",
                       textangle=-90, hovertemplate="%{x} · " + regime + ": MA %{y:.3f}<extra></extra>")
    _chance_line(figure, chosen)
    chosen_seed = f" · {seed_text(seed)}" if seed else ""
    return _layout(figure, f"MA by model regime — {config} · {base_model}{chosen_seed} (the Ranking tab's choice)")


def ma_by_group_plot(records: Sequence[Mapping[str, Any]], title_choice: str) -> go.Figure:
    """MA per gender group for every explainer of one cell (config, base model, regime), with intervals."""
    if not records:
        return message_figure("No explainer records for this choice.")
    # one bar per explainer: the records of several seeds pooled (mean, across-seed interval), as on the Ranking
    pools = pool_records(records)
    means = [_pool_column(pool, lambda r, end: _value(r, "mass_accuracy", end), MA_BOUNDS)[0] for pool in pools]
    order = sorted(range(len(pools)), key=lambda i: -np.nan_to_num(means[i], nan=-1))
    pools = [pools[i] for i in order]
    explainers = [_label(pool[0]) for pool in pools]
    figure = go.Figure()
    for group in ("female", "male", "non-binary"):
        read = GROUP_COLUMNS[group].record_value
        numbers = np.array([_pool_column(pool, read, MA_BOUNDS) for pool in pools], dtype=float)
        if not np.isfinite(numbers[:, 0]).any():
            continue
        values, lows, highs = numbers[:, 0], numbers[:, 1], numbers[:, 2]
        figure.add_bar(x=explainers, y=values.tolist(), name=group, error_y=_error(values, lows, highs),
                       marker={"color": GROUP_COLOURS[group],
                               "pattern": {"shape": GROUP_PATTERNS[group], "solidity": 0.35}},
                       text=[group] * len(explainers), textposition="inside", insidetextanchor="start",
                       textangle=-90)
    if not figure.data:
        return message_figure("The records of this choice have no per-group MA.")
    _chance_line(figure, records)
    return _layout(figure, f"MA per gender group — {title_choice}")


def _value_with_interval(ranking: pd.DataFrame, position: int, column: str) -> str:
    """``value [low, high]`` of one ranking cell (the interval when the ranking carries ``<column> lo/hi``)."""
    cell = lambda name: ranking[name].iloc[position] if name in ranking.columns else np.nan
    return format_interval(cell(column), cell(f"{column} lo"), cell(f"{column} hi"))


def properties_radar(ranking: pd.DataFrame, title_choice: str) -> go.Figure:
    """The Co-12 properties per explainer of one cell, rescaled across the explainers shown (outward = better)."""
    labels = [METRIC_LABELS[k] for k in PROPERTY_KEYS if METRIC_LABELS[k] in ranking.columns]
    scores = property_scores(ranking[["Explainer", *labels]]) if len(ranking) else pd.DataFrame()
    scores = scores.dropna(axis=1, how="all")
    if scores.empty or scores.shape[1] < 3:
        return message_figure("Radar charts need at least three Co-12 property metrics in the records.")
    figure = go.Figure()
    axes = list(scores.columns)
    for position, (name, values) in enumerate(scores.iterrows()):
        closed = np.nan_to_num(np.append(values.to_numpy(dtype=float), values.iloc[0]))
        # the radius is rescaled across the explainers shown; hovering shows the record's own value and interval
        hover = [_value_with_interval(ranking, position, axis) for axis in axes]
        # a list, not an array: plotly hands arrays to narwhals, whose first call scans every installed package's
        # entry points (about 1 s, on the first page of a just-started Space)
        style = trace_style(position)  # colour, marker symbol and line dash: the trace is told apart without colour
        figure.add_trace(go.Scatterpolar(r=closed.tolist(), theta=[*axes, axes[0]], name=str(name),
                                         text=[*hover, hover[0]], hovertemplate="%{theta}: %{text}<extra>%{fullData.name}</extra>",
                                         mode="lines+markers", fill="toself", opacity=0.7,
                                         line={"color": style["colour"], "dash": style["dash"], "width": 2},
                                         marker={"symbol": style["symbol"], "size": 9, "color": style["colour"]},
                                         fillcolor="rgba(0,0,0,0.03)"))
    figure.update_layout(title={"text": f"Co-12 properties — {title_choice} (rescaled; outward = better)",
                                "font": {"size": FONT_SIZE + 2}},
                         polar={"radialaxis": {"range": [0, 1]}}, height=HEIGHT + 60, font={"size": FONT_SIZE},
                         template="plotly_white", legend={"orientation": "h", "y": -0.1})
    return figure

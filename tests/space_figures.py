"""Static matplotlib figures of the Space's tables: MA by regime, MA per gender group, radars.

Test-only: the Space draws its figures with Plotly (:mod:`leaderboard_space.plots`); these exercise the table
shapes (:mod:`leaderboard_space.tables`) a static export would read. Not shipped in the wheel."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from leaderboard_space.tables import GROUPS, MA

MAX_EXPLAINERS_PER_FIGURE = 16


def _message_figure(text: str):
    fig, ax = plt.subplots(figsize=(6, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=11)
    return fig


def _errors(values: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Asymmetric error-bar lengths; zero where the interval is unknown."""
    below = np.where(np.isfinite(lows), values - lows, 0.0)
    above = np.where(np.isfinite(highs), highs - values, 0.0)
    return np.vstack([np.clip(below, 0, None), np.clip(above, 0, None)])


def _grouped_bars(ax, categories: list[str], series: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    width = 0.8 / max(1, len(series))
    x = np.arange(len(categories))
    for i, (label, (values, lows, highs)) in enumerate(series.items()):
        ax.bar(x + i * width - 0.4 + width / 2, np.nan_to_num(values), width, label=label,
               yerr=_errors(values, lows, highs), capsize=2, error_kw={"elinewidth": 0.8})
    ax.set_xticks(x, labels=categories, rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)


def _cell_stats(rows: pd.DataFrame, key: str) -> tuple[float, float, float]:
    values = rows[key].to_numpy(dtype=float)
    lows = rows[f"{key}__lo"].to_numpy(dtype=float)
    highs = rows[f"{key}__hi"].to_numpy(dtype=float)
    mean = np.nanmean(values) if np.isfinite(values).any() else np.nan
    low = np.nanmin(lows) if np.isfinite(lows).any() else np.nan
    high = np.nanmax(highs) if np.isfinite(highs).any() else np.nan
    return mean, low, high


def ma_by_regime_figure(frame: pd.DataFrame):
    """The paper's Figure 2 view: for each GECO config, MA of every explainer grouped by model regime,
    with the confidence interval as error bars (envelope of the records' intervals)."""
    if frame.empty:
        return _message_figure("No explainer records match the filters.")
    configs = sorted(set(frame["config"]))
    explainers = sorted(set(frame["explainer"]))[:MAX_EXPLAINERS_PER_FIGURE]
    regimes = sorted(set(frame["regime"]))
    fig, axes = plt.subplots(len(configs), 1, figsize=(max(7, 0.55 * len(explainers) * len(regimes) / 2), 3.2 * len(configs)),
                             squeeze=False)
    for ax, config in zip(axes[:, 0], configs):
        rows = frame[frame["config"] == config]
        series = {}
        for regime in regimes:
            stats = [_cell_stats(rows[(rows["explainer"] == e) & (rows["regime"] == regime)], MA)
                     if ((rows["explainer"] == e) & (rows["regime"] == regime)).any() else (np.nan,) * 3
                     for e in explainers]
            series[regime] = tuple(np.array(s, dtype=float) for s in zip(*stats))
        _grouped_bars(ax, explainers, series)
        ax.set_title(f"Mass accuracy by model regime — {config}", fontsize=10)
        ax.set_ylabel("MA")
    axes[0, 0].legend(title="regime", fontsize=7, title_fontsize=8, ncol=min(4, len(regimes)), loc="upper right")
    fig.tight_layout()
    return fig


def ma_by_group_figure(frame: pd.DataFrame):
    """MA per gender group (female, male, non-binary) for every explainer, over the filtered records."""
    groups = [g for g in GROUPS if f"group:{g}" in frame.columns and frame[f"group:{g}"].notna().any()]
    if frame.empty or not groups:
        return _message_figure("No per-group mass accuracy in the records shown.")
    explainers = sorted(set(frame["explainer"]))[:MAX_EXPLAINERS_PER_FIGURE]
    series = {}
    for group in groups:
        stats = [_cell_stats(frame[frame["explainer"] == e], f"group:{group}") for e in explainers]
        series[group] = tuple(np.array(s, dtype=float) for s in zip(*stats))
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * len(explainers) * len(groups)), 3.6))
    _grouped_bars(ax, explainers, series)
    ax.set_title("Mass accuracy per gender group", fontsize=10)
    ax.set_ylabel("MA")
    ax.legend(title="group", fontsize=8)
    fig.tight_layout()
    return fig


def radar_grid_figure(scores: pd.DataFrame, columns: int = 4):
    """One small radar chart per explainer over the Co-12 properties (0..1, outward = better)."""
    scores = scores.dropna(axis=1, how="all")
    if scores.empty or scores.shape[1] < 3:
        return _message_figure("Radar charts need at least three Co-12 property metrics in the records.")
    scores = scores.iloc[:MAX_EXPLAINERS_PER_FIGURE]
    labels = list(scores.columns)
    angles = np.linspace(0, 2 * np.pi, len(labels), endpoint=False)
    n = len(scores)
    rows = int(np.ceil(n / columns))
    fig, axes = plt.subplots(rows, min(columns, n), figsize=(3 * min(columns, n), 3 * rows),
                             subplot_kw={"projection": "polar"}, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, (name, values) in zip(axes.flat, scores.iterrows()):
        closed = np.append(np.nan_to_num(values.to_numpy(dtype=float)), np.nan_to_num(values.iloc[0]))
        closed_angles = np.append(angles, angles[0])
        ax.plot(closed_angles, closed, linewidth=1.2)
        ax.fill(closed_angles, closed, alpha=0.25)
        ax.set_ylim(0, 1)
        ax.set_xticks(angles, labels=labels, fontsize=7)
        ax.set_yticks([0.5, 1.0], labels=["", ""])
        ax.set_title(str(name), fontsize=8, pad=12)
    fig.suptitle("Co-12 properties (rescaled across the explainers shown; outward = better)", fontsize=9)
    fig.tight_layout()
    return fig

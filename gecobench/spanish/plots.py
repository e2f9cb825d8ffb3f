"""Pictures of ``model_bias`` records: heat tables (male − female per category) and radar charts.

Colour convention: **blue = towards the male group, red = towards the female group**; the colour intensity
grows with the magnitude of the difference, scaled to the largest magnitude in the table. All functions take
records as read from the results store, so the Space and the script draw the same pictures.

* :func:`heat_table_html` / :func:`heat_table_figure` — one model: categories × schemes;
* :func:`radar_figure` — one model, one scheme: each group's share of its index over the categories;
* :func:`scheme_table_html` / :func:`scheme_table_figure` — many models, one scheme: models × categories.

Where a record carries intervals (the bootstrap over templates, ``schemes/<scheme>/uncertainty``) the tables show
each value with its interval, ``+1.4287 [-2.7003, +6.0704]``; records without intervals show the value alone.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

MALE_RGB = (31, 119, 180)
FEMALE_RGB = (214, 39, 40)
INDICES = ("bpi", "bri")
UNKNOWN = "unknown"


def _check_index(index: str) -> None:
    if index not in INDICES:
        raise ValueError(f"index must be one of {INDICES}, got {index!r}")


def bias_by_category(record: Mapping[str, Any], scheme: str, index: str = "bpi") -> dict[str, float | None]:
    """``{category: male − female}`` of one scheme of a record (``None`` where undefined)."""
    _check_index(index)
    schemes = record.get("schemes", {})
    if scheme not in schemes:
        raise ValueError(f"record {record.get('record_id', '?')} has no scheme {scheme!r}; it has {sorted(schemes)}")
    values = schemes[scheme].get("bias", {}).get(index, {})
    return {str(c): (None if v is None else float(v)) for c, v in values.items()}


def bias_interval(record: Mapping[str, Any], scheme: str, index: str, category: str) -> tuple[float, float] | None:
    """The (low, high) interval over templates of one category's male − female ``index``; None when the record has
    none (older records) or it is undefined."""
    block = ((record.get("schemes") or {}).get(scheme) or {}).get("uncertainty") or {}
    interval = ((block.get("bias") or {}).get(index) or {}).get(category) or {}
    low, high = interval.get("ci_low"), interval.get("ci_high")
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return None
    return float(low), float(high)


def _interval_matrices(
    row_labels: Sequence[Any], col_labels: Sequence[Any], cell: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Low and high ends per cell (``cell(row, col)`` → (low, high) or None); NaN where there is no interval."""
    low = np.full((len(row_labels), len(col_labels)), np.nan)
    high = np.full_like(low, np.nan)
    for i, row in enumerate(row_labels):
        for j, col in enumerate(col_labels):
            interval = cell(row, col)
            if interval is not None:
                low[i, j], high[i, j] = interval
    return low, high


def _cell_text(values: np.ndarray, ends: tuple[np.ndarray, np.ndarray] | None, i: int, j: int, spec: str,
               separator: str = " ") -> str:
    text = format(float(values[i, j]), spec)
    if ends is not None and np.isfinite(ends[0][i, j]) and np.isfinite(ends[1][i, j]):
        text += f"{separator}[{format(float(ends[0][i, j]), spec)}, {format(float(ends[1][i, j]), spec)}]"
    return text


def model_label(record: Mapping[str, Any]) -> str:
    """``model_id`` plus K and a marker for recorded (published) predictions."""
    lm = record.get("masked_lm", {})
    k = record.get("protocol", {}).get("k")
    marker = " (recorded)" if str(lm.get("source", "")).startswith("recorded") else ""
    return f"{lm.get('model_id', '?')} · top{k}{marker}"


def colour_for(value: float | None, scale: float) -> tuple[float, float, float, float]:
    """RGBA in 0..1: blue for value > 0 (male), red for value < 0 (female), alpha ∝ |value| / scale."""
    if value is None or scale <= 0 or not math.isfinite(value):
        return (1.0, 1.0, 1.0, 0.0)
    base = MALE_RGB if value > 0 else FEMALE_RGB
    alpha = min(1.0, abs(value) / scale)
    return (base[0] / 255, base[1] / 255, base[2] / 255, alpha)


def _css(value: float | None, scale: float) -> str:
    r, g, b, a = colour_for(value, scale)
    return f"background-color: rgba({round(r * 255)}, {round(g * 255)}, {round(b * 255)}, {a:.3f})"


def _matrix(
    row_labels: Sequence[str], col_labels: Sequence[str], cell: Any
) -> tuple[np.ndarray, float]:
    values = np.full((len(row_labels), len(col_labels)), np.nan)
    for i, row in enumerate(row_labels):
        for j, col in enumerate(col_labels):
            v = cell(row, col)
            if v is not None and math.isfinite(v):
                values[i, j] = v
    finite = np.abs(values[np.isfinite(values)])
    return values, float(finite.max()) if finite.size else 0.0


INTERVAL_NOTE = "[low, high]: 95 % interval, a percentile bootstrap over the templates (resampling unit: template)"


def _html_table(title: str, row_labels: Sequence[str], col_labels: Sequence[str], values: np.ndarray, scale: float,
                ends: tuple[np.ndarray, np.ndarray] | None = None) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in col_labels)
    body = []
    for i, row in enumerate(row_labels):
        cells = []
        for j in range(len(col_labels)):
            v = values[i, j]
            if np.isfinite(v):
                cells.append(f'<td style="{_css(float(v), scale)}; text-align: right">'
                             f"{_cell_text(values, ends, i, j, '+.4f')}</td>")
            else:
                cells.append('<td style="text-align: center">–</td>')
        body.append(f"<tr><th style=\"text-align: left\">{html.escape(row)}</th>{''.join(cells)}</tr>")
    note = f"; {INTERVAL_NOTE}" if ends is not None and np.isfinite(ends[0]).any() else ""
    return (
        f'<table class="gecobench-heat"><caption>{html.escape(title)} '
        f"(male − female; blue = male, red = female{html.escape(note)})</caption>"
        f"<thead><tr><th></th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _heat_figure(title: str, row_labels: Sequence[str], col_labels: Sequence[str], values: np.ndarray, scale: float,
                 ends: tuple[np.ndarray, np.ndarray] | None = None):
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 + 1.3 * len(col_labels)), max(3.0, 1.4 + 0.38 * len(row_labels))))
    rgba = np.array([[colour_for(None if not np.isfinite(v) else float(v), scale) for v in row] for row in values])
    if rgba.size:
        ax.imshow(rgba.reshape(len(row_labels), len(col_labels), 4), aspect="auto")
    for i in range(len(row_labels)):
        for j in range(len(col_labels)):
            v = values[i, j]
            text = _cell_text(values, ends, i, j, "+.2f", separator="\n") if np.isfinite(v) else "–"
            ax.text(j, i, text, ha="center", va="center", fontsize=8 if "\n" not in text else 6)
    ax.set_xticks(range(len(col_labels)), labels=list(col_labels), rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(row_labels)), labels=list(row_labels), fontsize=8)
    with_intervals = ends is not None and np.isfinite(ends[0]).any()
    ax.set_title(f"{title}\nmale − female (blue = male, red = female)"
                 + (f"\n{INTERVAL_NOTE}" if with_intervals else ""), fontsize=9)
    fig.tight_layout()
    return fig


def _heat_table_data(record: Mapping[str, Any], index: str, schemes: Sequence[str] | None):
    _check_index(index)
    schemes = list(schemes or record.get("schemes", {}).keys())
    per_scheme = {s: bias_by_category(record, s, index) for s in schemes}
    categories: list[str] = []
    for s in schemes:
        categories.extend(c for c in per_scheme[s] if c not in categories)
    values, scale = _matrix(categories, schemes, lambda c, s: per_scheme[s].get(c))
    ends = _interval_matrices(categories, schemes, lambda c, s: bias_interval(record, s, index, c))
    return categories, schemes, values, scale, ends


def heat_table_html(record: Mapping[str, Any], index: str = "bpi", schemes: Sequence[str] | None = None) -> str:
    """One model: an HTML table of categories × schemes with the male − female ``index`` (and its interval)."""
    categories, schemes, values, scale, ends = _heat_table_data(record, index, schemes)
    return _html_table(f"{model_label(record)} — {index.upper()}", categories, schemes, values, scale, ends)


def heat_table_figure(record: Mapping[str, Any], index: str = "bpi", schemes: Sequence[str] | None = None):
    """One model: the heat table as a matplotlib figure."""
    categories, schemes, values, scale, ends = _heat_table_data(record, index, schemes)
    return _heat_figure(f"{model_label(record)} — {index.upper()}", categories, schemes, values, scale, ends)


def radar_categories(record: Mapping[str, Any], scheme: str, index: str = "bpi", include_unknown: bool = False) -> list[str]:
    """The categories a radar chart shows: those of the scheme, without ``unknown`` (words outside the lexicon)
    unless asked, and without categories where every group is 0 or undefined."""
    per_category = record["schemes"][scheme][index]
    return [
        c for c, values in per_category.items()
        if (include_unknown or c != UNKNOWN) and any(v for v in values.values() if v is not None)
    ]


def group_shares(
    record: Mapping[str, Any], scheme: str, index: str = "bpi", include_unknown: bool = False
) -> dict[str, dict[str, float]]:
    """``{group: {category: share}}``: each group's ``index`` per category divided by its total over the shown
    categories (:func:`radar_categories`), so each group's shares sum to 1 (all zeros when the group has none)."""
    _check_index(index)
    shown = set(radar_categories(record, scheme, index, include_unknown))
    per_category = {c: v for c, v in record["schemes"][scheme][index].items() if c in shown}
    groups = sorted({g for values in per_category.values() for g in values})
    shares: dict[str, dict[str, float]] = {}
    for group in groups:
        raw = {c: float(v.get(group) or 0.0) for c, v in per_category.items()}
        total = sum(raw.values())
        shares[group] = {c: (v / total if total > 0 else 0.0) for c, v in raw.items()}
    return shares


def radar_figure(record: Mapping[str, Any], scheme: str, index: str = "bpi", include_unknown: bool = False):
    """One model, one scheme: a radar chart of each group's share per category (male blue, female red)."""
    if scheme not in record.get("schemes", {}):
        raise ValueError(f"record {record.get('record_id', '?')} has no scheme {scheme!r}")
    shares = group_shares(record, scheme, index, include_unknown)
    categories = radar_categories(record, scheme, index, include_unknown)
    angles = np.linspace(0, 2 * np.pi, max(len(categories), 1), endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(5, 5), subplot_kw={"projection": "polar"})
    other = plt.get_cmap("tab10")
    for n, (group, values) in enumerate(shares.items()):
        colour = {"male": np.array(MALE_RGB) / 255, "female": np.array(FEMALE_RGB) / 255}.get(group, other(n + 2))
        radii = [values.get(c, 0.0) for c in categories]
        ax.plot(angles + angles[:1], radii + radii[:1], color=colour, label=group)
        ax.fill(angles + angles[:1], radii + radii[:1], color=colour, alpha=0.15)
    ax.set_xticks(angles, labels=categories, fontsize=7)
    ax.tick_params(axis="y", labelsize=6)
    ax.set_title(f"{model_label(record)}\n{scheme}: share of {index.upper()} per category", fontsize=9)
    ax.legend(loc="upper right", bbox_to_anchor=(1.25, 1.1), fontsize=8)
    fig.tight_layout()
    return fig


def _scheme_table_data(records: Sequence[Mapping[str, Any]], scheme: str, index: str):
    _check_index(index)
    usable = [r for r in records if scheme in r.get("schemes", {})]
    if not usable:
        raise ValueError(f"no record has scheme {scheme!r}")
    labels = [model_label(r) for r in usable]
    per_model = [bias_by_category(r, scheme, index) for r in usable]
    categories: list[str] = []
    for values in per_model:
        categories.extend(c for c in values if c not in categories)
    values, scale = _matrix(range(len(labels)), categories, lambda i, c: per_model[i].get(c))  # type: ignore[arg-type]
    ends = _interval_matrices(range(len(labels)), categories, lambda i, c: bias_interval(usable[i], scheme, index, c))
    return labels, categories, values, scale, ends


def scheme_table_html(records: Sequence[Mapping[str, Any]], scheme: str, index: str = "bpi") -> str:
    """Across models: an HTML table of models × categories for one scheme (with intervals where recorded)."""
    labels, categories, values, scale, ends = _scheme_table_data(records, scheme, index)
    return _html_table(f"{scheme} — {index.upper()}", labels, categories, values, scale, ends)


def scheme_table_figure(records: Sequence[Mapping[str, Any]], scheme: str, index: str = "bpi"):
    """Across models: the models × categories table of one scheme as a matplotlib figure."""
    labels, categories, values, scale, ends = _scheme_table_data(records, scheme, index)
    return _heat_figure(f"{scheme} — {index.upper()}", labels, categories, values, scale, ends)


def _save(fig, path: Any, written: list[str]) -> None:
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(str(path))


def write_model_pictures(records: Sequence[Mapping[str, Any]], out_dir: Any, index: str = "bpi") -> list[str]:
    """Per model: the heat table (PNG + HTML) and one radar chart per scheme (PNG); return the paths."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for record in records:
        k = record.get("protocol", {}).get("k")
        stem = _safe_name(f"{record['masked_lm']['model_id']}_top{k}_{record['record_id'][:8]}")
        _save(heat_table_figure(record, index), out / f"{stem}_heat.png", written)
        (out / f"{stem}_heat.html").write_text(heat_table_html(record, index), encoding="utf-8")
        written.append(str(out / f"{stem}_heat.html"))
        for scheme in record["schemes"]:
            _save(radar_figure(record, scheme, index), out / f"{stem}_radar_{_safe_name(scheme)}.png", written)
    return written


def write_scheme_tables(records: Sequence[Mapping[str, Any]], out_dir: Any, index: str = "bpi") -> list[str]:
    """Across models: one table per scheme (PNG + HTML); return the paths."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    schemes: list[str] = []
    for record in records:
        schemes.extend(s for s in record["schemes"] if s not in schemes)
    for scheme in schemes:
        _save(scheme_table_figure(records, scheme, index), out / f"all_models_{_safe_name(scheme)}.png", written)
        html_path = out / f"all_models_{_safe_name(scheme)}.html"
        html_path.write_text(scheme_table_html(records, scheme, index), encoding="utf-8")
        written.append(str(html_path))
    return written


def write_pictures(records: Sequence[Mapping[str, Any]], out_dir: Any, index: str = "bpi") -> list[str]:
    """Per-model pictures and the across-model tables of ``records``; return the paths written."""
    return write_model_pictures(records, out_dir, index) + write_scheme_tables(records, out_dir, index)


def _safe_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)

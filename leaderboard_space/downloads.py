"""Tables as files: every table the Space shows can be downloaded as CSV and as JSON (records orientation).

The GECO tables are downloaded **analysis-ready** (:func:`analysis_table`): from the numeric table the Space's
view is formatted from (not from its text), one column per number — ``<name>``, ``<name>_ci_low``,
``<name>_ci_high`` for every metric, at full precision — under the machine names of :mod:`gecobench.columns`, plus
the ``record_id`` of the record(s) behind each row.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pandas as pd

from gecobench import columns

_DOWNLOAD_DIR = Path(tempfile.mkdtemp(prefix="gecobench-downloads-"))


def _stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:120] or "table"


def _plain(value: object) -> object:
    """NumPy scalars as Python numbers for json (NaN became None above)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def column_name(label: str) -> str:
    """The machine name of a header: the declared column's (:func:`gecobench.columns.by_label`), else the label
    in snake case (``Sentences scored`` → ``sentences_scored``, ``Gap male−non-binary`` → ``gap_male_nonbinary``)."""
    declared = columns.by_label(label)
    if declared is not None:
        return declared.name
    text = re.sub(r"\|([^|]*)\|", r"abs \1", label.lower())  # |gap| → abs gap
    return re.sub(r"[^0-9a-z]+", "_", text.replace("−", "_").replace("-", "")).strip("_") or "column"


def analysis_table(numbers: pd.DataFrame) -> pd.DataFrame:
    """A numeric view table (each value column ``L`` followed somewhere by ``L lo`` and ``L hi``) as a download:
    ``<name>``, ``<name>_ci_low``, ``<name>_ci_high`` side by side, values untouched (full precision, NaN for
    undefined), every other column kept under its machine name. A ``Record`` column of links is kept as
    ``record_link`` when the table also carries ``record_id``."""
    valued = [c for c in numbers.columns if f"{c} lo" in numbers.columns and f"{c} hi" in numbers.columns]
    bounds = {f"{c} {end}" for c in valued for end in ("lo", "hi")}
    out: dict[str, pd.Series] = {}
    for label in numbers.columns:
        if label in bounds:
            continue
        if label == "Record" and "record_id" in numbers.columns:
            out["record_link"] = numbers[label]
            continue
        name = column_name(label)
        if name in out:
            raise ValueError(f"two columns of the table download as {name!r}: rename one of them ({label!r})")
        if label in valued:
            for suffix, source in (("", label), ("_ci_low", f"{label} lo"), ("_ci_high", f"{label} hi")):
                out[name + suffix] = pd.to_numeric(numbers[source], errors="coerce").astype(float)
        else:
            out[name] = numbers[label]
    frame = pd.DataFrame(out, index=numbers.index)
    if "record_id" in frame.columns:  # the id first: what a row of the analysis joins on
        frame = frame[["record_id", *[c for c in frame.columns if c != "record_id"]]]
    return frame.reset_index(drop=True)


def table_files(table: pd.DataFrame, name: str, folder: Path | None = None) -> list[str]:
    """Write ``table`` as ``<name>.csv`` and ``<name>.json`` (one object per row); return both paths. NaN is
    written as an empty CSV cell and as JSON ``null``."""
    folder = folder or _DOWNLOAD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = _stem(name)
    csv_path, json_path = folder / f"{stem}.csv", folder / f"{stem}.json"
    table.to_csv(csv_path, index=False)  # floats as repr: they read back exactly
    # json, not DataFrame.to_json: that rounds floats to 10 digits; json writes each float's shortest exact repr
    rows = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    json_path.write_text(json.dumps(rows, indent=1, ensure_ascii=False, default=_plain), encoding="utf-8")
    return [str(csv_path), str(json_path)]


def figure_files(figures: dict[str, object], folder: Path | None = None) -> list[str]:
    """Write each Plotly figure as a standalone HTML page whose camera button saves an **SVG** (the Space's own
    toolbar saves PNG); plotly.js is loaded from its CDN when the page is opened. Return the paths."""
    folder = folder or _DOWNLOAD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, figure in figures.items():
        path = folder / f"{_stem(name)}.html"
        figure.write_html(path, include_plotlyjs="cdn", full_html=True,
                          config={"toImageButtonOptions": {"format": "svg", "filename": _stem(name)}})
        paths.append(str(path))
    return paths

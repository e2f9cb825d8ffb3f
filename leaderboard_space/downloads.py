"""Tables as files: every table the Space shows can be downloaded as CSV and as JSON (records orientation)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pandas as pd

_DOWNLOAD_DIR = Path(tempfile.mkdtemp(prefix="gecobench-downloads-"))


def _stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:120] or "table"


def table_files(table: pd.DataFrame, name: str, folder: Path | None = None) -> list[str]:
    """Write ``table`` as ``<name>.csv`` and ``<name>.json`` (one object per row); return both paths. NaN is
    written as an empty CSV cell and as JSON ``null``."""
    folder = folder or _DOWNLOAD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = _stem(name)
    csv_path, json_path = folder / f"{stem}.csv", folder / f"{stem}.json"
    table.to_csv(csv_path, index=False)
    table.to_json(json_path, orient="records", indent=1, force_ascii=False)
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

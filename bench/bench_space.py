"""Speed of the leaderboard Space on a large results store.

Generates N synthetic explainer records (default 10,000) into a temporary local store, then times the page
load's steps through the app's own event functions (built with that store as "your results" and, unless
--no-reference, the committed reference store beside it), in the order a browser runs them:
  cold load    — read and validate every file of both stores (the first page after the Space starts);
  first view   — the rest of what a page computes before the Ranking tab shows: status and selectors, the
                 ranking's choices, the default model's ranking with its highlights and radar;
  All models   — the next steps: the long table (built once per store change), its summary and download files;
  figures      — the Plots tab's two figures, serialised;
  page load    — a page load on a running Space: incremental re-read (no new files) and the first view again.
Target (issues #5, #21): the first page of 10,000 records in under 2 s, from a Space that has just started.

Example: python bench/bench_space.py --n 10000 --source user [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the synthetic-record generator is a maintainers' helper, not part of the package
sys.path.append(str(Path(__file__).resolve().parent.parent / "scripts" / "maintainer"))


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def run(n: int, source: str = "user", with_reference: bool = True, with_gender: bool = False) -> dict[str, float]:
    """Time the phases on ``n`` synthetic records; return seconds per phase.

    ``source``: the store the timed views show, ``user`` (the synthetic records) or ``reference`` (the committed
    reference store; the synthetic store is still read, as a page load reads both)."""
    import torch
    from _sample_records import sample_records

    from leaderboard_space import sources
    from leaderboard_space.app import build_app, event_functions

    torch.set_num_threads(1)
    records = sample_records(n, validate=False, with_gender=with_gender)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        for record in records:  # written directly: the timed read validates every one of them
            folder = root / record["record_type"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{record['record_id']}.json").write_text(json.dumps(record), encoding="utf-8")
        demo = build_app(str(root), str(Path(tmp) / "requests"), show_reference=with_reference)
        app = event_functions(demo)
        shown = sources.REFERENCE if source == "reference" else sources.USER
        scope = (shown, sources.PAPER_FILTER)

        def read_stores():
            return app["open_page"](None, *scope)

        def first_view(page):
            shown_source, correctness = page[1]["value"], page[2]["value"]
            cell = app["ranking_choices"](None, None, None, None, shown_source, correctness)
            cell = [update["value"] for update in cell]
            table, _, _, _ = app["ranking_view"](*cell, None, shown_source, correctness)
            return shown_source, correctness, cell, table

        # cold load: on a just-started Space, open_page's re-read reads and validates every file of both stores
        page, opened = _timed(read_stores)
        if shown == sources.USER and f"{len(records)} records (" not in page[0]:
            raise RuntimeError(f"the status does not count all {len(records)} records: {page[0][:300]}")
        (shown_source, correctness, cell, table), view = _timed(lambda: first_view(page))
        shown_table = table.data if hasattr(table, "data") else table  # a pandas Styler (highlights) or a frame
        if len(shown_table) == 0:
            raise RuntimeError("the first view is empty")
        if shown_source != shown:
            raise RuntimeError(f"the page shows {shown_source!r}, not {shown!r}: {page[0][:200]}")

        def all_models():
            return app["across_models"]([], [], [], "", "MA", True, True, shown_source, correctness)

        across, across_seconds = _timed(all_models)
        if len(across[4]) == 0:
            raise RuntimeError("the All models table is empty")
        _, figure_seconds = _timed(lambda: [fig.to_json() for fig in app["plots_view"](*cell, shown_source,
                                                                                      correctness)[:2]])

        def page_load_step():
            again = read_stores()
            return first_view(again)

        _, page_load = _timed(page_load_step)
    return {"records": float(len(records)),
            "cold load: open_page (read + validate every file of both stores, status)": opened,
            "first view (ranking choices, ranking, highlights, radar)": view,
            "first page of a just-started Space (cold load + first view)": opened + view,
            "All models tab, next in the chain (long table, summary, files)": across_seconds,
            "figures (Plots tab)": figure_seconds,
            "page load on a running Space (incremental re-read + first view)": page_load}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="number of explainer records (default 10000)")
    parser.add_argument("--source", choices=("user", "reference"), default="user",
                        help="the store the timed views show: the synthetic records (default) or the committed "
                             "reference store (the Space's default first page; the synthetic store is still read)")
    parser.add_argument("--no-reference", action="store_true", help="build the Space without the reference store")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table for BENCHMARKS.md")
    parser.add_argument("--by-gender", action="store_true",
                        help="give every synthetic record a by_gender block (every metric per group), as schema 2.1 "
                             "records have")
    args = parser.parse_args(argv)
    if args.no_reference and args.source == "reference":
        parser.error("--source reference needs the reference store: drop --no-reference")
    results = run(args.n, args.source, not args.no_reference, args.by_gender)
    if args.markdown:
        print("| phase | seconds |\n|---|---|")
        for phase, seconds in results.items():
            if phase != "records":
                print(f"| {phase} | {seconds:.2f} |")
    else:
        for phase, seconds in results.items():
            print(f"{phase:>40}: {seconds:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

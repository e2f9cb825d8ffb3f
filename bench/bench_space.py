"""Speed of the leaderboard Space on a large results store.

Generates N synthetic explainer records (default 10,000) into a temporary local store, then times:
  cold load    — read and validate every file (ResultsLoader.load, first call after the Space starts);
  first view   — what a page load computes before the Ranking tab shows: records → long table (and the Across
                 models summary) → the default model's ranking, plus the Spanish heat table;
  figures      — the follow-up step (the ranking's properties radar + the two Plots-tab figures, serialised);
  page load    — a page load on a running Space: incremental re-read (no new files), table from the kept frame.
Target (issue #5): the first view of 10,000 records in under 2 s, from a Space that has just started.

Example: python bench/bench_space.py --n 10000 [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def run(n: int) -> dict[str, float]:
    """Time the phases on ``n`` synthetic records; return seconds per phase."""
    import torch

    from leaderboard_space import plots, ranking, spanish_view, tables
    from leaderboard_space.data import ResultsLoader
    from leaderboard_space.sample_records import sample_records

    torch.set_num_threads(1)
    records = sample_records(n, validate=False)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        for record in records:  # written directly: the timed read validates every one of them
            folder = root / record["record_type"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{record['record_id']}.json").write_text(json.dumps(record), encoding="utf-8")
        loader = ResultsLoader(str(root))
        loaded, cold = _timed(loader.load)
        if len(loaded.documents) != len(records):
            raise RuntimeError(f"loaded {len(loaded.documents)} of {len(records)} records: {loaded.warnings[:3]}")

        def first_view():
            # what a page load computes before the Ranking tab shows: the long table (also behind the Across
            # models tab), the default model's ranking with its highlights, and the Spanish table
            frame = tables.records_frame(loaded.explainer_records)
            across = tables.display_table(tables.explainer_summary(frame))
            records = loaded.explainer_records
            choice = ranking.cell_choices(records)
            cell = ranking.cell_records(records, choice.configs[0], choice.base_models[0], choice.regimes[0],
                                        choice.seeds[0])
            numbers = ranking.model_ranking(cell)
            table = ranking.ranking_display(numbers)
            ranking.best_per_column(numbers)
            bias = loaded.bias_records
            scheme = next(iter(bias[0]["schemes"])) if bias else None
            heat = spanish_view.scheme_table_html(spanish_view.scheme_table(bias, scheme, "bpi"), scheme, "bpi") if bias else ""
            return frame, table if len(table) else across, heat

        (frame, table, _), view = _timed(first_view)
        if len(table) == 0:
            raise RuntimeError("the first view is empty")

        def figures_step():
            records = loaded.explainer_records
            choice = ranking.cell_choices(records)
            config, base, regime, seed = choice.configs[0], choice.base_models[0], choice.regimes[0], choice.seeds[0]
            cell = ranking.cell_records(records, config, base, regime, seed)
            figs = [plots.properties_radar(ranking.model_ranking(cell), "bench"),
                    plots.ma_by_regime_plot(records, config, base, seed), plots.ma_by_group_plot(cell, "bench")]
            for fig in figs:
                fig.to_json()  # what gr.Plot's serialisation costs

        _, figure_seconds = _timed(figures_step)

        def page_load_step():
            again = loader.load()
            if again.changed:
                raise RuntimeError("an unchanged store was reported as changed")
            # the app reuses the long table when nothing changed; only the summary is recomputed
            return tables.display_table(tables.explainer_summary(frame))

        _, page_load = _timed(page_load_step)
    return {"records": float(len(records)), "cold load (read + validate every file)": cold,
            "first view (shaping → table)": view,
            "first page of a just-started Space (cold load + first view)": cold + view,
            "figures (follow-up step)": figure_seconds,
            "page load on a running Space (incremental re-read + table)": page_load}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="number of explainer records (default 10000)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table for BENCHMARKS.md")
    args = parser.parse_args(argv)
    results = run(args.n)
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

"""GECOBench leaderboard — the Gradio Space.

Run locally with ``python leaderboard_space/app.py [--results DIR|hf://datasets/OWNER/NAME] [--port 7860]``;
on Hugging Face Spaces this file is the ``app_file``. Two sources, never pooled (:mod:`leaderboard_space.sources`):
the **reference results** (``--reference``, ``$GECOBENCH_REFERENCE_REPO`` (a dataset repo, as a published Space
sets it), ``$GECOBENCH_REFERENCE`` or the committed ``reference/store``; hidden with ``--no-reference``), which the
Space opens on, and **your results**, read from ``--results``,
``$GECOBENCH_RESULTS_REPO`` (a dataset repo) or ``$GECOBENCH_RESULTS`` (a folder, default ``results/``). Both are
re-read on every page load and on *Refresh* — no restart needed.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import importlib.resources
import importlib.util
import os
import sys
import threading
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _ensure_package() -> None:
    """Make ``leaderboard_space`` importable both from the repository (``python leaderboard_space/app.py``)
    and on a Space, where this folder's contents are the repository root."""
    if "leaderboard_space" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "leaderboard_space", _HERE / "__init__.py", submodule_search_locations=[str(_HERE)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["leaderboard_space"] = module
    spec.loader.exec_module(module)


_ensure_package()

import gradio as gr
import numpy as np
import pandas as pd

import gecobench
from gecobench.formatting import format_interval
from gecobench.records import SCHEMA_VERSION
from gecobench.spanish.plots import model_label
from gecobench.store import RESULTS_REPO_ENV, hub_repo_of
from leaderboard_space import (
    contrast,
    drilldown,
    gaps,
    plots,
    ranking,
    sources,
    submit_seam,
    tables,
)
from leaderboard_space import spanish_view as spanish_tab
from leaderboard_space.data import LoadedResults, ResultsLoader
from leaderboard_space.dataset_info import geco_statistics
from leaderboard_space.downloads import analysis_table, figure_files, table_files
from leaderboard_space.glossary import glossary_markdown
from leaderboard_space.page_assets import URL_JS, URL_KEYS, columns_from_query, launch_options
from leaderboard_space.texts import (
    EMPTY_MESSAGE,
    IDENTICAL_PAIRS,
    RANKING_LEGEND,
    SUBMIT_GUIDE,
    about_markdown,
)

MAX_WARNINGS_SHOWN = 20
#: a column's best value: bold on light green, with the text colour that keeps it readable in dark mode too
BEST_STYLE = f"{contrast.shaded_style(contrast.BEST_CELL)}; font-weight: bold"
INDICES = ["bpi", "bri"]
RANKING_VIEW, PIVOT_VIEW = "Ranking (one row per explainer)", "Pivot: explainer × regime (MA)"
GAPS_VIEW = "Gender gaps: every metric"
PUBLISHED_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "spanish" / "published"
# the example code submission, from the installed package (a checkout's submissions/examples/ or the wheel's)
SUBMIT_TEMPLATE = Path(str(importlib.resources.files("submissions").joinpath("examples", "gradient_norm_explainer.py")))


def sandbox_limits_text() -> str:
    """The sandbox's resource limits in words, read from the submissions package (its defaults)."""
    try:
        from submissions.sandbox import SandboxLimits
    except ImportError:
        return ""
    limits = SandboxLimits()
    return (f"code runs in a sandbox without network with at most {limits.memory_bytes / 2**30:.0f} GiB of memory, "
            f"{limits.cpu_seconds / 60:.0f} CPU minutes and {limits.wall_seconds / 60:.0f} minutes of wall time per run.")


def status_markdown(loaded: LoadedResults, frame_warnings: list[str], label: str = "") -> str:
    """The line above the tabs: the source's label, where it is read from, counts, versions, and every skipped
    record as a visible warning."""
    heading = f"### {label}\n\n" if label else ""
    if not loaded.documents:
        text = heading + EMPTY_MESSAGE.format(source=loaded.source)
    else:
        text = heading + f"Results from `{loaded.source}` — {tables.versions_line(loaded.documents)}"
    warnings = loaded.warnings + frame_warnings
    if warnings:
        shown = "\n".join(f"- {w}" for w in warnings[:MAX_WARNINGS_SHOWN])
        more = f"\n- … and {len(warnings) - MAX_WARNINGS_SHOWN} more" if len(warnings) > MAX_WARNINGS_SHOWN else ""
        text += f"\n\n⚠️ **{len(warnings)} record(s) skipped** (malformed or partial):\n{shown}{more}"
    return text


def public_location(location: str, roots: list[Path]) -> str:
    """``location`` as the page may show it: a URL unchanged; a local file as its path relative to the first of
    ``roots`` that holds it (else its name), so the page never shows where the serving machine keeps its files."""
    if not location or "://" in location:
        return location
    path = Path(location)
    for root in roots:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            continue
    return path.name


def provenance_line(state: LeaderboardState, source: str, filter_value: str | None, fallback: str = "") -> str:
    """The one line under the title: which results, which sentences, how many records, and a warning mark when
    records were skipped (the details — store location, versions, each skipped file — are in the accordion)."""
    records = state.explainer_records
    if not state.loaded.documents:
        return f"**No results yet** in `{state.loaded.source}` — open *Results shown* below for how to add some."
    if source == sources.REFERENCE:
        versions = ", ".join(sources.package_versions_of(records)) or "version unknown"
        bases = sources.base_models_of(records)
        what = f"**Reference results** · gecobench-hub {versions} · base {', '.join(bases) or 'unknown'}"
        if bases and bases != [sources.PAPER_BASE_MODEL]:
            what += f" (not the paper's {sources.PAPER_BASE_MODEL}: not the paper's numbers)"
    else:
        what = "**Your results**"
    shown = len(state.records(filter_value)) if filter_value is not None else 0
    filter_label = sources.FILTER_LABELS.get(filter_value, f"Filter: {filter_value}").split(":")[0]
    line = f"{what} · {filter_label} · {shown} records"
    skipped = len(state.loaded.warnings) + len(state.frame_warnings)
    if skipped:
        line += f" · ⚠️ {skipped} skipped"
    if fallback:
        line = f"ℹ️ {line}"
    return line


class LeaderboardState:
    """What the app has read: shared by all sessions, replaced as a whole on refresh.

    The long table (:func:`tables.records_frame`, one row per record, behind the All models tab) is built when a
    view first asks for it, not on the page load: with 10,000 records it costs as much as the Ranking tab's whole
    first view, and the Ranking tab reads the records themselves. Every record the loader returns passed the
    record schema on read, which requires every field the long table reads, so both views show the same records.
    """

    def __init__(self, results_location: str | None, checkpoint_roots: list[Path] | None = None,
                 name: str = sources.USER) -> None:
        self.name = name  # which source this is (sources.REFERENCE or sources.USER): part of download file names
        self.loader = ResultsLoader(results_location)
        self.loaded = LoadedResults()
        self._frame: tables.RecordsFrame | None = None  # built on first use (see the class docstring)
        self._filter_frames: dict[str | None, tables.RecordsFrame] = {}
        self._frame_lock = threading.Lock()
        self.side_files = drilldown.SideFiles(results_location)
        self.repo = hub_repo_of(results_location, RESULTS_REPO_ENV)
        self.root = self.side_files.root
        self.checkpoint_roots = list(checkpoint_roots or [])
        self.dataset_card = sources.dataset_card(self.repo)
        self.read_once = False

    def ensure_read(self) -> None:
        """Read the store if no page load has yet: an API call may come before any page (or between restarts)."""
        if not self.read_once:
            self.refresh()

    def refresh(self) -> None:
        self.read_once = True
        loaded = self.loader.load()
        # an unchanged append-only store gives the same table: keep the one built (if any) on every page load
        if loaded.changed or not self.loaded.documents:
            # replaced together: a view running meanwhile sees the old store's table or the new one, not a mix
            with self._frame_lock:
                self.loaded, self._frame, self._filter_frames = loaded, None, {}
        else:
            self.loaded = loaded

    @property
    def frame(self) -> tables.RecordsFrame:
        """The long table of the store as last read, built on first use and kept until the store changes."""
        with self._frame_lock:
            if self._frame is None:
                self._frame = tables.records_frame(self.loaded.explainer_records)
            return self._frame

    @property
    def frame_warnings(self) -> list[str]:
        """Records the long table skipped, once it is built (never for records the loader validated)."""
        return self._frame.warnings if self._frame is not None else []

    def records(self, filter_value: str | None) -> list[dict]:
        """The valid explainer records of one correctness filter (:func:`sources.with_filter`)."""
        return sources.with_filter(self.explainer_records, filter_value)

    def frame_for(self, filter_value: str | None) -> tables.RecordsFrame:
        """The long table of one correctness filter: the rows of the whole store's table (built once per store
        change) whose records have that filter; the rows are per record, so nothing is recomputed."""
        whole = self.frame
        if filter_value not in self._filter_frames:
            wanted = {r["record_id"] for r in self.records(filter_value)}
            rows = whole.frame[whole.frame["record_id"].isin(wanted)] if not whole.frame.empty else whole.frame
            self._filter_frames[filter_value] = dataclasses.replace(whole, frame=rows.reset_index(drop=True))
        return self._filter_frames[filter_value]

    def cards(self, record: dict) -> tuple[str, str]:
        """(model card, dataset card) of a record's row: Hub URLs when the store is on the Hub, else the cards'
        names relative to their checkpoint root or the package, never a path of the machine serving the Space."""
        roots = [*self.checkpoint_roots, _HERE.parent]
        return (public_location(sources.model_card(record.get("model") or {}, self.checkpoint_roots), roots),
                public_location(self.dataset_card, roots))

    @property
    def explainer_records(self) -> list[dict]:
        """The store's explainer records, less any the long table skipped once it was built (records validated
        on read never are: see the class docstring), so every tab shows the same records."""
        records, built = self.loaded.explainer_records, self._frame  # one read each: a refresh may replace them
        if built is None or not built.warnings:
            return records
        valid = set(built.frame["record_id"]) if not built.frame.empty else set()
        return [r for r in records if r.get("record_id") in valid]

    def record_link(self, record: dict) -> str:
        """Where a record's file lives: a Hub URL for a Hub store, else its path in the store."""
        path = f"explainer_score/{record['record_id']}.json"
        if self.repo:
            return f"https://huggingface.co/datasets/{self.repo}/blob/main/{path}"
        return path  # relative to the store, which the details name (never a path of the serving machine)

    def raw_results_link(self) -> str:
        if self.repo:
            return f"[the raw results dataset](https://huggingface.co/datasets/{self.repo})"
        return f"the raw results folder `{self.loaded.source}`"

    def score_of(self, record_ids: list[str]) -> str:
        """MA of a finished submission's records, e.g. ``MA 0.512 (3 records)``."""
        wanted = set(record_ids)
        values = [r["metrics"]["mass_accuracy"].get("value") for r in self.loaded.explainer_records
                  if r.get("record_id") in wanted]
        values = [v for v in values if isinstance(v, (int, float))]
        if not values:
            return "records not in the results yet" if record_ids else ""
        if len(values) == 1:
            return f"MA {values[0]:.3f}"
        return f"MA {min(values):.3f}–{max(values):.3f} ({len(values)} records)"


def _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines) -> tables.Filters:
    return tables.Filters(
        configs=list(configs or []), regimes=list(regimes or []), base_models=list(base_models or []),
        search=search or "", sort_by=sort_by or "MA", descending=bool(descending), show_baselines=bool(show_baselines),
    )


def _best_styles(table: pd.DataFrame, best: dict[str, int]) -> pd.DataFrame:
    styles = pd.DataFrame("", index=table.index, columns=table.columns)
    for column, position in best.items():
        if column in styles.columns:
            styles.iloc[position, styles.columns.get_loc(column)] = BEST_STYLE
    return styles


def _best_gap_styles(table: pd.DataFrame, best: dict[str, int]) -> pd.DataFrame:
    """The gap view's marks: per metric, the best gap's cell (smallest largest |gap|, non-baselines only)."""
    styles = pd.DataFrame("", index=table.index, columns=table.columns)
    if gaps.LARGEST in styles.columns:
        for position in best.values():
            styles.iloc[position, styles.columns.get_loc(gaps.LARGEST)] = BEST_STYLE
    return styles


def gaps_view_table(records: list[dict], record_link=None) -> tuple[pd.DataFrame, dict[str, int]]:
    """The gender-gap view of one cell's records, as shown (value, ``95% CI`` text beside it), and its best gaps."""
    numbers = gaps.gender_gaps(records, record_link)
    return ranking.ranking_display(numbers), gaps.best_gap_rows(numbers)


def identical_pairs_note(ranking_table: pd.DataFrame) -> str:
    """Name the explainers of a ranking whose numbers coincide, with the reason when it is known."""
    if ranking_table.empty:
        return ""
    metric_columns = [c for c in ("MA", "MA lo", "MA hi", ranking.GAP, "MRC", "SP") if c in ranking_table.columns]
    names = ranking_table["Explainer"].tolist()
    values = ranking_table[metric_columns].to_numpy(dtype=float)
    notes = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if np.allclose(values[i], values[j], rtol=1e-9, atol=1e-12, equal_nan=True):
                reason = IDENTICAL_PAIRS.get(frozenset({names[i], names[j]}), "")
                notes.append(f"**{names[i]}** and **{names[j]}** give identical scores here. {reason}".strip())
    return "\n\n".join(notes)


def empty_metric_reasons(cell: list[dict]) -> list[str]:
    """Why a metric column of one model's ranking is empty in every row: the records' own ``reason`` (e.g. log RMA
    on OLA: trained from scratch, no zero-shot model of its base; on ZS: it is the reference), one line per metric."""
    notes = []
    for key, label in tables.METRIC_LABELS.items():
        blocks = [r.get("metrics", {}).get(key) for r in cell]
        blocks = [b for b in blocks if isinstance(b, dict)]
        if not blocks or any(b.get("value") is not None for b in blocks):
            continue
        reasons = sorted({str(b["reason"]) for b in blocks if b.get("reason")})
        notes.append(f"**{label}** is empty for this model: {'; '.join(reasons) or 'no record computed it'}.")
    return notes


def default_regime(records: list[dict], config: str, base_model: str, seed: str, regimes: list[str]) -> str:
    """The regime a page opens on: the first (in the Space's order) whose records of that model have a value in
    every metric column, so the first view has no empty column; the first regime when none has."""
    for regime in regimes:
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        if cell and not empty_metric_reasons(cell):
            return regime
    return regimes[0]


TAB_IDS: tuple[str, ...] = ("ranking", "plots", "drilldown", "explainers", "dataset", "spanish", "submit", "about")
VIEWS: tuple[str, ...] = (RANKING_VIEW, GAPS_VIEW, PIVOT_VIEW)


def view_from_query(params: dict[str, str]) -> dict[str, str | list[str] | None]:
    """The view a URL's query string names (``?tab=about&config=binary_all&regime=CE…``; keys
    :data:`page_assets.URL_KEYS` and ``tab``), each value None when absent or not one the page offers; the views
    check the rest (an unknown config falls back to the first, as a page without a URL does). ``columns`` is the
    list of the ranking's column groups (:func:`page_assets.columns_from_query`; None: the default ones)."""
    view = {key: (str(params[key]) if params.get(key) not in (None, "") else None) for key in ("tab", *URL_KEYS)}
    if view["tab"] not in TAB_IDS:
        view["tab"] = None
    if view["source"] not in (sources.REFERENCE, sources.USER):
        view["source"] = None
    if view["view"] not in VIEWS:
        view["view"] = None
    view["columns"] = columns_from_query(view["columns"])
    return view


def event_functions(demo: gr.Blocks) -> dict:
    """The app's event functions by name (the views are mostly private events): calling one is what the
    browser's event does. For tests and benchmarks that drive the views without a server."""
    functions = {}
    for block_function in demo.fns.values():
        if block_function.fn is not None:  # the client-side steps (the URL's) have no Python function
            functions.setdefault(block_function.fn.__name__, block_function.fn)
    return functions


class SpaceViews:
    """The Space's state (both stores, the requests folder, the GECO files) and every callback its page runs, as
    methods: a view is a call (``SpaceViews(...).ranking_view(...)``), testable without a browser or a server;
    :func:`build_app` lays the page out and wires these methods to its components. Arguments as
    :func:`build_app`'s."""

    def __init__(self, results_location: str | None = None, requests_location: str | None = None,
                 geco_dir: str | None = None, reference_location: str | None = None,
                 show_reference: bool = True) -> None:
        self.geco_dir, self.requests_location = geco_dir, requests_location
        self.reference_location = reference_location
        if self.reference_location and not show_reference:
            raise ValueError(f"reference_location={reference_location!r} with show_reference=False: a hidden "
                             "reference is never read; give one or the other")
        self.user_state = LeaderboardState(results_location, sources.checkpoint_roots_from_env())
        if show_reference:
            self.reference_location = reference_location or sources.default_reference_location()
            self.reference_state = LeaderboardState(
                self.reference_location, sources.checkpoint_roots_from_env() + sources.default_reference_checkpoints(),
                name=sources.REFERENCE)
        else:
            self.reference_location, self.reference_state = None, None
        self.states = {sources.USER: self.user_state, sources.REFERENCE: self.reference_state}
        self.first_source = sources.REFERENCE if self.reference_state is not None else sources.USER
        self.on_space = bool(os.environ.get("SPACE_ID"))
        # the Hub organisation the Space's stores live in (a published Space's): the About tab's links and the cards
        self.hub_org = next((s.repo.split("/")[0] for s in (self.reference_state, self.user_state)
                             if s is not None and s.repo), None)
        plots.warm_up()  # the first page's figures then cost what later pages' do

    def reference_count(self) -> int | None:
        if self.reference_state is None:
            return None
        self.reference_state.ensure_read()
        return len(self.reference_state.explainer_records)

    def scope(self, source: str | None, filter_value: str | None) -> tuple[LeaderboardState, str | None]:
        """The store a view reads (your results when the reference is asked for but hidden or empty, as on the
        page) and the filter it shows (the one asked for when its records have it, else the paper's, else the
        first present)."""
        state = self.states[sources.chosen_source(source, self.reference_count(), self.reference_location)[0]]
        state.ensure_read()
        return state, sources.chosen_filter(state.explainer_records, filter_value)

    def scoped_records(self, source, filter_value) -> tuple[LeaderboardState, list[dict]]:
        state, chosen = self.scope(source, filter_value)
        return state, state.records(chosen)

    # ------------------------------------------------------------------ ranking, pivot, plots, drill-down
    def ranking_choices(self, config, base_model, regime, seed, source, filter_value):
        _, records = self.scoped_records(source, filter_value)
        options = ranking.cell_choices(records, config, base_model)
        if options.empty:
            return (gr.update(choices=[], value=None), gr.update(choices=[], value=None),
                    gr.update(choices=[], value=None), gr.update(choices=[], value=None))
        config = config if config in options.configs else options.configs[0]
        base_model = base_model if base_model in options.base_models else options.base_models[0]
        seed = seed if seed in options.seeds else options.seeds[0]
        regime = regime if regime in options.regimes else default_regime(records, config, base_model, seed,
                                                                         options.regimes)
        return (gr.update(choices=options.configs, value=config),
                gr.update(choices=options.base_models, value=base_model),
                gr.update(choices=options.regimes, value=regime), gr.update(choices=options.seeds, value=seed))

    def ranking_view(self, config, base_model, regime, seed, view, source, filter_value, column_groups=None):
        """The ranking (or pivot) table, its notes, its download files and the properties radar. On the ranking
        view ``column_groups`` (names of :data:`ranking.COLUMN_GROUPS`; ``None``: all) chooses the optional
        columns shown; the downloads keep every column."""
        state, chosen = self.scope(source, filter_value)
        records = state.records(chosen)
        if not records:
            return (pd.DataFrame(columns=["Explainer"]), "No explainer records in the store yet (see the status above).",
                    None, plots.message_figure("No explainer records yet."))
        choice = f"{config} · {base_model} · {regime} · {ranking.seed_text(seed)}"
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        numbers = ranking.model_ranking(cell, state.record_link, state.cards)
        # the source and the filter are part of every file name: downloads of two sources never overwrite each other
        prefix = f"{state.name}-{chosen}"
        notes = [RANKING_LEGEND]
        if view == PIVOT_VIEW:
            pivot = ranking.pivot_by_regime(records, config, base_model, seed, rank_by=regime)
            shown = ranking.ranking_display(pivot)
            notes = [f"MA [95% CI] of every explainer (rows) per model regime (columns) — {config} · {base_model} · "
                     f"{ranking.seed_text(seed)}; {pivot.attrs.get('order', '')}."]
            files = table_files(analysis_table(pivot), f"{prefix}-pivot-{config}-{base_model}-{ranking.seed_file_part(seed)}")
            styled = shown.style.format(format_interval, subset=list(shown.select_dtypes("floating").columns))
        elif view == GAPS_VIEW:
            shown, best = gaps_view_table(cell, state.record_link)
            notes = [gaps.gaps_legend(), "**Bold green**: the best gap of each metric (its smallest largest |gap|, "
                     "non-baseline explainers only)."]
            files = table_files(analysis_table(gaps.gender_gaps(cell, state.record_link)),
                                f"{prefix}-gaps-{config}-{base_model}-{regime}-{ranking.seed_file_part(seed)}")
            styled = shown.style.apply(lambda _: _best_gap_styles(shown, best), axis=None).format(
                format_interval, subset=list(shown.select_dtypes("floating").columns))
        else:
            shown = ranking.chosen_columns(ranking.ranking_display(numbers), column_groups)
            best = ranking.best_per_column(numbers)
            files = table_files(analysis_table(numbers), f"{prefix}-ranking-{config}-{base_model}-{regime}-{ranking.seed_file_part(seed)}")
            styled = shown.style.apply(lambda _: _best_styles(shown, best), axis=None).format(
                format_interval, subset=list(shown.select_dtypes("floating").columns))
            identical = identical_pairs_note(numbers)
            if identical:
                notes.append(identical)
            notes = [*empty_metric_reasons(cell), *notes]  # first: the reason sits right under the table
        notes.append(f"Downloads: this table as CSV and JSON (below); every record: {state.raw_results_link()}.")
        radar_figure = plots.properties_radar(numbers, choice) if len(numbers) else plots.message_figure(
            "No records for this choice.")
        return styled, "\n\n".join(notes), files, radar_figure

    def ranking_api(self, config: str, base_model: str, regime: str, seed: str, source: str | None = None,
                    correctness_filter: str = sources.PAPER_FILTER) -> dict:
        """The ranking of one model (config, base model, regime, seed) of one source ("reference" or "user")
        and one correctness filter, as {"headers": [...], "data": [[...]]}."""
        source = self.first_source if source is None else source
        state, records = self.scoped_records(source, correctness_filter)
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        shown = ranking.ranking_display(ranking.model_ranking(cell, state.record_link, state.cards))
        return {"headers": [str(c) for c in shown.columns],
                "data": shown.astype(object).where(shown.notna(), None).values.tolist()}

    def gender_gaps_api(self, config: str, base_model: str, regime: str, seed: str, source: str | None = None,
                        correctness_filter: str = sources.PAPER_FILTER) -> dict:
        """Every metric by gender for one model (config, base model, regime, seed) of one source and filter: each
        group's value and every signed gap with its interval, as {"headers": [...], "data": [[...]]}."""
        source = self.first_source if source is None else source
        state, records = self.scoped_records(source, correctness_filter)
        shown, _ = gaps_view_table(ranking.cell_records(records, config, base_model, regime, seed), state.record_link)
        return {"headers": [str(c) for c in shown.columns],
                "data": shown.astype(object).where(shown.notna(), None).values.tolist()}

    def plots_view(self, config, base_model, regime, seed, source, filter_value):
        state, chosen = self.scope(source, filter_value)
        records = state.records(chosen)
        if not records or not config:
            empty = plots.message_figure("No explainer records yet.")
            return empty, empty, None
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        by_regime = plots.ma_by_regime_plot(records, config, base_model, seed)
        by_group = plots.ma_by_group_plot(
            cell, f"{config} · {base_model} · {regime} · {ranking.seed_text(seed)} (the Ranking tab's choice)")
        prefix = f"{state.name}-{chosen}"
        files = figure_files({f"{prefix}-ma-by-regime-{config}-{base_model}-{ranking.seed_file_part(seed)}": by_regime,
                              f"{prefix}-ma-by-group-{config}-{base_model}-{regime}-{ranking.seed_file_part(seed)}": by_group})
        return by_regime, by_group, files

    def drill_sentences(self, config, base_model, regime, seed, search, source, filter_value, current=None):
        state, chosen = self.scope(source, filter_value)
        records = state.records(chosen)
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        documents = [d for d in (state.side_files.get(str(r["record_id"])) for r in cell) if d is not None]
        found = drilldown.sentence_page(documents, search or "")
        options = found.options
        if not documents and cell and state.name == sources.REFERENCE and chosen != sources.PAPER_FILTER:
            # the reference ships the side files of the paper's filter only (they are 50 kB per record)
            message = ("No per-sentence scores for this choice: the reference results ship them for the paper's "
                       "filter only. Choose it under *Sentences scored*.")
        elif not documents:
            message = "No per-sentence scores for this choice (its records were written without side files)."
        else:
            message = found.message(search or "")
        keys = [key for _, key in options]
        # the sentence shown stays when it is still offered (a restored URL's, or after a new search)
        value = current if current in keys else (keys[0] if keys else None)
        return gr.update(choices=options, value=value), message

    def drill_view(self, config, base_model, regime, seed, key, source, filter_value):
        state, records = self.scoped_records(source, filter_value)
        cell = ranking.cell_records(records, config, base_model, regime, seed)
        provenance = drilldown.provenance_html(cell, state.record_link, state.cards)
        if not key:
            return drilldown.heatmap_html([]) + provenance
        heat = drilldown.heatmap_html(drilldown.sentence_rows(cell, state.side_files, key),
                                      "None of this model's records has per-sentence scores for this sentence.")
        return contrast.readable_shading(heat) + provenance  # opaque shades with readable text, in both modes

    # ------------------------------------------------------------------ across models (the former first view)
    def explainer_summary_view(self, configs, regimes, base_models, search, sort_by, descending, show_baselines,
                               source, filter_value):
        state, chosen = self.scope(source, filter_value)
        frame = state.frame_for(chosen)
        filters = _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines)
        summary = tables.explainer_summary(frame, tables.Filters(**{**filters.__dict__, "sort_by": None}))
        sort = sort_by if sort_by in summary.columns else ("MA" if "MA" in summary.columns else None)
        return tables.sort_summary(summary, sort, bool(descending))

    def explainer_downloads(self, configs, regimes, base_models, search, sort_by, descending, show_baselines, source,
                            filter_value):
        summary = self.explainer_summary_view(configs, regimes, base_models, search, sort_by, descending,
                                              show_baselines, source, filter_value)
        state, chosen = self.scope(source, filter_value)
        return (tables.display_table(summary),
                table_files(analysis_table(summary), f"{state.name}-{chosen}-across-models"))

    def explainer_table_api(self, configs: list[str], regimes: list[str], base_models: list[str], search: str,
                            sort_by: str, descending: bool, show_baselines: bool, source: str | None = None,
                            correctness_filter: str = sources.PAPER_FILTER) -> dict:
        """The Explainers table for the given filters, of one source ("reference" or "user") and one
        correctness filter, as {"headers": [...], "data": [[...], ...]}."""
        source = self.first_source if source is None else source
        state, chosen = self.scope(source, correctness_filter)
        filters = _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines)
        shown = tables.explainer_table(state.frame_for(chosen), filters)
        return {"headers": [str(c) for c in shown.columns], "data": shown.astype(object).values.tolist()}

    # ------------------------------------------------------------------ Spanish
    # The Spanish tab reads the store *Results shown* names (one store at a time: a Spanish table never mixes two).
    def spanish_state(self, source) -> tuple[LeaderboardState, str]:
        """The store the Spanish tab reads and its label (the reference's or yours, as the selector says)."""
        source = sources.chosen_source(source, self.reference_count(), self.reference_location)[0]
        state = self.states[source]
        state.ensure_read()
        return state, "the reference results" if source == sources.REFERENCE else "your results"

    def spanish_view(self, scheme, index, model, source=None):
        state, store_label = self.spanish_state(self.first_source if source is None else source)
        records = spanish_tab.current_records(state.loaded.bias_records)  # one per unit (issue #21)
        index = index or "bpi"
        store = spanish_tab.store_line(store_label, state.loaded.source, len(records))
        if not records or not scheme:
            source = html.escape(state.loaded.source)
            message = (f"<p>No Spanish <code>model_bias</code> records in {store_label} (<code>{source}</code>). "
                       "Import the authors' recorded predictions "
                       f"with <code>gecobench spanish recorded --store {source}</code> or score a "
                       "masked LM with <code>gecobench spanish score --model MODEL</code>.</p>")
            return (message,
                    None, gr.update(choices=[], value=None), "", None,
                    plots.message_figure("No Spanish records yet."))
        table = spanish_tab.scheme_table(records, scheme, index)
        heat_html = contrast.readable_shading(spanish_tab.scheme_table_html(table, scheme, index))
        with_scheme = spanish_tab.records_with_scheme(records, scheme)
        models = [model_label(r) for r in with_scheme]
        if model not in models:  # another scheme: keep the same masked LM (its other top-K record) when it has one
            same_lm = [m for m in models if model and m.split(" · ")[0] == model.split(" · ")[0]]
            model = same_lm[0] if same_lm else (models[0] if models else None)
        chosen = next((r for r in with_scheme if model_label(r) == model), None)
        radar = (spanish_tab.radar_plot(chosen, scheme, index) if chosen is not None
                 else plots.message_figure(f"No model scores {scheme}."))
        legend = "\n\n".join(t for t in (store, spanish_tab.ORDER_TEXT, spanish_tab.CATEGORY_TEXT,
                                           spanish_tab.legend_markdown(scheme), spanish_tab.published_note(scheme)) if t)
        comparison = spanish_tab.published_comparison(records, PUBLISHED_DIR, index, scheme)
        return (heat_html, table_files(table, f"{state.name}-spanish-{scheme}-{index}"),
                gr.update(choices=models, value=model),
                legend, comparison if not comparison.empty else None, radar)

    def source_banner(self, source: str, fallback: str, filter_value: str | None) -> tuple[str, str]:
        """(status line, filter note) of the shown source."""
        state = self.states[source]
        label = (sources.reference_label(state.explainer_records) if source == sources.REFERENCE
                 else sources.user_label(state.loaded.source, len(state.explainer_records)))
        status = status_markdown(state.loaded, state.frame_warnings, label)
        if fallback:
            status = f"ℹ️ {fallback}\n\n{status}"
        return status, sources.filter_note(state.explainer_records, filter_value)

    def view_from_url(self, request: gr.Request):
        """A page load's first step: the tab, source, filter, model, view, sentence and ranking columns its URL
        names (unchanged components where it names none); :func:`open_page` and the views then check them
        against the stores."""
        view = view_from_query(dict(request.query_params) if request is not None else {})
        keep = gr.update()
        def chosen(key, choices=None):
            value = view[key]
            if value is None:
                return keep
            return gr.update(value=value) if choices is None else gr.update(choices=choices, value=value)
        filter_choices = sources.filter_choices([])
        if view["filter"] is not None and view["filter"] not in [v for _, v in filter_choices]:
            filter_choices = [*filter_choices, (view["filter"], view["filter"])]  # open_page relabels them
        source = view["source"] if view["source"] in {s for s, st in self.states.items() if st is not None} else None
        return (
            gr.Tabs(selected=view["tab"]) if view["tab"] else keep,
            gr.update(value=source) if source else keep,
            chosen("filter", filter_choices),
            chosen("config"), chosen("base"), chosen("regime"), chosen("seed"), chosen("view"),
            chosen("search"),
            chosen("sentence", [(view["sentence"], view["sentence"])]) if view["sentence"] else keep,
            chosen("columns"),
        )

    def open_page(self, scheme, source=None, filter_value=sources.PAPER_FILTER):
        """A page load's first step: re-read both stores (only new files) and set the source, the filter and the
        status. The long table is left to :func:`across_models`, later in the chain, so the Ranking tab (the
        first view) does not wait for it."""
        source = self.first_source if source is None else source
        for each in self.states.values():
            if each is not None:
                each.refresh()
        source, fallback = sources.chosen_source(source, self.reference_count(), self.reference_location)
        state, chosen = self.scope(source, filter_value)
        reference_choice = None
        if self.reference_state is not None:
            reference_choice = sources.reference_choice_label(self.reference_state.explainer_records,
                                                              self.reference_state.loaded.source)
        user_choice = sources.user_label(self.user_state.loaded.source, len(self.user_state.explainer_records))
        status, filter_text = self.source_banner(source, fallback, chosen)
        line = provenance_line(state, source, chosen, fallback)
        schemes = sorted({s for r in self.states[source].loaded.bias_records for s in r.get("schemes", {})})
        scheme = scheme if scheme in schemes else (schemes[0] if schemes else None)
        return (
            status,
            gr.update(choices=sources.source_choices(reference_choice, user_choice), value=source),
            gr.update(choices=sources.filter_choices(state.explainer_records), value=chosen),
            filter_text,
            gr.update(choices=schemes, value=scheme),
            line,
            # the details open themselves when they hold what the reader must see: an empty store, skipped records
            gr.update(open=True) if not state.loaded.documents or state.loaded.warnings else gr.update(),
        )

    def across_models(self, configs, regimes, base_models, search, sort_by, descending, show_baselines,
                      source=None, filter_value=sources.PAPER_FILTER):
        """The All models tab: its filter choices, the table (building the long table if this store change has
        not yet) and its download files."""
        source = self.first_source if source is None else source
        state, chosen = self.scope(source, filter_value)
        frame = state.frame_for(chosen)
        options = tables.choices(frame)
        keep = lambda chosen_values, allowed: [c for c in (chosen_values or []) if c in allowed]
        sort_choices = tables.sort_keys(tables.explainer_summary(frame)) or ["MA"]
        sort_by = sort_by if sort_by in sort_choices else sort_choices[0]
        table, files = self.explainer_downloads(configs, regimes, base_models, search, sort_by, descending,
                                           show_baselines, source, chosen)
        return (
            gr.update(choices=options["configs"], value=keep(configs, options["configs"])),
            gr.update(choices=options["regimes"], value=keep(regimes, options["regimes"])),
            gr.update(choices=options["base_models"], value=keep(base_models, options["base_models"])),
            gr.update(choices=sort_choices, value=sort_by),
            table,
            files,
        )

    def refresh(self, configs, regimes, base_models, search, sort_by, descending, show_baselines, scheme, index, model,
                source=None, filter_value=sources.PAPER_FILTER):
        """Everything a page shows, in one call (the ``/refresh`` API): the page itself loads it in steps
        (:func:`open_page`, the ranking, …, :func:`across_models`, the Spanish tab)."""
        source = self.first_source if source is None else source
        status, source_update, filter_update, filter_text, scheme_update, *_ = self.open_page(scheme, source,
                                                                                              filter_value)
        source, chosen = source_update["value"], filter_update["value"]
        *choices, view, _ = self.across_models(configs, regimes, base_models, search, sort_by, descending,
                                          show_baselines, source, chosen)
        spanish = self.spanish_view(scheme_update["value"], index, model, source)
        return (status, source_update, filter_update, filter_text, *choices, view, scheme_update, spanish[2],
                spanish[0])

    def dataset_view(self):
        table, message = geco_statistics(self.geco_dir)
        return table, (f"⚠️ {message}" if message else "Statistics computed from the released GECO files (cached).")

    def queue_view(self):
        return submit_seam.queue_frame(self.requests_location, self.user_state.score_of)

    def submit(self, track, name, version, authors, description, license_, contact, model_set, submitter, upload,
               profile: gr.OAuthProfile | None = None):
        metadata = {"name": name, "version": version, "authors": authors, "description": description,
                    "license": license_, "contact": contact, "model_set": model_set}
        path = upload if isinstance(upload, str) or upload is None else getattr(upload, "name", None)
        # on a Space the signed-in Hugging Face account is the submitter; locally the name field
        user = profile.username if profile is not None else submitter
        message = submit_seam.submit_form(self.requests_location, track, metadata, path, user)
        return (message, *self.queue_view())



def build_app(results_location: str | None = None, requests_location: str | None = None,
              geco_dir: str | None = None, reference_location: str | None = None,
              show_reference: bool = True) -> gr.Blocks:
    """The Blocks UI. ``results_location``: your results, a folder or ``hf://datasets/…`` (default from the
    environment); ``reference_location``: the reference results (default
    :func:`sources.default_reference_location`: ``$GECOBENCH_REFERENCE_REPO``, ``$GECOBENCH_REFERENCE`` or the
    committed ``reference/store``), hidden when ``show_reference`` is False; ``requests_location``: the
    submissions' requests folder (default ``$GECOBENCH_REQUESTS`` or ``requests/``); ``geco_dir``: GECO files for
    the Dataset tab (default: the loader's own default). The two stores are read separately and never pooled."""
    views = SpaceViews(results_location, requests_location, geco_dir, reference_location, show_reference)
    # the names the layout below wires (methods of the views, bound to this page's state)
    reference_state, first_source, on_space, hub_org = (views.reference_state, views.first_source,
                                                        views.on_space, views.hub_org)
    ranking_choices = views.ranking_choices
    ranking_view = views.ranking_view
    ranking_api = views.ranking_api
    gender_gaps_api = views.gender_gaps_api
    plots_view = views.plots_view
    drill_sentences = views.drill_sentences
    drill_view = views.drill_view
    explainer_downloads = views.explainer_downloads
    explainer_table_api = views.explainer_table_api
    spanish_view = views.spanish_view
    view_from_url = views.view_from_url
    open_page = views.open_page
    across_models = views.across_models
    refresh = views.refresh
    dataset_view = views.dataset_view
    queue_view = views.queue_view
    submit = views.submit

    with gr.Blocks(title="GECOBench leaderboard") as demo:
        # The first screen answers "which explainer is best?": one title line, one provenance line, and every
        # detail (where the results come from, the two selectors, the filter's meaning) in an accordion, so that
        # the ranking's first ten rows show at 1024×768.
        with gr.Row(elem_id="masthead", equal_height=True):
            gr.HTML("<h1 id='page-title'>GECOBench leaderboard</h1>", elem_id="page-title-block", container=False,
                    padding=False)
            provenance = gr.Markdown("Loading results…", elem_id="provenance", container=False)
        with gr.Accordion("Results shown, sentences scored, where they come from", open=False,
                          elem_id="details") as details:
            gr.Markdown("Are explanations of language models correct — and does gender bias distort them? Pick a "
                        "model on the **Ranking** tab; every number has its 95% interval.")
            with gr.Row():
                status = gr.Markdown("Loading results…", elem_id="status")
                refresh_button = gr.Button("Refresh results", scale=0, elem_id="refresh")
            with gr.Row():
                # every GECO view (ranking, pivot, plots, drill-down, All models, downloads) reads the chosen source
                # and filter only: two stores, or two filters, are never ranked together
                initial_sources = [("Reference results", sources.REFERENCE)] if reference_state is not None else []
                source_radio = gr.Radio([*initial_sources, ("Your results", sources.USER)], value=first_source,
                                        label="Results shown", elem_id="source",
                                        info="The reference results are the package's own evaluation, read-only; "
                                             "yours are the store the Space was started on")
                filter_radio = gr.Radio(sources.filter_choices([]), value=sources.PAPER_FILTER,
                                        label="Sentences scored", elem_id="correctness-filter",
                                        info="The paper scores only sentences whose gender variants the model all "
                                             "classifies correctly; unfiltered records are shown on their own")
            filter_text = gr.Markdown(elem_id="filter-note")
        with gr.Tabs(elem_id="tabs") as tabs:
            with gr.Tab("Ranking", id="ranking", elem_id="tab-ranking"):
                with gr.Row(elem_id="rank-controls"):
                    cell_config = gr.Dropdown([], label="GECO config", elem_id="rank-config", allow_custom_value=True)
                    cell_base = gr.Dropdown([], label="Base model", elem_id="rank-base", allow_custom_value=True)
                    cell_regime = gr.Dropdown([], label="Model regime", elem_id="rank-regime", allow_custom_value=True)
                    cell_seed = gr.Dropdown([], label="Model seed", elem_id="rank-seed", allow_custom_value=True)
                    view_choice = gr.Dropdown([RANKING_VIEW, GAPS_VIEW, PIVOT_VIEW], value=RANKING_VIEW, label="View",
                                              elem_id="rank-view")
                ranking_table = gr.Dataframe(interactive=False, wrap=False, pinned_columns=2, max_height=620,
                                             show_search="filter",
                                             label="Explainers ranked by MA for the chosen model",
                                             elem_id="ranking-table", elem_classes=["pin-names", "click-sort"],
                                             buttons=["fullscreen", "copy"])
                # the ranking view's optional column groups, below the table so its first rows keep the first
                # screen; the downloads keep every column
                with gr.Accordion("Columns shown", open=False, elem_id="rank-columns-box"):
                    column_chooser = gr.CheckboxGroup(list(ranking.COLUMN_GROUPS),
                                                      value=ranking.DEFAULT_COLUMN_GROUPS, label="Columns shown",
                                                      elem_id="rank-columns")
                ranking_notes = gr.Markdown(elem_id="ranking-notes")
                ranking_files = gr.File(label="Download this table (CSV, JSON)", file_count="multiple",
                                        interactive=False, elem_id="ranking-downloads")
                rank_radar = gr.Plot(label="Co-12 properties", elem_id="rank-radar")
                with gr.Accordion("Glossary: what each column means", open=False):
                    gr.Markdown(glossary_markdown())
            with gr.Tab("Plots", id="plots", elem_id="tab-plots"):
                gr.Markdown("The plots follow the **Ranking** tab's choice (config, base model, regime, seed); the "
                            "dashed line is the chance level (Uniform Random's MA). Hover for values; the camera "
                            "icon saves a PNG; the files below hold each figure as a page that saves SVG.")
                regime_plot = gr.Plot(label="MA by model regime", elem_id="regime-plot")
                group_plot = gr.Plot(label="MA per gender group", elem_id="group-plot")
                plot_files = gr.File(label="Both figures as HTML pages whose camera button saves SVG",
                                     file_count="multiple", interactive=False, elem_id="plot-downloads")
            with gr.Tab("Sentence drill-down", id="drilldown", elem_id="tab-drilldown"):
                gr.Markdown("One GECO test sentence for the **Ranking** tab's model: its ground-truth words "
                            "highlighted, and every explainer's word attributions as a heat map with the "
                            "sentence's MA.")
                with gr.Row():
                    drill_search = gr.Textbox(label="Search sentences by word", placeholder="e.g. she, doctor",
                                              elem_id="drill-search")
                    drill_sentence = gr.Dropdown([], label="Sentence", elem_id="drill-sentence", scale=3)
                drill_message = gr.Markdown(elem_id="drill-message")
                drill_heat = gr.HTML(elem_id="drill-heat")
            with gr.Tab("All models", id="explainers", elem_id="tab-explainers"):
                gr.Markdown(tables.ACROSS_MODELS_TEXT)
                with gr.Row():
                    configs = gr.Dropdown([], multiselect=True, label="GECO config (empty = all)",
                                          elem_id="filter-config", info="All when empty")
                    regimes = gr.Dropdown([], multiselect=True, label="Model regime (empty = all)",
                                          elem_id="filter-regime", info="All when empty")
                    base_models = gr.Dropdown([], multiselect=True, label="Base model (empty = all)",
                                              elem_id="filter-base", info="All when empty")
                with gr.Row():
                    search = gr.Textbox(label="Search explainers", placeholder="name, source or version", elem_id="search")
                    sort_by = gr.Dropdown(["MA"], value="MA", label="Sort by", elem_id="sort-by")
                    descending = gr.Checkbox(True, label="Best first", info="MA gap: closest to zero counts as best")
                    show_baselines = gr.Checkbox(True, label="Show baselines")
                table = gr.Dataframe(interactive=False, wrap=False, pinned_columns=1,
                                     label="One row per explainer and model: value [CI]",
                                     elem_id="explainer-table", show_search="none", max_height=600,
                                     elem_classes=["pin-names", "pin-one"])  # its name column stays in view
                gr.Markdown("`[baseline]`: Uniform Random / Pattern Variant (model-independent) · `[self-reported]`: "
                            "submitted pre-computed results not reproduced by the queue · MA gap = MA(male) − MA(female), "
                            "paired interval over source sentences · log RMA = median ln(MA / MA zero-shot).")
                explainer_files = gr.File(label="Download this table (CSV, JSON)", file_count="multiple",
                                          interactive=False, elem_id="explainer-downloads")
            with gr.Tab("Dataset", id="dataset", elem_id="tab-dataset") as dataset_tab:
                dataset_message = gr.Markdown("Open this tab to compute the GECO statistics (once; then cached).")
                dataset_table = gr.Dataframe(interactive=False, label="GECO configs", elem_id="dataset-table")
            with gr.Tab("Spanish model bias", id="spanish", elem_id="tab-spanish"):
                with gr.Row():
                    scheme = gr.Dropdown([], label="Lexicon scheme", elem_id="scheme", allow_custom_value=True)
                    index = gr.Radio(INDICES, value="bpi", label="Index")
                    # custom values allowed: after a scheme switch the old choice arrives before the new list
                    model = gr.Dropdown([], label="Model (radar)", elem_id="bias-model", allow_custom_value=True)
                spanish_legend = gr.Markdown(elem_id="bias-legend")
                heat = gr.HTML(elem_id="bias-heat")
                spanish_files = gr.File(label="Download this table (CSV, JSON)", file_count="multiple",
                                        interactive=False, elem_id="bias-downloads")
                bias_radar = gr.Plot(label="Share of the index per category, by group", elem_id="bias-radar")
                gr.Markdown("### Published values beside this package's recomputation\nGarrido-Muñoz et al.'s "
                            "published male − female values (top-10 supersenses) and the same index recomputed here "
                            "from their recorded predictions.")
                published = gr.Dataframe(interactive=False, max_height=400, elem_id="bias-published")
            with gr.Tab("Submit", id="submit", elem_id="tab-submit") as submit_tab:
                gr.Markdown(SUBMIT_GUIDE.format(limits=sandbox_limits_text()))
                if SUBMIT_TEMPLATE.is_file():
                    gr.DownloadButton("Download the explainer template (.py)", value=str(SUBMIT_TEMPLATE),
                                      elem_id="submit-template")
                with gr.Row():
                    track = gr.Radio(["code", "precomputed"], value="code", label="Track")
                    name = gr.Textbox(label="Name", info="lower_case_identifier, e.g. my_gradient_norm")
                    version = gr.Textbox(label="Version", info="e.g. 1.0.0")
                with gr.Row():
                    authors = gr.Textbox(label="Authors")
                    license_ = gr.Textbox(label="Licence", info="an SPDX identifier, e.g. MIT or BSD-3-Clause")
                    contact = gr.Textbox(label="Contact", info="an e-mail address or Hub user")
                with gr.Row():
                    model_set = gr.Textbox(label="Model set (optional)", info="empty = the reference set")
                    if on_space:
                        gr.LoginButton()
                    submitter = gr.Textbox(label="Your name (shown in the queue)", visible=not on_space,
                                           elem_id="submitter")
                description = gr.Textbox(label="Description", lines=3)
                upload = gr.File(label="Explainer file", file_types=[".py", ".jsonl", ".parquet"], type="filepath")
                submit_button = gr.Button("Submit", variant="primary")
                submit_message = gr.Markdown(elem_id="submit-message")
                gr.Markdown("### Queue")
                queue_message = gr.Markdown()
                queue_table = gr.Dataframe(interactive=False, wrap=True, elem_id="queue-table",
                                           column_widths=["110px", "140px", "150px", "70px", "90px", "160px", "160px",
                                                          "260px", "360px", "200px"])
                queue_refresh = gr.Button("Refresh queue")
            with gr.Tab("About", id="about", elem_id="tab-about"):
                gr.Markdown(about_markdown(hub_org, glossary_markdown(), gecobench.__version__, SCHEMA_VERSION,
                                           gr.__version__), elem_id="about")

        cell_inputs = [cell_config, cell_base, cell_regime, cell_seed]
        scope_inputs = [source_radio, filter_radio]  # last in every list: API callers may leave them out
        ranking_outputs = [ranking_table, ranking_notes, ranking_files, rank_radar]
        ranking_inputs = [*cell_inputs, view_choice, *scope_inputs, column_chooser]
        filter_inputs = [configs, regimes, base_models, search, sort_by, descending, show_baselines]
        refresh_outputs = [status, source_radio, filter_radio, filter_text, configs, regimes, base_models, sort_by,
                           table, scheme, model, heat]
        refresh_inputs = [*filter_inputs, scheme, index, model, *scope_inputs]
        spanish_outputs = [heat, spanish_files, model, spanish_legend, published, bias_radar]

        page_inputs = [scheme, *scope_inputs]
        page_outputs = [status, source_radio, filter_radio, filter_text, scheme, provenance, details]
        across_outputs = [configs, regimes, base_models, sort_by, table, explainer_files]

        # the view in the URL: the components in page_assets.URL_KEYS order (the open tab is read from the page)
        url_inputs = [source_radio, filter_radio, *cell_inputs, view_choice, drill_search, drill_sentence,
                      column_chooser]
        url_outputs = [tabs, *url_inputs]

        def remember_view(event):
            """Write the view into the query string once ``event`` is done (a client-side step, no server call)."""
            return event.then(None, url_inputs, None, js=URL_JS, api_visibility="private")

        def after_load(event):
            """The ranking first (the first view), then plots, drill-down, the All models tab and the Spanish tab."""
            (remember_view(event.then(ranking_choices, [*cell_inputs, *scope_inputs], cell_inputs, api_visibility="private")
             .then(ranking_view, ranking_inputs, ranking_outputs, api_visibility="private")
             .then(plots_view, [*cell_inputs, *scope_inputs], [regime_plot, group_plot, plot_files],
                   api_visibility="private")
             .then(drill_sentences, [*cell_inputs, drill_search, *scope_inputs, drill_sentence],
                   [drill_sentence, drill_message],
                   api_visibility="private")
             .then(drill_view, [*cell_inputs, drill_sentence, *scope_inputs], drill_heat, api_visibility="private"))
             .then(across_models, [*filter_inputs, *scope_inputs], across_outputs, api_visibility="private")
             .then(spanish_view, [scheme, index, model, source_radio], spanish_outputs, api_visibility="private"))

        # a page load first restores the view its URL names (tab, source, filter, model, view, sentence, columns)
        after_load(demo.load(view_from_url, None, url_outputs, api_visibility="private")
                   .then(open_page, page_inputs, page_outputs, api_visibility="private"))
        after_load(refresh_button.click(open_page, page_inputs, page_outputs, api_visibility="private"))
        # a new source or filter re-reads (cheaply: only new files) and redraws every GECO view
        for component in scope_inputs:
            after_load(component.input(open_page, page_inputs, page_outputs, api_visibility="private",
                                       trigger_mode="always_last"))
        # ``/refresh`` for API clients: everything a page shows, from one call. A hidden button carries it because
        # an event needs a trigger, and this one must not run on page loads (they go step by step, above).
        refresh_everything = gr.Button(visible=False, elem_id="refresh-everything")
        refresh_everything.click(refresh, refresh_inputs, refresh_outputs, api_name="refresh")

        # .input, not .change: refresh() also sets these components, and must not trigger a cascade of redraws
        for component in cell_inputs:
            remember_view(component.input(ranking_choices, [*cell_inputs, *scope_inputs], cell_inputs, api_visibility="private",
                             trigger_mode="always_last")
             .then(ranking_view, ranking_inputs, ranking_outputs, api_visibility="private")
             .then(plots_view, [*cell_inputs, *scope_inputs], [regime_plot, group_plot, plot_files],
                   api_visibility="private")
             .then(drill_sentences, [*cell_inputs, drill_search, *scope_inputs, drill_sentence],
                   [drill_sentence, drill_message],
                   api_visibility="private")
             .then(drill_view, [*cell_inputs, drill_sentence, *scope_inputs], drill_heat, api_visibility="private"))
        remember_view(view_choice.input(ranking_view, ranking_inputs, ranking_outputs,
                                        api_visibility="private"))
        remember_view(column_chooser.input(ranking_view, ranking_inputs, ranking_outputs, api_visibility="private",
                                           trigger_mode="always_last"))
        gr.api(ranking_api, api_name="ranking")
        gr.api(gender_gaps_api, api_name="gender_gaps")
        (drill_search.submit(drill_sentences, [*cell_inputs, drill_search, *scope_inputs, drill_sentence],
                             [drill_sentence, drill_message], api_visibility="private")
         .then(drill_view, [*cell_inputs, drill_sentence, *scope_inputs], drill_heat, api_visibility="private")
         .then(None, url_inputs, None, js=URL_JS, api_visibility="private"))
        remember_view(drill_sentence.input(drill_view, [*cell_inputs, drill_sentence, *scope_inputs], drill_heat,
                                           api_visibility="private"))
        tabs.select(None, url_inputs, None, js=URL_JS, api_visibility="private")

        for component in (configs, regimes, base_models, sort_by, descending, show_baselines, search):
            component.input(explainer_downloads, [*filter_inputs, *scope_inputs], [table, explainer_files],
                            api_visibility="private", trigger_mode="always_last")
        search.submit(explainer_downloads, [*filter_inputs, *scope_inputs], [table, explainer_files],
                      api_visibility="private")
        gr.api(explainer_table_api, api_name="explainer_table")
        for component in (scheme, index, model):
            component.input(spanish_view, [scheme, index, model, source_radio], spanish_outputs,
                            api_visibility="private")
        dataset_tab.select(dataset_view, None, [dataset_table, dataset_message], api_name="dataset")
        submit_tab.select(queue_view, None, [queue_table, queue_message], api_name="queue")
        queue_refresh.click(queue_view, None, [queue_table, queue_message], api_visibility="private")
        submit_button.click(
            submit, [track, name, version, authors, description, license_, contact, model_set, submitter, upload],
            [submit_message, queue_table, queue_message], api_name="submit",
        )
    return demo


#: the command this module is the job of (:data:`leaderboard_space.SPACE`)
COMMAND_PROG = "gecobench space"


def build_parser(prog: str | None = COMMAND_PROG) -> argparse.ArgumentParser:
    """The Space's command line: ``gecobench space`` (this module is its job), or ``python app.py`` on a Space
    (``prog=None``: the script's name)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the GECOBench leaderboard Space locally (reference results first, yours beside them).",
        epilog="The two stores are never pooled: a selector above the tabs switches every view between them. "
               "Example: gecobench space --results results --port 7860")
    parser.add_argument("--results", default=None,
                        help="your results store, shown beside the reference: a folder or hf://datasets/OWNER/NAME "
                             "(default: $GECOBENCH_RESULTS_REPO, $GECOBENCH_RESULTS or results/)")
    parser.add_argument("--reference", default=None,
                        help="reference results store, shown first and read-only: a folder or "
                             "hf://datasets/OWNER/NAME (default: the dataset repo $GECOBENCH_REFERENCE_REPO, "
                             "as a published Space sets it, else $GECOBENCH_REFERENCE, else a checkout's "
                             "reference/store; an installed package carries none: give the published reference "
                             "dataset, hf://datasets/ORG/gecobench-reference)")
    parser.add_argument("--no-reference", action="store_true",
                        help="hide the reference results: show only the --results store")
    parser.add_argument("--requests", default=None, help="requests store folder (default: $GECOBENCH_REQUESTS or requests/)")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME"),
                        help="interface to listen on (default: $GRADIO_SERVER_NAME or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", os.environ.get("PORT", "7860"))),
                        help="port (default: $GRADIO_SERVER_PORT, $PORT or 7860)")
    return parser


def main(argv: list[str] | None = None, prog: str | None = COMMAND_PROG) -> int:
    """Serve the Space until stopped; the exit status (argparse exits on bad options)."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.no_reference and args.reference:
        parser.error("--reference and --no-reference contradict each other: give one")
    busy = port_in_use(args.host or "127.0.0.1", args.port)
    if busy:
        parser.exit(2, f"error: cannot listen on {args.host or '127.0.0.1'}:{args.port}: {busy}. Is another Space "
                       "running there? Choose another port with --port N (or GRADIO_SERVER_PORT).\n")
    build_app(args.results, args.requests, reference_location=args.reference,
              show_reference=not args.no_reference).launch(server_name=args.host, server_port=args.port,
                                                           **launch_options())
    return 0


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (e.g. 'Address already in use'), or None when it is free."""
    import socket

    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as err:
            return err.strerror or str(err)
    return None


if __name__ == "__main__":
    main(prog=None)  # `python app.py`: usage names the script

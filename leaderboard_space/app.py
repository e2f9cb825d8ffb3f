"""GECOBench leaderboard — the Gradio Space.

Run locally with ``python leaderboard_space/app.py [--results DIR|hf://datasets/OWNER/NAME] [--port 7860]``;
on Hugging Face Spaces this file is the ``app_file``. The results store is read from ``--results``,
``$GECOBENCH_RESULTS_REPO`` (a dataset repo) or ``$GECOBENCH_RESULTS`` (a folder, default ``results/``), and
re-read on every page load and on *Refresh* — no restart needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
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

import gecobench
from gecobench.records import SCHEMA_VERSION
from leaderboard_space import figures, submit_seam, tables
from leaderboard_space.data import LoadedResults, ResultsLoader
from leaderboard_space.dataset_info import geco_statistics

MAX_WARNINGS_SHOWN = 20
INDICES = ["bpi", "bri"]

ABOUT = f"""
## The protocol

**GECOBench** asks whether an explanation of a language model points at the words that *actually* decide
the prediction. GECO sentences exist in gender variants that differ only in the gendered words; a model
trained to classify the gender can only rely on those words, so they are the ground truth. An explainer's
**mass accuracy (MA)** is the share of its attribution mass on ground-truth words. **log RMA** (relative
mass accuracy) is the median over sentences of ln(MA / MA_ZS), where MA_ZS is the same explainer's MA on the
zero-shot model of the same base, with the same random numbers for stochastic explainers (0: as correct as
zero-shot; model-independent baselines get exactly 0). The **MA gap** is MA(male) − MA(female) (and each
binary group minus non-binary on the non-binary configs), signed, with a paired bootstrap interval over
source sentences (an interval containing 0 means no detectable gap). Every explainer is scored for each
model regime (from scratch to fully fine-tuned), each GECO configuration (all gendered words altered, or the
grammatical subject only; binary and non-binary), with bootstrap confidence intervals. The Co-12 properties
(MRC, SNC, LD, DMA, SP, CVR) follow the XAIB benchmark; ranking metrics (relevance rank accuracy, AUPRC)
score the order of the attributions.

**One row per explainer and model** (regime × base model × config). Records are averaged only over seeds of
an otherwise identical protocol: *Seeds* says how many; with several, the value is the mean over seeds and the
interval the 95 % t-interval across seeds. Rows that differ in anything else (explainer parameters, sentences
scored, filter, compared explainers…) stay separate, and *Differs by* names the difference. *vs best* says
whether the paired bootstrap interval of MA(best) − MA(row), on the same sentences, includes 0 (*tie*) or not.

Baselines — *Uniform Random* and *Pattern Variant* — do not look at the model and are marked **[baseline]**.
Results submitted with pre-computed attributions and not reproduced by the queue are marked
**[self-reported]**.

The **Spanish model bias** tab scores masked language models on the templates of Garrido-Muñoz et al.:
the Bias Probability Index (BPI) and Bias Rank Index (BRI) per lexicon category; the heat table shows
male − female (blue = towards male, red = towards female).

## How to cite

* R. Wilming, A. Dox, H. Schulz, M. Oliveira, B. Clark, S. Haufe. *GECOBench: A Gender-Controlled Text
  Dataset and Benchmark for Quantifying Biases in Explanations.* Frontiers in Artificial Intelligence, 2025.
* I. Garrido-Muñoz, F. Martínez-Santiago, A. Montejo-Ráez. *MarIA and BETO are sexist: evaluating gender
  bias in large language models for Spanish.* Language Resources and Evaluation, 2023.
* XAIB — the eXplainable AI Benchmark whose Co-12 property checks the property columns follow.

## Versions

gecobench-hub {gecobench.__version__} · record schema {SCHEMA_VERSION} · Gradio {gr.__version__}
"""

EMPTY_MESSAGE = (
    "**No results yet** in `{source}`. Run an evaluation (`python scripts/evaluate.py …`), or point the Space "
    "at a store with `--results`, `GECOBENCH_RESULTS` (a folder) or `GECOBENCH_RESULTS_REPO` (a dataset repo)."
)


def status_markdown(loaded: LoadedResults, frame_warnings: list[str]) -> str:
    """The line above the tabs: source, counts, versions, and every skipped record as a visible warning."""
    if not loaded.documents:
        text = EMPTY_MESSAGE.format(source=loaded.source)
    else:
        text = f"Results from `{loaded.source}` — {tables.versions_line(loaded.documents)}"
    warnings = loaded.warnings + frame_warnings
    if warnings:
        shown = "\n".join(f"- {w}" for w in warnings[:MAX_WARNINGS_SHOWN])
        more = f"\n- … and {len(warnings) - MAX_WARNINGS_SHOWN} more" if len(warnings) > MAX_WARNINGS_SHOWN else ""
        text += f"\n\n⚠️ **{len(warnings)} record(s) skipped** (malformed or partial):\n{shown}{more}"
    return text


class LeaderboardState:
    """What the app has read: shared by all sessions, replaced as a whole on refresh."""

    def __init__(self, results_location: str | None) -> None:
        self.loader = ResultsLoader(results_location)
        self.loaded = LoadedResults()
        self.frame = tables.records_frame([])

    def refresh(self) -> None:
        loaded = self.loader.load()
        # an unchanged append-only store gives the same table: skip rebuilding it on every page load
        frame = tables.records_frame(loaded.explainer_records) if loaded.changed or not self.loaded.documents else self.frame
        self.loaded, self.frame = loaded, frame


def _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines) -> tables.Filters:
    return tables.Filters(
        configs=list(configs or []), regimes=list(regimes or []), base_models=list(base_models or []),
        search=search or "", sort_by=sort_by or "MA", descending=bool(descending), show_baselines=bool(show_baselines),
    )


def build_app(results_location: str | None = None, requests_location: str | None = None,
              geco_dir: str | None = None) -> gr.Blocks:
    """The Blocks UI. ``results_location``: folder or ``hf://datasets/…`` (default from the environment);
    ``requests_location``: the submissions' requests folder (default ``$GECOBENCH_REQUESTS`` or ``requests/``);
    ``geco_dir``: GECO files for the Dataset tab (default: the loader's own default)."""
    state = LeaderboardState(results_location)

    def explainer_view(configs, regimes, base_models, search, sort_by, descending, show_baselines):
        """The table alone: the first thing a visitor sees, so the figures follow in a second step."""
        filters = _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines)
        summary = tables.explainer_summary(state.frame, tables.Filters(**{**filters.__dict__, "sort_by": None}))
        sort = sort_by if sort_by in summary.columns else ("MA" if "MA" in summary.columns else None)
        return tables.display_table(tables.sort_summary(summary, sort, bool(descending)))

    def figures_view(configs, regimes, base_models, search, sort_by, descending, show_baselines):
        """Radar (Explainers tab) and the two Plots-tab figures for the same filters."""
        filters = _filters(configs, regimes, base_models, search, None, descending, show_baselines)
        summary = tables.explainer_summary(state.frame, filters)
        if summary.empty:
            return None, None, None
        shown = tables.filter_frame(state.frame.frame, filters)
        return (
            figures.radar_grid_figure(tables.property_scores(summary, state.frame.directions)),
            figures.ma_by_regime_figure(shown),
            figures.ma_by_group_figure(shown),
        )

    def explainer_table_api(configs: list[str], regimes: list[str], base_models: list[str], search: str,
                            sort_by: str, descending: bool, show_baselines: bool) -> dict:
        """The Explainers table for the given filters, as {"headers": [...], "data": [[...], ...]}."""
        filters = _filters(configs, regimes, base_models, search, sort_by, descending, show_baselines)
        shown = tables.explainer_table(state.frame, filters)
        return {"headers": [str(c) for c in shown.columns], "data": shown.astype(object).values.tolist()}

    def spanish_view(scheme, index, model):
        records = state.loaded.bias_records
        if not records:
            return "No `model_bias` records yet (run `python scripts/spanish_bias.py …`).", None
        from gecobench.spanish import plots as spanish_plots

        try:
            html = spanish_plots.scheme_table_html(records, scheme, index or "bpi")
        except ValueError as err:
            html = f"<p>{err}</p>"
        chosen = next((r for r in records if spanish_plots.model_label(r) == model), None)
        radar = None
        if chosen is not None and scheme in chosen.get("schemes", {}):
            radar = spanish_plots.radar_figure(chosen, scheme, index or "bpi")
        return html, radar

    def refresh(configs, regimes, base_models, search, sort_by, descending, show_baselines, scheme, index, model):
        state.refresh()
        options = tables.choices(state.frame)
        view = explainer_view(configs, regimes, base_models, search, sort_by, descending, show_baselines)
        summary_columns = tables.sort_keys(tables.explainer_summary(state.frame))
        from gecobench.spanish import plots as spanish_plots

        schemes = sorted({s for r in state.loaded.bias_records for s in r.get("schemes", {})})
        models = [spanish_plots.model_label(r) for r in state.loaded.bias_records]
        scheme = scheme if scheme in schemes else (schemes[0] if schemes else None)
        model = model if model in models else (models[0] if models else None)
        spanish = spanish_view(scheme, index, model)
        keep = lambda chosen, allowed: [c for c in (chosen or []) if c in allowed]
        return (
            status_markdown(state.loaded, state.frame.warnings),
            gr.update(choices=options["configs"], value=keep(configs, options["configs"])),
            gr.update(choices=options["regimes"], value=keep(regimes, options["regimes"])),
            gr.update(choices=options["base_models"], value=keep(base_models, options["base_models"])),
            gr.update(choices=summary_columns or ["MA"], value=sort_by if sort_by in summary_columns else "MA"),
            view,
            gr.update(choices=schemes, value=scheme),
            gr.update(choices=models, value=model),
            spanish[0],
        )

    def spanish_radar(scheme, index, model):
        return spanish_view(scheme, index, model)[1]

    def dataset_view():
        table, message = geco_statistics(geco_dir)
        return table, (f"⚠️ {message}" if message else "Statistics computed from the released GECO files (cached).")

    def queue_view():
        table, message = submit_seam.queue_frame(requests_location)
        return table, message

    def submit(track, name, version, authors, description, license_, contact, model_set, submitter, upload):
        metadata = {"name": name, "version": version, "authors": authors, "description": description,
                    "license": license_, "contact": contact, "model_set": model_set}
        path = upload if isinstance(upload, str) or upload is None else getattr(upload, "name", None)
        message = submit_seam.submit_form(requests_location, track, metadata, path, submitter)
        return (message, *queue_view())

    with gr.Blocks(title="GECOBench leaderboard") as demo:
        gr.Markdown("# GECOBench leaderboard\nAre explanations of language models correct — and does gender bias distort them?")
        with gr.Row():
            status = gr.Markdown("Loading results…", elem_id="status")
            refresh_button = gr.Button("Refresh results", scale=0, elem_id="refresh")
        with gr.Tabs():
            with gr.Tab("Explainers", id="explainers"):
                with gr.Row():
                    configs = gr.Dropdown([], multiselect=True, label="GECO config", elem_id="filter-config")
                    regimes = gr.Dropdown([], multiselect=True, label="Model regime", elem_id="filter-regime")
                    base_models = gr.Dropdown([], multiselect=True, label="Base model", elem_id="filter-base")
                with gr.Row():
                    search = gr.Textbox(label="Search explainers", placeholder="name, source or version", elem_id="search")
                    sort_by = gr.Dropdown(["MA"], value="MA", label="Sort by", elem_id="sort-by")
                    descending = gr.Checkbox(True, label="Descending (MA gap: closest to zero first)")
                    show_baselines = gr.Checkbox(True, label="Show baselines")
                table = gr.Dataframe(interactive=False, wrap=True, label="One row per explainer and model: value [CI]",
                                     elem_id="explainer-table", show_search="none", max_height=600)
                gr.Markdown("`[baseline]`: Uniform Random / Pattern Variant (model-independent) · `[self-reported]`: "
                            "submitted pre-computed results not reproduced by the queue · MA gap = MA(male) − MA(female), "
                            "paired interval over source sentences · log RMA = median ln(MA / MA zero-shot).")
                radar = gr.Plot(label="Co-12 properties per explainer (outward = better)")
            with gr.Tab("Plots", id="plots"):
                regime_plot = gr.Plot(label="Mass accuracy by model regime (Figure 2 view)")
                group_plot = gr.Plot(label="Mass accuracy per gender group")
            with gr.Tab("Dataset", id="dataset") as dataset_tab:
                dataset_message = gr.Markdown("Open this tab to compute the GECO statistics (once; then cached).")
                dataset_table = gr.Dataframe(interactive=False, label="GECO configs", elem_id="dataset-table")
            with gr.Tab("Spanish model bias", id="spanish"):
                with gr.Row():
                    scheme = gr.Dropdown([], label="Lexicon scheme", elem_id="scheme")
                    index = gr.Radio(INDICES, value="bpi", label="Index")
                    model = gr.Dropdown([], label="Model (radar)", elem_id="bias-model")
                heat = gr.HTML(elem_id="bias-heat")
                bias_radar = gr.Plot(label="Share of the index per category, by group")
            with gr.Tab("Submit", id="submit") as submit_tab:
                gr.Markdown("Submit an explainer (`.py`, code track) or pre-computed attributions (`.jsonl`/`.parquet`, "
                            "precomputed track; shown as self-reported until reproduced). See `submissions/examples/`.")
                with gr.Row():
                    track = gr.Radio(["code", "precomputed"], value="code", label="Track")
                    name = gr.Textbox(label="Name (lower_case_identifier)")
                    version = gr.Textbox(label="Version", placeholder="1.0.0")
                with gr.Row():
                    authors = gr.Textbox(label="Authors")
                    license_ = gr.Textbox(label="Licence", placeholder="BSD-3-Clause")
                    contact = gr.Textbox(label="Contact")
                with gr.Row():
                    model_set = gr.Textbox(label="Model set (optional)")
                    submitter = gr.Textbox(label="Your Hub user name (optional)")
                description = gr.Textbox(label="Description", lines=3)
                upload = gr.File(label="Explainer file", file_types=[".py", ".jsonl", ".parquet"], type="filepath")
                submit_button = gr.Button("Submit", variant="primary")
                submit_message = gr.Markdown()
                gr.Markdown("### Queue")
                queue_message = gr.Markdown()
                queue_table = gr.Dataframe(interactive=False, wrap=True, elem_id="queue-table")
                queue_refresh = gr.Button("Refresh queue")
            with gr.Tab("About", id="about"):
                gr.Markdown(ABOUT)

        filter_inputs = [configs, regimes, base_models, search, sort_by, descending, show_baselines]
        figure_outputs = [radar, regime_plot, group_plot]
        refresh_outputs = [status, configs, regimes, base_models, sort_by, table, scheme, model, heat]
        refresh_inputs = [*filter_inputs, scheme, index, model]
        # the table first (the first view), then the figures in a follow-up step
        loaded = demo.load(refresh, refresh_inputs, refresh_outputs, api_name="refresh")
        clicked = refresh_button.click(refresh, refresh_inputs, refresh_outputs, api_visibility="private")
        for event in (loaded, clicked):
            event.then(figures_view, filter_inputs, figure_outputs, api_visibility="private").then(
                spanish_radar, [scheme, index, model], bias_radar, api_visibility="private")
        # .input, not .change: refresh() also sets these components, and must not trigger a cascade of redraws
        for component in (configs, regimes, base_models, sort_by, descending, show_baselines, search):
            component.input(explainer_view, filter_inputs, table, api_visibility="private",
                            trigger_mode="always_last").then(
                figures_view, filter_inputs, figure_outputs, api_visibility="private", trigger_mode="always_last")
        search.submit(explainer_view, filter_inputs, table, api_visibility="private")
        gr.api(explainer_table_api, api_name="explainer_table")
        for component in (scheme, index, model):
            component.input(spanish_view, [scheme, index, model], [heat, bias_radar], api_visibility="private")
        dataset_tab.select(dataset_view, None, [dataset_table, dataset_message], api_name="dataset")
        submit_tab.select(queue_view, None, [queue_table, queue_message], api_name="queue")
        queue_refresh.click(queue_view, None, [queue_table, queue_message], api_visibility="private")
        submit_button.click(
            submit, [track, name, version, authors, description, license_, contact, model_set, submitter, upload],
            [submit_message, queue_table, queue_message], api_name="submit",
        )
    return demo


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the GECOBench leaderboard Space locally.")
    parser.add_argument("--results", default=None,
                        help="results store: a folder or hf://datasets/OWNER/NAME (default: $GECOBENCH_RESULTS_REPO, "
                             "$GECOBENCH_RESULTS or results/)")
    parser.add_argument("--requests", default=None, help="requests store folder (default: $GECOBENCH_REQUESTS or requests/)")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME"),
                        help="interface to listen on (default: $GRADIO_SERVER_NAME or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", os.environ.get("PORT", "7860"))),
                        help="port (default: $GRADIO_SERVER_PORT, $PORT or 7860)")
    args = parser.parse_args(argv)
    build_app(args.results, args.requests).launch(server_name=args.host, server_port=args.port)


if __name__ == "__main__":
    main()

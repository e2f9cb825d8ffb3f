"""The leaderboard Space: data shaping, store loading, robustness, and the running app via gradio_client."""

from __future__ import annotations

import json
import random
import socket
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from _sample_records import (
    make_bias_record,
    make_explainer_record,
    sample_records,
)

from gecobench.formatting import format_interval
from gecobench.records import validate_record
from gecobench.store import LocalStore
from leaderboard_space import tables
from leaderboard_space.data import ResultsLoader


def _records() -> list[dict]:
    rng = random.Random(7)
    out = []
    for regime in ("from_scratch", "full_finetune"):
        for config in ("binary_all", "nonbinary_subject"):
            out.append(make_explainer_record("integrated_gradients", regime, config, rng=rng))
            out.append(make_explainer_record("saliency", regime, config, rng=rng))
            out.append(make_explainer_record("uniform_random", regime, config, is_baseline=True,
                                             model_independent=True, rng=rng))
    out.append(make_explainer_record("vendor_method", "full_finetune", "binary_all", source="self-reported", rng=rng))
    out.append(make_bias_record("model/a", rng=rng))
    return out


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return _records()


def test_sample_records_are_valid_and_cover_both_types():
    records = sample_records(25)
    assert {r["record_type"] for r in records} == {"explainer_score", "model_bias"}
    for record in records:
        validate_record(record)
    assert len({r["record_id"] for r in records}) == len(records)


def test_one_row_per_explainer_and_model_with_marks(records):
    table = tables.explainer_table(records)
    # 3 explainers × 2 regimes × 2 configs, plus the self-reported method's one model: nothing pooled across models
    assert len(table) == 13
    assert len(table.drop_duplicates(["Explainer", "Config", "Regime", "Base model"])) == 13
    labels = set(table["Explainer"])
    assert "uniform_random [baseline]" in labels
    assert "vendor_method [self-reported]" in labels
    kinds = dict(zip(table["Explainer"], table["Kind"]))
    assert kinds["uniform_random [baseline]"].startswith("baseline")
    assert kinds["integrated_gradients"] == "built-in"
    assert set(table["Seeds"]) == {1}


def test_summary_keeps_each_record_s_own_value_and_interval(records):
    summary = tables.explainer_summary(records)
    ig = [r for r in records if r.get("explainer", {}).get("name") == "integrated_gradients"]
    for record in ig:
        row = summary[(summary["Explainer"] == "integrated_gradients") & (summary["Regime"] == record["model"]["regime"])
                      & (summary["Config"] == record["dataset"]["config"])]
        assert len(row) == 1
        ma = record["metrics"]["mass_accuracy"]
        assert (row["MA"].item(), row["MA lo"].item(), row["MA hi"].item()) == (ma["value"], ma["ci_low"], ma["ci_high"])
        assert row["MA female"].item() == record["groups"]["female"]["mass_accuracy"]
        assert row[tables.RUNTIME].item() == record["runtime"]["seconds_per_sentence"]
        if "non-binary" in record["groups"]:
            assert row["MA non-binary"].item() == record["groups"]["non-binary"]["mass_accuracy"]
        else:
            assert np.isnan(row["MA non-binary"].item())


def test_display_formats_value_and_interval(records):
    summary = tables.explainer_summary(records)
    shown = tables.display_table(summary)
    first = shown.loc[0, "MA"]
    assert first == f"{summary.loc[0, 'MA']:.3f} [{summary.loc[0, 'MA lo']:.3f}, {summary.loc[0, 'MA hi']:.3f}]"
    assert not any(c.endswith((" lo", " hi")) for c in shown.columns)
    assert format_interval(float("nan")) == "–"
    assert format_interval(0.5) == "0.500"


def test_filters_change_rows_and_columns(records):
    only_ig = tables.explainer_table(records, tables.Filters(search="integrated"))
    assert set(only_ig["Explainer"]) == {"integrated_gradients"} and len(only_ig) == 4
    scratch = tables.explainer_table(records, tables.Filters(regimes=["from_scratch"]))
    assert "vendor_method [self-reported]" not in set(scratch["Explainer"])  # it has only a full_finetune record
    assert set(scratch["Regime"]) == {"from_scratch"}
    no_baselines = tables.explainer_table(records, tables.Filters(show_baselines=False))
    assert not any("[baseline]" in e for e in no_baselines["Explainer"])
    binary = tables.explainer_table(records, tables.Filters(configs=["binary_all"]))
    assert "MA non-binary" not in binary.columns
    assert tables.explainer_table(records, tables.Filters(search="no such explainer")).empty


def test_sorting_stays_within_each_model(records):
    def models_in_blocks(summary):
        models = list(zip(summary["Config"], summary["Regime"], summary["Base model"]))
        blocks = [m for i, m in enumerate(models) if i == 0 or m != models[i - 1]]
        return len(blocks) == len(set(blocks))

    summary = tables.explainer_summary(records, tables.Filters(sort_by="MA", descending=True))
    assert models_in_blocks(summary)
    for _, cell in summary.groupby(tables.MODEL_COLUMNS):
        assert list(cell["MA"]) == sorted(cell["MA"], reverse=True)
    ascending = tables.explainer_summary(records, tables.Filters(sort_by="SP", descending=False))
    for _, cell in ascending.groupby(tables.MODEL_COLUMNS):
        assert list(cell["SP"]) == sorted(cell["SP"])
    gap = tables.explainer_summary(records, tables.Filters(sort_by="Gap m−f", descending=True))
    for _, cell in gap.groupby(tables.MODEL_COLUMNS):  # best (closest to zero) first
        assert list(cell["Gap m−f"].abs()) == sorted(cell["Gap m−f"].abs())
    with pytest.raises(ValueError, match="cannot sort by 'nope'"):
        tables.explainer_summary(records, tables.Filters(sort_by="nope"))


def test_property_scores_flip_lower_is_better():
    summary = tables.pd.DataFrame({
        "Explainer": ["a", "b", "c"], "SP": [0.2, 0.6, 0.4], "CVR": [0.2, 0.6, 0.4], "MRC": [0.5, 0.5, 0.5],
        "SNC": [0.1, 0.3, 0.2],
    })
    scores = tables.property_scores(summary)
    assert list(scores["SP"]) == pytest.approx([0.0, 1.0, 0.5])
    assert list(scores["CVR"]) == pytest.approx([1.0, 0.0, 0.5])  # complexity: lower is better
    assert list(scores["SNC"]) == pytest.approx([1.0, 0.0, 0.5])  # explanation change under small noise: lower is better
    assert list(scores["MRC"]) == pytest.approx([0.5, 0.5, 0.5])
    flipped = tables.property_scores(summary, {"sparsity": -1})  # a record's own "direction" wins
    assert list(flipped["SP"]) == pytest.approx([1.0, 0.0, 0.5])


def test_malformed_records_are_skipped_with_a_warning(records):
    broken = json.loads(json.dumps(records[0]))
    del broken["metrics"]["mass_accuracy"]
    wrong_type = json.loads(json.dumps(records[1]))
    wrong_type["model"] = "not an object"
    frame = tables.records_frame([*records, broken, wrong_type, "not even a dict"])
    assert len(frame.frame) == sum(r["record_type"] == "explainer_score" for r in records)
    assert len(frame.warnings) == 2
    assert broken["record_id"] in frame.warnings[0] and "mass_accuracy" in frame.warnings[0]


def test_loader_reports_bad_files_and_reads_new_ones_without_restart(tmp_path, records):
    store = LocalStore(tmp_path / "results")
    for record in records[:5]:
        store.append(record)
    (tmp_path / "results" / "explainer_score" / "garbage.json").write_text("{ not json", encoding="utf-8")
    invalid = dict(records[5])
    invalid = json.loads(json.dumps(invalid))
    invalid["metrics"]["mass_accuracy"]["value"] = "high"
    (tmp_path / "results" / "explainer_score" / f"{invalid['record_id']}.json").write_text(json.dumps(invalid))
    loader = ResultsLoader(str(tmp_path / "results"))
    first = loader.load()
    assert len(first.documents) == 5
    assert len(first.warnings) == 2
    assert any("garbage.json" in w for w in first.warnings)
    assert any("mass_accuracy" in w for w in first.warnings)
    assert first.changed and not loader.load().changed
    store.append(records[6])
    second = loader.load()
    assert second.changed
    assert len(second.documents) == 6
    assert records[6]["record_id"] in {d["record_id"] for d in second.documents}


def test_empty_and_missing_store_give_a_friendly_message(tmp_path):
    from leaderboard_space.app import status_markdown

    loaded = ResultsLoader(str(tmp_path / "nothing-here")).load()
    assert loaded.documents == [] and loaded.warnings == []
    text = status_markdown(loaded, [])
    assert "No results yet" in text and "nothing-here" in text
    assert tables.explainer_table([]).empty


def test_versions_line_counts_types(records):
    line = tables.versions_line(records)
    assert f"{len(records)} records" in line
    assert "1 model_bias" in line and f"{len(records) - 1} explainer_score" in line


def test_submit_seam_files_a_request_and_lists_the_queue(tmp_path):
    from leaderboard_space import submit_seam
    from submissions import RequestStore

    code = tmp_path / "my_explainer.py"
    code.write_text(
        "import numpy as np\nfrom gecobench.explainers.base import Explainer\n\n"
        "class MyExplainer(Explainer):\n    name = 'my_explainer'\n    version = '1.0.0'\n\n"
        "    def explain(self, model, tokenizer, words, targets):\n        return [np.ones(len(w)) for w in words]\n"
    )
    metadata = {"name": "my_explainer", "version": "1.0.0", "authors": "A. Tester", "description": "ones",
                "license": "MIT", "contact": "a@example.org"}
    requests = str(tmp_path / "requests")
    message = submit_seam.submit_form(requests, "code", metadata, str(code))
    assert message.startswith("✅"), message
    refused = submit_seam.submit_form(requests, "code", {**metadata, "contact": ""}, str(code))
    assert refused.startswith("❌") and "contact" in refused
    assert submit_seam.submit_form(requests, "code", metadata, None).startswith("❌")
    store = RequestStore(requests)
    request_id = store.list()[0].request_id
    store.transition(request_id, "RUNNING")
    store.transition(request_id, "FAILED", reason="explain() returned 3 scores for 4 words", log_excerpt="Traceback …")
    queue, summary = submit_seam.queue_frame(requests)
    assert len(queue) == 1
    assert "FAILED" in queue.loc[0, "status"]
    assert "3 scores for 4 words" in queue.loc[0, "reason"]
    assert "FAILED: 1" in summary
    empty, note = submit_seam.queue_frame(str(tmp_path / "none"))
    assert empty.empty and "empty" in note


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def running_app(tmp_path_factory):
    from leaderboard_space.app import build_app

    root = tmp_path_factory.mktemp("space")
    store = LocalStore(root / "results")
    for record in _records():
        store.append(record)
    # this module tests one store: the reference results (tests/test_space_sources.py) are hidden
    demo = build_app(str(root / "results"), str(root / "requests"), show_reference=False)
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/", store
    demo.close()


def test_client_reads_filters_and_refreshes(running_app):
    from gradio_client import Client

    url, store = running_app
    client = Client(url, verbose=False)
    client.predict([], [], [], "", "MA", True, True, None, "bpi", None, api_name="/refresh")
    table = client.predict([], [], [], "", "MA", True, True, api_name="/explainer_table")
    assert "Explainer" in table["headers"]
    names = [row[table["headers"].index("Explainer")] for row in table["data"]]
    assert len(names) == 13 and "uniform_random [baseline]" in names  # one row per explainer and model
    filtered = client.predict([], [], [], "saliency", "MA", True, True, api_name="/explainer_table")
    assert {row[0] for row in filtered["data"]} == {"saliency"} and len(filtered["data"]) == 4
    # a record added while the app runs appears after a refresh, without a restart
    store.append(make_explainer_record("lime", "full_finetune", "binary_all", rng=random.Random(3)))
    (store.root / "explainer_score" / "truncated.json").write_text('{"record_type": "explainer_score", ', encoding="utf-8")
    outputs = client.predict([], [], [], "", "MA", True, True, None, "bpi", None, api_name="/refresh")
    status = outputs[0]
    assert "15 records (14 explainer_score, 1 model_bias)" in status  # 14 written at start-up + lime
    assert "1 record(s) skipped" in status and "truncated.json" in status
    heat = outputs[-1]
    assert "male − female" in heat and "model/a" in heat
    table = client.predict([], [], [], "", "MA", True, True, api_name="/explainer_table")
    assert "lime" in [row[0] for row in table["data"]]


def test_dataset_statistics_from_the_shared_geco_files(geco_dir):
    from leaderboard_space.dataset_info import geco_statistics

    table, message = geco_statistics(str(geco_dir))
    assert message == ""
    assert len(table) == 8
    rows = {(r["config"], r["split"]): r for r in table.to_dict("records")}
    # sizes documented in shared/data/SOURCES.md
    assert rows[("binary_all", "train")]["rows"] == 2576
    assert rows[("nonbinary_subject", "test")]["rows"] == 966
    assert rows[("binary_all", "test")]["source sentences"] == 322
    binary = rows[("binary_all", "train")]
    assert binary["co-occurrence bias male"] + binary["co-occurrence bias female"] == pytest.approx(1.0, abs=1e-3)
    assert binary["non-binary rows"] == 0


def test_dataset_statistics_degrade_gracefully_without_data(tmp_path, monkeypatch):
    import geco_dataset
    from leaderboard_space.dataset_info import geco_statistics

    def unavailable(*args, **kwargs):
        raise FileNotFoundError("no GECO files here")

    monkeypatch.setattr(geco_dataset, "load_geco", unavailable)
    table, message = geco_statistics(str(tmp_path / "missing"))
    assert table.empty
    assert "not available" in message and "no GECO files here" in message


def test_client_submits_through_the_form_and_sees_the_queue(running_app, tmp_path):
    from gradio_client import Client, handle_file

    url, _ = running_app
    code = tmp_path / "form_explainer.py"
    code.write_text(
        "import numpy as np\nfrom gecobench.explainers.base import Explainer\n\n"
        "class FormExplainer(Explainer):\n    name = 'form_explainer'\n    version = '0.1.0'\n\n"
        "    def explain(self, model, tokenizer, words, targets):\n        return [np.ones(len(w)) for w in words]\n"
    )
    client = Client(url, verbose=False)
    message, queue, summary = client.predict(
        "code", "form_explainer", "0.1.0", "A. Tester", "ones everywhere", "MIT", "a@example.org", "", "",
        handle_file(str(code)), api_name="/submit",
    )
    assert message.startswith("✅"), message
    assert "PENDING: 1" in summary
    assert any("form_explainer" in row for row in queue["data"])
    again, _, _ = client.predict(
        "code", "form_explainer", "0.1.0", "A. Tester", "ones everywhere", "MIT", "a@example.org", "", "",
        handle_file(str(code)), api_name="/submit",
    )
    assert again.startswith("❌") and "duplicate" in again


def test_folder_runs_as_a_space_root(tmp_path):
    """On a Space the folder's contents are the repository root: app.py must import its siblings from there."""
    import shutil
    import subprocess

    space = tmp_path / "space_repo"
    shutil.copytree(REPO_ROOT / "leaderboard_space", space, ignore=shutil.ignore_patterns("__pycache__"))
    card = (space / "README.md").read_text(encoding="utf-8")
    assert "sdk: gradio" in card and "app_file: app.py" in card
    assert "gradio" in (space / "requirements.txt").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "app.py", "--help"], cwd=space, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--results" in done.stdout

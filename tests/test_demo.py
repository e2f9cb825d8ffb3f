"""The one real end-to-end path of the default test run: ``gecobench demo --quick`` (as ``python -m gecobench``) into temporary folders."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO_ROOT

from gecobench.records import validate_record
from gecobench.store import LocalStore


def test_quick_demo_writes_valid_records_and_prints_the_leaderboard(tmp_path, shared_data) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    results = tmp_path / "results"
    command = [sys.executable, "-m", "gecobench", "demo", "--quick", "--threads", "1",
               "--results", str(results), "--models-dir", str(tmp_path / "models"),
               "--checkpoint-dir", str(tmp_path / "ck"), "--data-dir", str(shared_data / "geco")]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr[-4000:]
    out = run.stdout

    # the dataset summary comes first, before any model is touched
    assert out.index("binary_all") < out.index("[1/4] Models")
    assert "nonbinary_subject" in out.split("[1/4] Models")[0]

    report = LocalStore(results).read_all()
    assert report.warnings == []
    scores = [d for d in report.documents if d["record_type"] == "explainer_score"]
    assert len(scores) == 2 * 3  # ZS + C × three explainers
    for record in scores:
        validate_record(record)
        assert record["dataset"]["config"] == "binary_all"
        assert record["protocol"]["max_sentence_groups"] == 4
    assert {r["model"]["regime"] for r in scores} == {"ZS", "C"}
    ce = [r for r in scores if r["model"]["regime"] == "C"]
    # the paper's filter (one subset, defined by C) keeps sentences, and every record is scored on it
    assert all(r["counts"]["n_scored"] > 0 for r in scores)
    assert len({r["filter"]["subset_fingerprint"] for r in scores}) == 1
    assert all(r["model"]["zero_shot_reference"] for r in ce)
    # common random numbers: the model-independent baseline is exactly as correct on CE as on its ZS reference
    uniform = next(r for r in ce if r["explainer"]["name"] == "uniform_random")
    assert uniform["metrics"]["relative_mass_accuracy"]["value"] == 0.0
    for record in scores:  # one signed gap definition, with its paired interval
        gap = record["metrics"]["mass_accuracy_gap"]
        assert gap["definition"] == "MA(male) − MA(female)" and gap["n_source_sentences"] > 0

    # the leaderboard table lists every record, and the Space hint is printed
    table = out.split("[4/4] Leaderboard")[1]
    assert "explainer" in table and "MA 95% CI" in table
    for name in ("saliency", "input_x_gradient", "uniform_random"):
        assert table.count(name) == 2
    assert f"gecobench space --results {results}" in out

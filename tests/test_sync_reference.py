"""scripts/maintainer/sync_reference.py: a reference run's records into the committed reference folder."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMITTED = REPO_ROOT / "reference" / "store"


def _sync():
    spec = importlib.util.spec_from_file_location("sync_reference_under_test",
                                                  REPO_ROOT / "scripts" / "maintainer" / "sync_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _filtered_records(n: int) -> list[Path]:
    """``n`` committed records with the paper's filter (they have a per-sentence side file)."""
    chosen = []
    for path in sorted((COMMITTED / "explainer_score").glob("*.json")):
        record = json.loads(path.read_text())
        if record["protocol"].get("filter") != "none" and (COMMITTED / "sentence_scores" / f"{path.stem}.json.gz").is_file():
            chosen.append(path)
        if len(chosen) == n:
            return chosen
    pytest.skip("the committed reference store has too few filtered records")


def _store(root: Path, records: list[Path]) -> Path:
    for sub in ("explainer_score", "sentence_scores"):
        (root / "store" / sub).mkdir(parents=True, exist_ok=True)
    for path in records:
        shutil.copy2(path, root / "store" / "explainer_score" / path.name)
        shutil.copy2(COMMITTED / "sentence_scores" / f"{path.stem}.json.gz", root / "store" / "sentence_scores")
    return root


def _ids(root: Path, sub: str) -> set[str]:
    return {p.name.split(".")[0] for p in (root / "store" / sub).iterdir()}


def test_replace_leaves_exactly_the_runs_records(tmp_path: Path) -> None:
    a, b, c, d = _filtered_records(4)
    run = _store(tmp_path / "run", [a, b, c])
    (run / "zoo_summary.json").write_text("[]\n")
    (run / "timings.json").write_text("{}\n")
    committed = _store(tmp_path / "reference", [c, d])

    assert _sync()(["--from", str(run), "--to", str(committed)]) == 0
    assert _ids(committed, "explainer_score") == {a.stem, b.stem, c.stem, d.stem}, "without --replace nothing goes"
    assert not (committed / "zoo_summary.json").exists()

    assert _sync()(["--from", str(run), "--to", str(committed), "--replace"]) == 0
    assert _ids(committed, "explainer_score") == {a.stem, b.stem, c.stem}
    assert _ids(committed, "sentence_scores") == {a.stem, b.stem, c.stem}
    assert (committed / "zoo_summary.json").read_text() == "[]\n"


def test_a_run_without_valid_records_changes_nothing(tmp_path: Path, capsys) -> None:
    (d,) = _filtered_records(1)
    committed = _store(tmp_path / "reference", [d])
    run = tmp_path / "run"
    (run / "store" / "explainer_score").mkdir(parents=True)
    (run / "store" / "explainer_score" / "broken.json").write_text("{not json")
    with pytest.raises(SystemExit):
        _sync()(["--from", str(run), "--to", str(committed), "--replace"])
    assert "no valid explainer_score records" in capsys.readouterr().err
    assert _ids(committed, "explainer_score") == {d.stem}


def test_zero_shot_attribution_bundles_are_validated_and_copied(tmp_path: Path, capsys) -> None:
    (a,) = _filtered_records(1)
    run = _store(tmp_path / "run", [a])
    bundles = sorted((REPO_ROOT / "reference" / "zero_shot_attributions").glob("*.json.gz"))[:2]
    (run / "zero_shot_attributions").mkdir()
    for bundle in bundles:
        shutil.copy2(bundle, run / "zero_shot_attributions" / bundle.name)
    (run / "zero_shot_attributions" / "broken.json.gz").write_bytes(b"not gzip")
    committed = _store(tmp_path / "reference", [a])
    (committed / "zero_shot_attributions").mkdir()
    (committed / "zero_shot_attributions" / "of-another-run.json.gz").write_bytes(bundles[0].read_bytes())

    assert _sync()(["--from", str(run), "--to", str(committed)]) == 0
    assert "not copied" in capsys.readouterr().err
    names = {p.name for p in (committed / "zero_shot_attributions").iterdir()}
    assert names == {b.name for b in bundles} | {"of-another-run.json.gz"}, "broken ones stay out"
    assert _sync()(["--from", str(run), "--to", str(committed), "--replace"]) == 0
    assert {p.name for p in (committed / "zero_shot_attributions").iterdir()} == {b.name for b in bundles}

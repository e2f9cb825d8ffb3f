"""module_path finds the metric modules wherever the package runs; the Space widget reports bad input clearly."""

from __future__ import annotations

from pathlib import Path

import evaluate
import pytest

from gecobench.metrics import available_modules, module_path
from gecobench.metrics.widget import compute_from_json, example_arguments

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_module_path_is_the_checkouts_folder_here_and_lists_every_module():
    on_disk = sorted(p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
    assert available_modules() == on_disk
    assert Path(module_path("mass_accuracy")) == REPO_ROOT / "metrics" / "mass_accuracy"
    for name in on_disk:  # what a Space or publish_hub.py needs in every folder
        for file in (f"{name}.py", "app.py", "requirements.txt", "README.md"):
            assert (Path(module_path(name)) / file).is_file(), (name, file)
        requirements = (Path(module_path(name)) / "requirements.txt").read_text().splitlines()
        assert "gecobench-hub" in requirements and any(line.startswith("evaluate") for line in requirements)


def test_an_unknown_module_name_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown metric module 'mass_acuracy'; available: .*mass_accuracy"):
        module_path("mass_acuracy")


@pytest.fixture(scope="module")
def mass_accuracy():
    return evaluate.load(module_path("mass_accuracy"))


def test_widget_computes_from_a_json_object(mass_accuracy):
    assert set(example_arguments(mass_accuracy)) >= {"attributions", "ground_truth"}
    out = compute_from_json(mass_accuracy, '{"attributions": [[0.75, 0.25]], "ground_truth": [[1, 0]]}')
    assert out["mass_accuracy"] == pytest.approx(0.75, rel=1e-12) and out["n_scored"] == 1


@pytest.mark.parametrize(("text", "error", "message"), [
    ('{"attributions": [[1.0]],', ValueError, r"not valid JSON \(line 1, column 26\)"),
    ("[1, 2]", TypeError, "must be a JSON object of compute\\(\\) keyword arguments, got list"),
])
def test_widget_names_what_is_wrong_with_the_text(mass_accuracy, text, error, message):
    with pytest.raises(error, match=message):
        compute_from_json(mass_accuracy, text)

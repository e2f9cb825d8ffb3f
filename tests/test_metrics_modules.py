"""The evaluate modules under metrics/: offline loading from an empty cache, doctests, declared metadata."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
MODULE_NAMES = sorted(p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
MODULE_TYPES = {"relative_mass_accuracy": "comparison", "cooccurrence_bias": "measurement", "bias_indices": "measurement"}
MATH_MODULES = [
    "gecobench.metrics.mass_accuracy",
    "gecobench.metrics.relative_mass_accuracy",
    "gecobench.metrics.cooccurrence",
    "gecobench.metrics.bias_indices",
    "gecobench.metrics.properties",
    "gecobench.metrics.ranking",
]

# Runs in a fresh interpreter with HF_HOME / HF_MODULES_CACHE pointing to an empty folder, so evaluate must
# copy each module and resolve its imports from scratch; it then runs each module's docstring examples.
_CHECKER = r"""
import doctest, inspect, json, math, sys
from pathlib import Path
import evaluate

repo, names, types = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
report = {}
for name in names:
    entry = {}
    for how, path in (("relative", f"metrics/{name}"), ("absolute", str(repo / "metrics" / name))):
        try:
            module = evaluate.load(path, module_type=types.get(name, "metric"))
            entry[how] = {"ok": True, "name": module.name, "meta": type(module).meta,
                          "module_type": module.module_type}
        except Exception as err:  # reported to the test, which fails with the message
            entry[how] = {"ok": False, "error": f"{type(err).__name__}: {err}"}
    module_obj = sys.modules[type(module).__module__] if entry["absolute"]["ok"] else None
    if module_obj is not None:
        test = doctest.DocTestParser().get_doctest(module_obj._KWARGS_DESCRIPTION, {}, name, name, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        out = []
        runner.run(test, out=out.append)
        entry["doctest"] = {"attempted": runner.tries, "failed": runner.failures, "log": "".join(out)[-2000:]}
        info = module._info()
        params = list(inspect.signature(type(module)._compute).parameters.values())[1:]
        entry["info"] = {"info_class": type(info).__name__, "citation": info.citation,
                         "description": info.description, "inputs_description": info.inputs_description,
                         "features": {col: type(feature).__name__ for col, feature in info.features.items()},
                         "required": [p.name for p in params if p.default is inspect.Parameter.empty]}
    report[name] = entry

bad_calls = {
    "mass_accuracy": dict(attributions=[[0.1, float("nan")]], ground_truth=[[1, 0]]),
    "auprc": dict(attributions=[[0.1, 0.2]], ground_truth=[[1, 0, 0]]),
    "sparsity": dict(attributions=[]),
    "relative_mass_accuracy": dict(predictions=[0.5], references=[float("inf")]),
    "cooccurrence_bias": dict(words=[["he"]], group=["robot"]),
    "bias_indices": dict(group=["male"], word=["x"], probability=[-0.1], rank=[1], is_adjective=[True],
                         lexicon={}, k=1),
    "methods_agreement": dict(attributions=[[1.0, 0.0]]),
}
for name, kwargs in bad_calls.items():
    module = evaluate.load(f"metrics/{name}", module_type=types.get(name, "metric"))
    try:
        module.compute(**kwargs)
        report[name]["bad_input"] = "no error"
    except ValueError as err:
        report[name]["bad_input"] = f"ValueError: {err}"
    except Exception as err:
        report[name]["bad_input"] = f"{type(err).__name__}: {err}"
print("REPORT" + json.dumps(report, default=str))
"""


@pytest.fixture(scope="module")
def load_report(tmp_path_factory) -> dict:
    cache = tmp_path_factory.mktemp("empty_hf_home")
    env = dict(os.environ, HF_HOME=str(cache), HF_MODULES_CACHE=str(cache / "modules"),
               HF_EVALUATE_CACHE=str(cache / "evaluate"), HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
               PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", _CHECKER, str(REPO_ROOT), json.dumps(MODULE_NAMES), json.dumps(MODULE_TYPES)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("REPORT")]
    assert lines, f"checker failed (rc={proc.returncode}):\n{proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("REPORT"):])


def test_all_twelve_modules_exist():
    expected = {"mass_accuracy", "relative_mass_accuracy", "cooccurrence_bias", "bias_indices",
                "model_randomisation_check", "small_noise_check", "label_difference", "methods_agreement",
                "sparsity", "covariate_complexity", "relevance_rank_accuracy", "auprc"}
    assert expected <= set(MODULE_NAMES)


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_module_loads_offline_from_empty_cache(load_report, name):
    for how in ("relative", "absolute"):
        entry = load_report[name][how]
        assert entry["ok"], f"{name} ({how}): {entry.get('error')}"
        assert entry["module_type"] == MODULE_TYPES.get(name, "metric")


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_module_docstring_examples_pass(load_report, name):
    result = load_report[name]["doctest"]
    assert result["attempted"] >= 3, f"{name}: its _KWARGS_DESCRIPTION has no runnable example"
    assert result["failed"] == 0, result["log"]


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_module_meta_matches_registry_and_card(load_report, name):
    from gecobench.metrics import METRICS_META

    meta = load_report[name]["absolute"]["meta"]
    assert meta == json.loads(json.dumps(METRICS_META[name], default=str))
    assert set(meta) >= {"name", "direction", "range", "best", "property"}
    card = (REPO_ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n"), f"{name}: card lacks YAML front matter"
    front = card.split("---\n")[1]
    for key in ("title:", "emoji:", "tags:", "description:", "sdk:", "app_file:"):
        assert key in front, f"{name}: front matter lacks {key}"
    body = card.lower()
    for section in ("## inputs", "## outputs", "## examples", "## limitations", "## citation"):
        assert section in body, f"{name}: card lacks {section}"
    assert f"direction: {meta['direction']}".lower() in body, f"{name}: card does not state the direction"
    assert "best value" in body and "range" in body


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_module_info_keeps_its_texts_citation_and_features(load_report, name):
    """What ``_info()`` returns (built by ``gecobench.metrics.module_info``) still carries the module's card
    texts, a citation the card repeats, and exactly the columns its ``_compute`` requires, in that order."""
    info = load_report[name]["info"]
    kind = MODULE_TYPES.get(name, "metric")
    assert info["info_class"] == f"{kind.capitalize()}Info"
    assert info["description"].strip(), f"{name}: _info() lost its description"
    assert ">>>" in info["inputs_description"], f"{name}: _info() lost its inputs doc with examples"
    keys = re.findall(r"@\w+\{([^,\s]+),", info["citation"])
    assert keys, f"{name}: _info() has no BibTeX citation: {info['citation']!r}"
    card = (REPO_ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    assert all(key in card for key in keys), f"{name}: the card does not cite {keys}"
    assert list(info["features"]) == info["required"], f"{name}: features {info['features']} vs _compute"
    for column, feature in info["features"].items():
        assert feature in ("Value", "List", "Sequence"), f"{name}: {column} is a {feature}"
        assert f"{column} (`" in info["inputs_description"], f"{name}: the inputs doc does not describe {column}"


def test_module_info_builds_sequences_from_dtypes_and_keeps_other_features():
    import datasets

    from gecobench.metrics.module_info import module_info

    info = module_info("d", "c", "i", {"scores": "float64", "group": datasets.Value("string")},
                       reference_urls=("https://example.org",), module_type="measurement")
    assert type(info).__name__ == "MeasurementInfo" and info.module_type == "measurement"
    assert (info.description, info.citation, info.inputs_description) == ("d", "c", "i")
    assert info.features == datasets.Features({"scores": datasets.Sequence(datasets.Value("float64")),
                                               "group": datasets.Value("string")})
    assert list(info.features) == ["scores", "group"] and info.reference_urls == ["https://example.org"]
    assert module_info("d", "c", "i", {"x": "int64"}).reference_urls == []
    with pytest.raises(ValueError, match="module_type"):
        module_info("d", "c", "i", {"x": "int64"}, module_type="metrics")


@pytest.mark.parametrize(
    "name, field",
    [("mass_accuracy", "attributions: sentence 0"), ("auprc", "sentence 0"), ("sparsity", "attributions: empty"),
     ("relative_mass_accuracy", "references: sentence 0"), ("cooccurrence_bias", "group: sentence 0"),
     ("bias_indices", "probability: row 0"), ("methods_agreement", "others")],
)
def test_module_bad_input_raises_value_error_naming_the_field(load_report, name, field):
    message = load_report[name]["bad_input"]
    assert message.startswith("ValueError: ") and field in message, message


def test_module_source_has_one_import_per_line():
    for name in MODULE_NAMES:
        for line in (REPO_ROOT / "metrics" / name / f"{name}.py").read_text().splitlines():
            if line.startswith("import "):
                assert "," not in line, f"{name}: '{line}' — evaluate needs one import per line"


@pytest.mark.parametrize("module_name", MATH_MODULES)
def test_math_module_doctests(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module_name} has no doctest"
    assert result.failed == 0


def test_registry_covers_every_module_and_is_well_formed():
    from gecobench.metrics import METRICS_META

    assert set(MODULE_NAMES) == set(METRICS_META)
    for name, meta in METRICS_META.items():
        assert meta["name"] == name
        lo, hi = meta["range"]
        if lo is not None and hi is not None:
            assert lo < hi
        json.dumps(meta)  # the Space serialises the registry

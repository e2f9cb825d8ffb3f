"""The installed package works without the checkout: a wheel built from the source tree, installed into a fresh
virtual environment outside the checkout, loads a GECO config, a metric module (shipped inside the wheel) and
the leaderboard Space's app object; without the package, ``evaluate.load`` names the distribution to install.

The fresh environment reuses the shared environment's third-party packages through a ``.pth`` line (so torch is
not downloaded again) but not its editable install of this project: ``gecobench`` comes from the wheel or not
at all.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# never copied into the build: outputs, caches and the environment
_IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "results",
    "requests", "runs", "artifacts", ".cache", "site", "metric_modules", ".ruff_cache",
)


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def build_wheel(source: Path, out_dir: Path) -> Path:
    """A wheel of ``source`` (copied first so that the build writes nothing into the checkout)."""
    tree = out_dir / "source"
    shutil.copytree(source, tree, ignore=_IGNORED)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(out_dir / "dist"), str(tree)])
    (wheel,) = (out_dir / "dist").glob("gecobench_hub-*.whl")
    return wheel


def fresh_venv(path: Path) -> Path:
    """A new virtual environment that sees the shared environment's packages but not its editable install;
    returns its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)])
    python = path / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    shared = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # a path line, not the shared folder's own .pth files: the editable finder of this project stays inactive
    (Path(purelib) / "zz_shared_packages.pth").write_text("\n".join(sorted(shared)) + "\n")
    return python


#: the pinned CPU build of torch (the one ``make setup`` installs; a plain ``torch`` would pull a CUDA build)
TORCH_PIN = "torch==2.13.0"


def installed_venv(path: Path, wheel: Path, env: dict[str, str]) -> Path:
    """A fresh virtual environment at ``path`` with torch (the pinned CPU build, first, as ``make setup``) and then
    ``wheel`` *with* its dependencies, through pip's ordinary index (no ``--system-site-packages``, no path line to
    the shared environment); returns its python."""
    _run([sys.executable, "-m", "venv", str(path)])
    python = path / "bin" / "python"
    for what in (TORCH_PIN, str(wheel)):
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", what], env=env, capture_output=True,
                              text=True, timeout=3000, check=False)
        assert done.returncode == 0, f"pip install {what} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return python


def clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update({
        "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "HF_MODULES_CACHE": str(tmp / "hf-modules"), "HF_DATASETS_CACHE": str(tmp / "hf-datasets"),
        "HF_HOME": str(tmp / "hf-home"), "GRADIO_ANALYTICS_ENABLED": "False", "OMP_NUM_THREADS": "1",
        "MPLCONFIGDIR": str(tmp / "mpl"),
    })
    return env


INSIDE_THE_VENV = r"""
import json, runpy, sys
from pathlib import Path

import evaluate, gradio

import geco_common, gecobench, geco_dataset, leaderboard_space
from geco_dataset import load_geco
from gecobench.metrics import available_modules, module_path
from leaderboard_space.app import build_app

origins = {m.__name__: m.__file__ for m in (geco_common, gecobench, geco_dataset, leaderboard_space)}
rows = load_geco("binary_all", "test")
metric = evaluate.load(module_path("mass_accuracy"))
result = metric.compute(attributions=[[0.9, 0.0, 0.0, 0.1]], ground_truth=[[1, 1, 0, 0]])
widget = runpy.run_path(str(Path(module_path("sparsity")) / "app.py"), run_name="app")["demo"]
app = build_app(results_location=sys.argv[1])
print(json.dumps({
    "prefix": sys.prefix, "origins": origins, "geco_rows": len(rows), "geco_first_words": rows[0]["words"],
    "modules": available_modules(), "module_folder": module_path("mass_accuracy"), "mass_accuracy": result,
    "widget": type(widget).__name__, "app": type(app).__name__, "app_is_blocks": isinstance(app, gradio.Blocks),
}))
"""


def space_modules(folder: Path = REPO_ROOT / "leaderboard_space") -> set[str]:
    """The modules of ``folder`` (the Space's package) that its ``app.py`` imports, directly or through each other,
    with ``__init__``: any import statement counts, also one inside a function (the Space imports some lazily)."""
    package = folder.name
    found, todo = {"__init__"}, ["app"]
    while todo:
        name = todo.pop()
        if name in found or not (folder / f"{name}.py").is_file():
            continue
        found.add(name)
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                todo += [a.name.split(".")[1] for a in node.names if a.name.startswith(f"{package}.")]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level == 0 and module == package or node.level == 1 and not module:
                    todo += [a.name for a in node.names]  # ``from leaderboard_space import ranking``
                elif node.level == 0 and module.startswith(f"{package}."):
                    todo.append(module.split(".")[1])
                elif node.level == 1:
                    todo.append(module.split(".")[0])
    return found


def test_every_module_of_the_space_package_is_one_the_app_imports():
    """No test or maintainer helper inside leaderboard_space/: a module there that the app never imports would
    ship in the wheel and the published Space for nothing (tests/ and scripts/maintainer/ hold those)."""
    modules = {p.stem for p in (REPO_ROOT / "leaderboard_space").glob("*.py")}
    assert modules == space_modules(), f"not imported by the app: {sorted(modules - space_modules())}"


def test_space_modules_follows_lazy_and_package_imports(tmp_path: Path):
    """The import closure above on a made-up package: a helper nothing imports is left out."""
    folder = tmp_path / "leaderboard_space"
    folder.mkdir()
    files = {"__init__": "", "app": "from leaderboard_space import a\nimport leaderboard_space.b\n",
             "a": "def f():\n    from leaderboard_space.c import x\n", "b": "from . import d\n", "c": "x = 1\n",
             "d": "from .e import y\n", "e": "y = 2\n", "helper": "from leaderboard_space import a\n"}
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)
    assert space_modules(folder) == {"__init__", "app", "a", "b", "c", "d", "e"}


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(REPO_ROOT, tmp_path_factory.mktemp("wheel"))


def test_the_wheel_carries_the_metric_modules_and_the_space(built_wheel: Path):
    import zipfile

    names = set(zipfile.ZipFile(built_wheel).namelist())
    for module in sorted(p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()):
        for file in (f"{module}.py", "app.py", "requirements.txt", "README.md"):
            assert f"gecobench/metric_modules/{module}/{file}" in names, (module, file)
    assert {"leaderboard_space/app.py", "leaderboard_space/requirements.txt", "geco_dataset/spanish_sources.py"} <= names
    assert not any(name.startswith(("tests/", "metrics/", "scripts/")) for name in names)
    # only what the Space runs: its modules are the app's imports, not the test-only figures nor the maintainers'
    # helpers (synthetic records, the Chromium driver), which live in tests/ and scripts/maintainer/
    shipped = {name.removeprefix("leaderboard_space/") for name in names
               if name.startswith("leaderboard_space/") and name.endswith(".py")}
    assert shipped == {f"{module}.py" for module in space_modules()}, shipped ^ {f"{m}.py" for m in space_modules()}
    assert not shipped & {"figures.py", "screenshot.py", "sample_records.py"}, shipped
    assert not any(Path(name).name in ("_sample_records.py", "_space_browser.py", "space_browser_helpers.py")
                   for name in names)
    # what the installed package reads through importlib.resources: the generation rules, the example submission,
    # the dataset cards, and the command
    for rule in (REPO_ROOT / "geco_dataset" / "generation" / "rule-tables").iterdir():
        assert f"geco_dataset/generation/rule-tables/{rule.name}" in names, rule.name
    assert {"submissions/examples/gradient_norm_explainer.py", "geco_dataset/cards/geco_README.md",
            "gecobench/cli/__init__.py", "gecobench/__main__.py"} <= names
    # the base layer below geco_dataset and gecobench (docs/architecture.md), whose version the wheel carries
    from geco_common import __version__

    base = {name for name in names if name.startswith("geco_common/")}
    assert base == {f"geco_common/{p.name}" for p in (REPO_ROOT / "geco_common").glob("*.py")}, base
    assert built_wheel.name.startswith(f"gecobench_hub-{__version__}-"), built_wheel.name
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(built_wheel).read(entry_points).decode()
    assert "[console_scripts]" in text and "gecobench = gecobench.cli:main" in text
    # the jobs of the packages above the core reach the command through these (gecobench.cli, docs/architecture.md)
    commands = text.split("[gecobench.commands]", 1)[1].split("\n[", 1)[0]
    assert {line.replace(" ", "") for line in commands.strip().splitlines()} == {
        "submit=submissions.cli:SUBMIT", "queue=submissions.cli:QUEUE", "space=leaderboard_space:SPACE"}, text
    assert {"submissions/cli/__init__.py", "submissions/cli/submit.py", "submissions/cli/queue.py",
            "gecobench/heatmap.py", "gecobench/contrast.py"} <= names


@pytest.mark.slow  # a fresh environment importing torch, gradio and evaluate: minutes on a busy 2-core machine
def test_installed_wheel_outside_the_checkout_loads_geco_a_metric_and_the_space(
    built_wheel: Path, shared_data: Path, tmp_path: Path
):
    python = fresh_venv(tmp_path / "venv")
    env = clean_env(tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    # without the package: evaluate names the distribution to install, not the import name
    module_copy = tmp_path / "mass_accuracy"
    shutil.copytree(REPO_ROOT / "metrics" / "mass_accuracy", module_copy)
    missing = subprocess.run([str(python), "-c", f"import evaluate; evaluate.load({str(module_copy)!r})"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert missing.returncode != 0 and "pip install gecobench-hub" in missing.stderr, missing.stderr[-2000:]

    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          "--ignore-installed", str(built_wheel)])
    env["GECOBENCH_GECO_DIR"] = str(shared_data / "geco")
    (tmp_path / "results").mkdir()
    done = _run([str(python), "-c", INSIDE_THE_VENV, str(tmp_path / "results")], cwd=work, env=env)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    prefix = report["prefix"]
    assert Path(prefix).resolve() == (tmp_path / "venv").resolve()
    for name, origin in report["origins"].items():  # the wheel's copies, not the checkout's
        assert Path(origin).resolve().is_relative_to(Path(prefix).resolve()), (name, origin)
    assert report["geco_rows"] == 644 and report["geco_first_words"]
    assert "mass_accuracy" in report["modules"] and "relative_mass_accuracy" in report["modules"]
    assert Path(report["module_folder"]).resolve().is_relative_to(Path(prefix).resolve())
    assert report["mass_accuracy"]["mass_accuracy"] == pytest.approx(0.9, rel=1e-12)
    assert report["widget"] == "Blocks" and report["app_is_blocks"], report


#: A user's own explainer, in a file next to them (not a module on sys.path): ``--import`` takes the file.
USER_EXPLAINER = """
from gecobench.explainers import Explainer, register_explainer


@register_explainer
class LastWordExplainer(Explainer):
    name = "last_word"
    version = "0.1.0"

    def explain(self, model, tokenizer, words, targets):
        return [[0.0] * (len(sentence) - 1) + [1.0] for sentence in words]
"""


def test_the_installed_command_trains_and_scores_outside_the_checkout(
    built_wheel: Path, shared_data: Path, tmp_path: Path
):
    """The short installed path: from an unrelated folder, ``gecobench --help``, ``gecobench train`` a tiny OLA and
    ``gecobench evaluate`` two built-ins and a user's explainer file; the records are written and the metric
    modules come from the installed package (before the fix the evaluation failed after explaining every
    sentence, looking for the checkout's metrics/)."""
    python = fresh_venv(tmp_path / "venv")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          str(built_wheel)])
    command = tmp_path / "venv" / "bin" / "gecobench"
    assert command.is_file(), "the wheel installs no `gecobench` console script"
    env = clean_env(tmp_path)
    env["GECOBENCH_GECO_DIR"] = str(shared_data / "geco")
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "my_explainer.py").write_text(USER_EXPLAINER, encoding="utf-8")

    shown = _run([str(command), "--help"], cwd=work, env=env)
    top = shown.stdout
    assert all(f"  {name}" in top for name in ("demo", "train", "evaluate", "submit", "queue", "space", "build-geco"))
    assert "note:" not in shown.stderr, shown.stderr  # the wheel's metadata registers every job
    assert _run([str(python), "-m", "gecobench", "--help"], cwd=work, env=env).stdout == top

    _run([str(command), "train", "--regime", "OLA", "--config", "binary_all", "--schedule", "tiny",
          "--output-dir", "zoo", "--threads", "1", "--quiet"], cwd=work, env=env)
    checkpoint = work / "zoo" / "binary_all" / "OLA" / "seed0"
    assert (checkpoint / "gecobench_model.json").is_file()
    done = _run([str(command), "evaluate", "--explainers", "uniform_random", "saliency", "last_word",
                 "--import", "my_explainer.py", "--models", str(checkpoint.relative_to(work)), "--max-groups", "2",
                 "--chunk-size", "2", "--no-properties", "--no-faithfulness", "--bootstrap", "20",
                 "--results", "store", "--checkpoint-dir", "checkpoints", "--quiet"], cwd=work, env=env)
    assert "records written: 3" in done.stdout, done.stdout
    records = [json.loads(p.read_text()) for p in (work / "store" / "explainer_score").glob("*.json")]
    assert sorted(r["explainer"]["name"] for r in records) == ["last_word", "saliency", "uniform_random"]
    for record in records:
        ma = record["metrics"]["mass_accuracy"]
        assert "evaluate:metrics/mass_accuracy" in ma["computed_with"] and 0.0 <= ma["value"] <= 1.0
    # the evaluation's evaluate modules load from the wheel's copies, not from a checkout
    probe = ("import json; from gecobench.evaluation.scoring import load_metric_module; "
             "from gecobench.metrics import module_path; "
             "result = load_metric_module('mass_accuracy').compute(attributions=[[0.9, 0.0, 0.0, 0.1]], "
             "ground_truth=[[1, 1, 0, 0]]); "
             "print(json.dumps({'folder': module_path('mass_accuracy'), 'ma': result['mass_accuracy']}))")
    found = json.loads(_run([str(python), "-c", probe], cwd=work, env=env).stdout.strip().splitlines()[-1])
    assert Path(found["folder"]).resolve().is_relative_to((tmp_path / "venv").resolve()), found
    assert found["ma"] == pytest.approx(0.9, rel=1e-12)


# The full installed path (every dependency installed, the queue, the Space): tests/test_installed_end_to_end.py

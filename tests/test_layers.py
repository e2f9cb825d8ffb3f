"""The packages form layers, each importing only the ones below it (docs/architecture.md):
``geco_common`` → ``geco_dataset`` → ``gecobench`` → ``submissions`` → ``leaderboard_space``.

Before the base layer existed, ``geco_dataset`` imported ``gecobench`` (its domain constants, its provenance, a
metric and the version) while ``gecobench`` imported ``geco_dataset``, the cycle broken only by imports inside
functions; until the command registry, ``gecobench.cli`` imported the submit, queue and Space jobs of the two
packages above it. These tests read every module's imports, at module level and inside functions, so that an import
upwards fails here rather than as an import cycle later.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: each package and the project's packages it must not import (the ones above it)
FORBIDDEN: dict[str, set[str]] = {
    "geco_common": {"geco_dataset", "gecobench", "submissions", "leaderboard_space"},
    "geco_dataset": {"gecobench", "submissions", "leaderboard_space"},
    # the command's upper jobs come in through entry points (gecobench.cli), the heat map lives in the core
    "gecobench": {"submissions", "leaderboard_space"},
    "submissions": {"leaderboard_space"},
}


def imported_packages(source: str) -> dict[str, list[int]]:
    """The top-level packages a module's source imports, with the lines: ``import``/``from … import`` statements
    anywhere (also inside functions and ``try`` blocks) and ``importlib.import_module("…")`` / ``__import__("…")``
    with a literal name. Relative imports stay inside the package and are left out."""
    found: dict[str, list[int]] = {}
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if called in ("import_module", "__import__"):
                names = [node.args[0].value]
        for name in names:
            found.setdefault(name.split(".")[0], []).append(node.lineno)
    return found


def upward_imports(package_dir: Path, forbidden: set[str]) -> list[str]:
    """``path:line imports package`` (path relative to the package's parent) for every import of a ``forbidden``
    package by a module of ``package_dir``."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        for package, lines in imported_packages(path.read_text(encoding="utf-8")).items():
            if package in forbidden:
                out += [f"{path.relative_to(package_dir.parent)}:{line} imports {package}" for line in lines]
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_of_a_lower_layer_imports_an_upper_one(package: str) -> None:
    assert (REPO_ROOT / package / "__init__.py").is_file()
    assert upward_imports(REPO_ROOT / package, FORBIDDEN[package]) == []


def test_the_base_layer_imports_only_the_standard_library() -> None:
    """``geco_common`` is what everything else may import cheaply: no third-party library either."""
    allowed = set(sys.stdlib_module_names) | {"__future__", "geco_common"}
    for path in sorted((REPO_ROOT / "geco_common").rglob("*.py")):
        extra = set(imported_packages(path.read_text(encoding="utf-8"))) - allowed
        assert not extra, f"{path.relative_to(REPO_ROOT)} imports {sorted(extra)}"


def test_the_import_check_finds_imports_inside_functions_and_by_name(tmp_path: Path) -> None:
    """The checker above on a made-up package: every way of importing upwards is found, relative imports and
    mere mentions are not."""
    package = tmp_path / "lower"
    package.mkdir()
    (package / "__init__.py").write_text("from . import sibling\n")
    (package / "sibling.py").write_text("'''uses gecobench'''\nimport os\n")
    (package / "top.py").write_text("import gecobench.domain\n")
    (package / "lazy.py").write_text("def f():\n    try:\n        from gecobench.metrics import x\n"
                                     "    except ImportError:\n        pass\n")
    (package / "dynamic.py").write_text("import importlib\nm = importlib.import_module('submissions.worker')\n"
                                        "n = __import__('leaderboard_space')\n")
    assert upward_imports(package, FORBIDDEN["geco_dataset"]) == [
        "lower/dynamic.py:2 imports submissions", "lower/dynamic.py:3 imports leaderboard_space",
        "lower/lazy.py:3 imports gecobench", "lower/top.py:1 imports gecobench",
    ]


#: imports every module of a package in a fresh interpreter (but ``__main__``, which would run the command), then
#: names the project's packages that got loaded
IMPORT_ALL = r"""
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if not module.name.endswith(".__main__"):
        importlib.import_module(module.name)
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules}
                        & {"geco_common", "geco_dataset", "gecobench", "submissions", "leaderboard_space"})))
"""


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_importing_every_module_of_a_package_loads_no_upper_one(package: str) -> None:
    """What the source check above cannot see (an import by a computed name) shows here: after importing every
    module of ``package``, none of the packages above it is loaded."""
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, package], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert package in loaded and not loaded & FORBIDDEN[package], sorted(loaded)


def test_the_shared_names_are_defined_once_and_re_exported() -> None:
    """``gecobench.domain``, ``gecobench.provenance`` and ``geco_dataset`` hand out the base layer's objects
    themselves, not copies; the distribution's version is the base layer's."""
    import geco_common
    import geco_dataset
    import gecobench
    from geco_common import domain, provenance
    from gecobench import domain as bench_domain
    from gecobench import provenance as bench_provenance
    from gecobench.evaluation import data as evaluation_data
    from gecobench.spanish import pipeline

    for name in domain.__all__:
        assert getattr(bench_domain, name) is getattr(domain, name), name
    for name in provenance.__all__:
        assert getattr(bench_provenance, name) is getattr(provenance, name), name
    for name in ("GECO_CONFIGS", "GECO_SPLITS", "LABEL_NAMES", "MASK_PLACEHOLDER"):
        assert getattr(geco_dataset, name) is getattr(domain, name), name
    assert evaluation_data.GECO_CONFIGS is domain.GECO_CONFIGS and evaluation_data.LABEL_NAMES is domain.LABEL_NAMES
    assert pipeline.mask_placeholder() == domain.MASK_PLACEHOLDER
    assert gecobench.__version__ == geco_common.__version__
    assert provenance.base_provenance(3)["package_version"] == gecobench.__version__
    # one definition: the base layer's names are not assigned or defined again in the benchmark's modules
    for module in (bench_domain, bench_provenance):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        defined |= {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(target, ast.Name)}
        shared = set(domain.__all__) | set(provenance.__all__)
        assert not defined & shared, f"{module.__name__} defines {sorted(defined & shared)} again"

"""Where the ``evaluate`` metric modules are: the ``metrics/`` folder of a checkout, or inside the installed wheel.

``evaluate.load`` takes a module's folder; :func:`module_path` returns it wherever the package runs, so code and
docs can say ``evaluate.load(module_path("mass_accuracy"))`` instead of a path relative to the checkout.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # gecobench/
# an installed wheel carries the modules here (copied by setup.py's build_py) ...
PACKAGED_MODULES_DIR = _PACKAGE_DIR / "metric_modules"
# ... a checkout (or an editable install) has them next to the package
CHECKOUT_MODULES_DIR = _PACKAGE_DIR.parent / "metrics"


def _modules_dir() -> Path:
    for folder in (PACKAGED_MODULES_DIR, CHECKOUT_MODULES_DIR):
        if folder.is_dir():
            return folder
    raise FileNotFoundError(
        f"no metric modules found: neither {PACKAGED_MODULES_DIR} (installed wheel) nor {CHECKOUT_MODULES_DIR} "
        "(checkout) exists; reinstall gecobench-hub"
    )


def available_modules() -> list[str]:
    """Names of the metric modules (``mass_accuracy``, ``relative_mass_accuracy``, ...), sorted."""
    return sorted(p.name for p in _modules_dir().iterdir() if (p / f"{p.name}.py").is_file())


def module_path(name: str) -> str:
    """The folder of metric module ``name``, for ``evaluate.load(module_path("mass_accuracy"))``.

    Raises:
        ValueError: ``name`` is not a metric module (the message lists the available ones).
    """
    folder = _modules_dir() / name
    if not (folder / f"{name}.py").is_file():
        raise ValueError(f"unknown metric module {name!r}; available: {', '.join(available_modules())}")
    return str(folder)

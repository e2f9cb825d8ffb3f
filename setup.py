"""Build hook: the ``evaluate`` metric modules (``metrics/<name>/``) travel inside the wheel.

The modules are loaded by ``evaluate.load`` from a folder, not imported, so they are not a Python package of
the repository; ``build_py`` copies each folder to ``gecobench/metric_modules/<name>/`` in the wheel, where
:func:`gecobench.metrics.module_path` finds them. Everything else is declared in ``setup.cfg``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
MODULE_FILES = ("*.py", "README.md", "requirements.txt")


class BuildPyWithMetricModules(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads metrics/ of the checkout directly
        target_root = Path(self.build_lib) / "gecobench" / "metric_modules"
        for folder in sorted((HERE / "metrics").iterdir()):
            if not (folder / f"{folder.name}.py").is_file():
                continue
            target = target_root / folder.name
            target.mkdir(parents=True, exist_ok=True)
            for pattern in MODULE_FILES:
                for source in folder.glob(pattern):
                    shutil.copyfile(source, target / source.name)


setup(cmdclass={"build_py": BuildPyWithMetricModules})

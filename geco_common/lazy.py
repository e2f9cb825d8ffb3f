"""Names of a package that load on first use (PEP 562), so that importing the package stays cheap.

``gecobench`` (its Python front door, which needs torch) and ``submissions`` (its stores, which need numpy) both
export names that ``gecobench --help`` must not load. A package says which module holds each name::

    __getattr__, __dir__ = lazy_names(__name__, globals(), {"evaluate": "gecobench.api"})
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any], homes: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: a name of ``homes`` is imported from its
    module (``homes[name]``) when first read and kept in ``namespace`` (the package's globals), so the import
    runs once; any other name raises the usual AttributeError."""
    homes = dict(homes)

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__

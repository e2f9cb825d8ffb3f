"""GECOBench Hub core: models, explainers, the attribution engine, records and the results store."""

# the distribution's version, defined once in the base layer (which stamps it into provenance)
from geco_common import __version__ as __version__

# The Python front door (gecobench.api), loaded on first use so that `import gecobench` stays cheap (no torch).
_LAZY = {"evaluate": "gecobench.api", "load_results": "gecobench.api", "Results": "gecobench.api"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gecobench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])

"""GECOBench Hub core: models, explainers, the attribution engine, records and the results store."""

__version__ = "1.0.0.dev0"

# The Python front door (gecobench.api), loaded on first use so that `import gecobench` stays cheap (no torch).
_LAZY = {"evaluate": "gecobench.api", "load_results": "gecobench.api", "Results": "gecobench.api"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gecobench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])

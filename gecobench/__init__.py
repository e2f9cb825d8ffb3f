"""GECOBench Hub core: models, explainers, the attribution engine, records and the results store."""

# the distribution's version, defined once in the base layer (which stamps it into provenance)
from geco_common import __version__ as __version__

# The Python front door (gecobench.api), loaded on first use so that `import gecobench` stays cheap (no torch).
from geco_common.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, globals(), {
    "evaluate": "gecobench.api", "load_results": "gecobench.api", "Results": "gecobench.api"})

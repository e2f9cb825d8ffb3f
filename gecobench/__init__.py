"""GECOBench Hub core: models, explainers, the attribution engine, records and the results store."""

__version__ = "1.0.0.dev0"

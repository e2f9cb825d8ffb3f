"""GECOBench Hub core: models, explainers, the attribution engine, records and the results store."""

__version__ = "0.5.0"

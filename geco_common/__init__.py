"""The base layer of GECOBench Hub: what the dataset package (``geco_dataset``) and the benchmark core
(``gecobench``) both need, so that neither has to import the other for it.

* :mod:`geco_common.domain` — the shared vocabulary: GECO's configurations, folders, splits and class labels,
  and the Spanish templates' mask placeholder;
* :mod:`geco_common.provenance` — the provenance and hashing primitives every written artefact carries
  (package version, git commit, library versions, UTC time, a file's SHA-256);
* :mod:`geco_common.paths` — where a local copy of the released data is looked for (one rule for the dataset
  builders and for training).

This package imports nothing of the project (nor any third-party library): it is the bottom of the layer order
``geco_common`` → ``geco_dataset`` → ``gecobench`` → ``submissions`` → ``leaderboard_space``
(see docs/architecture.md).
"""

#: the version of the ``gecobench-hub`` distribution (all the project's packages ship in it); defined here, once,
#: because provenance is written from this layer; ``gecobench.__version__`` is this value and setup.cfg reads it
__version__ = "1.0.0.dev0"

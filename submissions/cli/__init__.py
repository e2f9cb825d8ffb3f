"""The jobs this package adds to the ``gecobench`` command: ``gecobench submit`` and ``gecobench queue``.

setup.cfg registers the two :class:`~gecobench.cli.Command` objects below in the ``gecobench.commands``
entry-point group; ``gecobench`` loads them to list its commands, so this module (and the package's
``__init__``) imports nothing of the pipeline. The jobs are :mod:`submissions.cli.submit` and
:mod:`submissions.cli.queue`, imported only when they run.
"""

from __future__ import annotations

from gecobench.cli import Command

SUBMIT = Command("submissions.cli.submit", "submit an explainer (code or precomputed) or show the queue and scores",
                 after="leaderboard")
QUEUE = Command("submissions.cli.queue", "process the submission queue (sandboxed) into the results store",
                after="submit")

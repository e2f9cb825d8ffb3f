"""The GECOBench leaderboard Space: data shaping (tables), figures, store loading and the Gradio app.

:data:`SPACE` is the job this package adds to the ``gecobench`` command (``gecobench space``, the command line of
:mod:`leaderboard_space.app`): setup.cfg registers it in the ``gecobench.commands`` entry-point group, and
``gecobench`` loads it to list its commands, so this module imports nothing of the Space.
"""

from gecobench.cli import Command

SPACE = Command("leaderboard_space.app", "run the leaderboard Space locally", after="queue")

"""``python -m gecobench``: the ``gecobench`` command (see :mod:`gecobench.cli`)."""

from gecobench.cli import main

raise SystemExit(main())

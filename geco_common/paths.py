"""Where a local copy of the released data is looked for: one rule for the dataset builders and for training."""

from __future__ import annotations

import os
from pathlib import Path

#: the checkout's root (the folder holding ``geco_common``); its sibling ``shared/data`` is the workspace's data
REPO_ROOT = Path(__file__).resolve().parent.parent
#: the folder holding every data set's copy (``geco/``, ``spanish/``…), when it is not the checkout's sibling
SHARED_DATA_ENV = "GECOBENCH_SHARED_DATA"


def shared_data_dir(env_var: str, folder: str) -> str | None:
    """``$env_var`` if set; else ``$GECOBENCH_SHARED_DATA/<folder>`` if that variable is set and the folder exists;
    else ``<repo>/../shared/data/<folder>`` if it exists; else ``None`` (the caller downloads)."""
    env = os.environ.get(env_var)
    if env:
        return env
    roots = [Path(os.environ[SHARED_DATA_ENV])] if os.environ.get(SHARED_DATA_ENV) else []
    for root in [*roots, REPO_ROOT.parent / "shared" / "data"]:
        if (root / folder).is_dir():
            return str(root / folder)
    return None

"""Where a local copy of the released data is looked for."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir(env_var: str, folder: str) -> str | None:
    """``$env_var`` if set, else ``<repo>/../shared/data/<folder>`` if it exists, else ``None`` (download)."""
    env = os.environ.get(env_var)
    if env:
        return env
    shared = REPO_ROOT.parent / "shared" / "data" / folder
    return str(shared) if shared.is_dir() else None

"""The provenance primitives every written artefact shares: package version, git commit, library versions,
UTC time, and a file's SHA-256.

The dataset package stamps its generated configs and exported cards with these, the benchmark its records and
checkpoints; the benchmark's own fingerprints (checkpoint folders, rows, canonical JSON) and machine descriptions
live in :mod:`gecobench.provenance`, which also re-exports these.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from geco_common import __version__

REPO_ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def git_commit() -> str:
    """The commit of the checkout this package runs from, with ``+dirty`` when files changed; ``unknown`` outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def library_versions() -> dict[str, str]:
    """Versions of the libraries whose behaviour can change scores."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "captum", "lime", "datasets", "evaluate", "numpy", "accelerate"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def utc_now() -> str:
    """Current UTC time in ISO 8601 with a ``Z`` suffix."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def base_provenance(seed: int | None = None) -> dict[str, Any]:
    """The provenance block every record carries."""
    return {
        "package": "gecobench-hub",
        "package_version": __version__,
        "git_commit": git_commit(),
        "libraries": library_versions(),
        "created_at": utc_now(),
        "seed": seed,
    }


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


__all__ = ["REPO_ROOT", "base_provenance", "git_commit", "library_versions", "sha256_file", "utc_now"]

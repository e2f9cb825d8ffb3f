"""Where the released data files are downloaded from (the local copy's rule: ``geco_common.paths``)."""

from __future__ import annotations

import os

RAW_BASE_URL_ENV = "GECOBENCH_RAW_BASE_URL"
RAW_BASE_URL = "https://raw.githubusercontent.com"


def raw_file_url(repo: str, commit: str, path: str) -> str:
    """Raw-file URL of ``path`` in GitHub repository ``repo`` at ``commit``.

    ``$GECOBENCH_RAW_BASE_URL`` replaces ``https://raw.githubusercontent.com`` (a mirror with the same
    ``<owner>/<repo>/<commit>/<path>`` layout); the files are checksum-verified wherever they come from.
    """
    base = os.environ.get(RAW_BASE_URL_ENV) or RAW_BASE_URL
    return f"{base.rstrip('/')}/{repo}/{commit}/{path}"

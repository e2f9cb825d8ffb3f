"""Where a local copy of the released data is looked for."""

from __future__ import annotations

import os

from geco_common.paths import shared_data_dir  # noqa: F401 (re-exported: the builders import it from here)

RAW_BASE_URL_ENV = "GECOBENCH_RAW_BASE_URL"
RAW_BASE_URL = "https://raw.githubusercontent.com"


def raw_file_url(repo: str, commit: str, path: str) -> str:
    """Raw-file URL of ``path`` in GitHub repository ``repo`` at ``commit``.

    ``$GECOBENCH_RAW_BASE_URL`` replaces ``https://raw.githubusercontent.com`` (a mirror with the same
    ``<owner>/<repo>/<commit>/<path>`` layout); the files are checksum-verified wherever they come from.
    """
    base = os.environ.get(RAW_BASE_URL_ENV) or RAW_BASE_URL
    return f"{base.rstrip('/')}/{repo}/{commit}/{path}"

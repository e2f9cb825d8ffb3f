"""Where the Space's stores are, from the environment a Hugging Face Space sets (Space variables and secrets).

=============================  ==============================================================================
``GECOBENCH_REFERENCE_REPO``   Space variable: the reference results dataset repo (``ORG/gecobench-reference``),
                               read-only; the Space opens on it
``GECOBENCH_RESULTS_REPO``     Space variable: the results dataset repo (``ORG/gecobench-results``)
``GECOBENCH_REQUESTS_REPO``    Space variable: the requests dataset repo (``ORG/gecobench-requests``)
``HF_TOKEN``                   Space secret: a token with write access to the requests repo
``GECOBENCH_REFERENCE``/``GECOBENCH_RESULTS``/``GECOBENCH_REQUESTS``  local folders instead (outside a Space)
=============================  ==============================================================================

Without a token the Space is read-only: it shows the (public) stores and refuses submissions with a message
saying so, instead of failing at the push.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

REFERENCE_REPO_VAR = "GECOBENCH_REFERENCE_REPO"
REFERENCE_FOLDER_VAR = "GECOBENCH_REFERENCE"
RESULTS_REPO_VAR = "GECOBENCH_RESULTS_REPO"
REQUESTS_REPO_VAR = "GECOBENCH_REQUESTS_REPO"
TOKEN_SECRETS: tuple[str, ...] = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


@dataclass(frozen=True)
class SpaceStores:
    """The store locations (``hf://datasets/…`` or a folder), the token, and whether writing is possible."""

    results: str
    requests: str
    token: str | None

    @property
    def requests_on_hub(self) -> bool:
        return self.requests.startswith("hf://")

    @property
    def read_only(self) -> bool:
        """True when submissions cannot be written: the requests store is on the Hub and no token is set."""
        return self.requests_on_hub and not self.token

    def describe(self) -> str:
        mode = "read-only (no HF_TOKEN secret)" if self.read_only else "read-write"
        return f"results: {self.results}; requests: {self.requests} ({mode})"


def _hub_or_folder(environ: Mapping[str, str], repo_var: str, folder_var: str, default_folder: str) -> str:
    repo = (environ.get(repo_var) or "").strip()
    if repo:
        if repo.count("/") != 1 or any(not part for part in repo.split("/")):
            raise ValueError(f"${repo_var} must name a dataset repo as OWNER/NAME, got {repo!r}")
        return f"hf://datasets/{repo}"
    return environ.get(folder_var) or default_folder


def reference_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The reference store the environment names: ``hf://datasets/<$GECOBENCH_REFERENCE_REPO>`` (a Space
    variable, as for the results store), else ``$GECOBENCH_REFERENCE`` (a folder or ``hf://`` value), else None
    (the caller's default: the repository's committed ``reference/store``)."""
    environ = os.environ if environ is None else environ
    return _hub_or_folder(environ, REFERENCE_REPO_VAR, REFERENCE_FOLDER_VAR, "") or None


def stores_from_env(environ: Mapping[str, str] | None = None) -> SpaceStores:
    """The stores the Space uses, from ``environ`` (default ``os.environ``)."""
    environ = os.environ if environ is None else environ
    token = next((environ[name] for name in TOKEN_SECRETS if environ.get(name)), None)
    return SpaceStores(
        results=_hub_or_folder(environ, RESULTS_REPO_VAR, "GECOBENCH_RESULTS", "results"),
        requests=_hub_or_folder(environ, REQUESTS_REPO_VAR, "GECOBENCH_REQUESTS", "requests"),
        token=token,
    )


READ_ONLY_MESSAGE = (
    "🔒 This Space is read-only: its requests store is a Hub dataset and no HF_TOKEN secret is set. "
    "The Space's owner adds one (Settings → Variables and secrets) to accept submissions; meanwhile, submit with "
    "`gecobench submit` against the requests repo."
)

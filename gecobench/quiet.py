"""Quiet means quiet: a command-line flag such as ``--quiet`` silences the libraries' own progress bars too.

transformers (``Loading weights``), huggingface_hub (downloads) and datasets (map/filter) draw their own tqdm
bars, independent of the bars this package draws; :func:`silence_library_progress` turns all of them off and
lowers the libraries' log level to errors, so a quiet run prints only results and errors.
"""

from __future__ import annotations

import logging
import os


def silence_library_progress() -> None:
    """Disable the progress bars and informational logging of transformers, huggingface_hub and datasets."""
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read by huggingface_hub when imported later
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()
    except ImportError:
        pass
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:
        pass
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:
        pass
    for name in ("transformers", "huggingface_hub", "datasets", "accelerate"):
        logging.getLogger(name).setLevel(logging.ERROR)

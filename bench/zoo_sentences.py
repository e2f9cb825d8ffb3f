"""What the explainer benches share: a zoo checkpoint in eval mode and the first test sentences of a config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class BenchInputs:
    model: Any
    tokenizer: Any
    words: list[list[str]]
    targets: list[int]
    truth: list[list[int]]


def load_bench_inputs(model_path: str, config: str, n_sentences: int, data_dir: str | None, threads: int) -> BenchInputs:
    """The checkpoint (eval mode, ``threads`` torch threads) and the first ``n_sentences`` test rows of ``config``:
    their words, true labels (the class explained) and ground-truth word masks."""
    import torch

    from gecobench.evaluation.data import load_split
    from gecobench.models import load_zoo_model

    torch.set_num_threads(threads)
    model, tokenizer, _ = load_zoo_model(model_path)
    model.eval()
    rows = load_split(config, "test", data_dir).rows[:n_sentences]
    return BenchInputs(model, tokenizer, [list(r.words) for r in rows], [int(r.label) for r in rows],
                       [list(r.ground_truth) for r in rows])

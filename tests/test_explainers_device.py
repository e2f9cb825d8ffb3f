"""On a GPU the built-in explainers give the scores they give on the CPU (skipped where no CUDA device exists)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from conftest import make_tiny_bert_classifier
from test_explainers import (
    BUILTINS,
    REORDERED_TOLERANCE,
    TARGETS,
    WORDS,
    make,
    max_relative_error,
)

from gecobench.explainers.engine import attribute

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_scores_on_the_gpu_equal_scores_on_the_cpu(name, tokenizer):
    cpu_model = make_tiny_bert_classifier(seed=3).double()
    gpu_model = copy.deepcopy(cpu_model).to("cuda")
    on_cpu = attribute(make(name), cpu_model, tokenizer, WORDS, TARGETS, seed=7)
    on_gpu = attribute(make(name), gpu_model, tokenizer, WORDS, TARGETS, seed=7)
    assert all(np.isfinite(s).all() for s in on_gpu)
    # other kernels sum in another order: the bound of any reordering of the same computation (test_explainers)
    assert max_relative_error(on_gpu, on_cpu) < REORDERED_TOLERANCE


@pytest.mark.parametrize("name", ["saliency", "integrated_gradients", "lime", "partition_shap"])
def test_bfloat16_runs_on_the_gpu_under_cuda_autocast(name, tokenizer):
    """``precision=bfloat16`` autocasts on the model's own device (CUDA here): finite scores, other than float32's,
    and the model's attention implementation untouched (the eager switch is for CPU only)."""
    gpu_model = make_tiny_bert_classifier(seed=3).to("cuda")
    attention = gpu_model.config._attn_implementation
    single = attribute(make(name), gpu_model, tokenizer, WORDS, TARGETS, seed=7)
    mixed = attribute(make(name, precision="bfloat16"), gpu_model, tokenizer, WORDS, TARGETS, seed=7)
    assert all(np.isfinite(s).all() for s in mixed) and [len(s) for s in mixed] == [len(w) for w in WORDS]
    assert max_relative_error(mixed, single) > 0
    assert gpu_model.config._attn_implementation == attention

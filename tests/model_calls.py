"""Counting what an explainer asks of a model: the rows of every forward call, with and without autograd."""

from __future__ import annotations

from typing import Self

import torch
from torch import nn


class RowCounter:
    """Counts the rows (inputs) every forward call of ``model`` receives while the context is open."""

    def __init__(self, model: nn.Module) -> None:
        self.rows: list[int] = []
        self.with_gradient: list[int] = []
        self.forward_only: list[int] = []
        self.handle = model.register_forward_hook(self._record, with_kwargs=True)

    def _record(self, module, args, kwargs, output) -> None:
        # gradient explainers call the model on embeddings, perturbation explainers on token ids
        given = kwargs.get("inputs_embeds")
        rows = int((given if given is not None else kwargs["input_ids"]).shape[0])
        self.rows.append(rows)
        (self.with_gradient if torch.is_grad_enabled() else self.forward_only).append(rows)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.handle.remove()

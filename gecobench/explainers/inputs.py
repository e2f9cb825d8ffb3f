"""Shared plumbing of the built-in explainers: encoding a batch, the reference input and the embedding forward.

Every model-based built-in attributes at the **output of the word-embedding lookup**
(``model.get_input_embeddings()``) and calls the model with ``inputs_embeds=``, so the model adds position and
token-type embeddings itself, exactly once. The reference input is ``[CLS] [PAD] … [PAD] [SEP]`` of the same
length as the sentence (special tokens kept, every word token replaced by ``[PAD]``); positions that are batch
padding stay ``[PAD]`` with attention mask 0, so they are invisible to the model and contribute nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from gecobench.words import tokenize_words

DEFAULT_MAX_LENGTH = 128


def sentence_seed(seed: int, words: Sequence[str], target: int) -> int:
    """A 63-bit seed derived from the run seed and the sentence itself.

    Random explainers draw from one stream per sentence, so a sentence gets the same scores whether it is
    explained alone or inside any batch (the engine's batched-equals-one-at-a-time guarantee).
    """
    digest = hashlib.sha256(f"{int(seed)}\x1f{int(target)}\x1f".encode() + "\x1e".join(words).encode("utf-8"))
    return int.from_bytes(digest.digest()[:8], "little") >> 1


def even_chunk(total: int, max_chunk: int) -> int:
    """Largest-needed chunk size that splits ``total`` rows into as few, equally sized chunks of ``<= max_chunk``.

    100 rows with at most 68 per pass become 2 x 50, not 68 + 32: the short tail pass would waste a call.
    """
    total, max_chunk = max(1, int(total)), max(1, int(max_chunk))
    n_chunks = -(-total // max_chunk)
    return -(-total // n_chunks)


def model_device(model: Any) -> torch.device:
    """The device of the model's first parameter (CPU for parameter-free models)."""
    for parameter in model.parameters():
        return parameter.device
    return torch.device("cpu")


@dataclass
class EncodedBatch:
    """A padded batch of sentences plus everything the built-ins need to move between tokens and words."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    token_type_ids: torch.Tensor | None
    word_ids: list[list[int | None]]
    reference_ids: torch.Tensor
    n_words: list[int]

    @property
    def lengths(self) -> list[int]:
        """Number of real (unpadded) tokens per sentence."""
        return [int(n) for n in self.attention_mask.sum(dim=1).tolist()]

    def forward_kwargs(self) -> dict[str, torch.Tensor]:
        """Keyword arguments besides the embeddings that the model's forward receives."""
        kwargs = {"attention_mask": self.attention_mask}
        if self.token_type_ids is not None:
            kwargs["token_type_ids"] = self.token_type_ids
        return kwargs

    def sentence(self, index: int) -> EncodedBatch:
        """Sentence ``index`` alone, cut to its own length (no padding)."""
        length = self.lengths[index]
        return EncodedBatch(
            input_ids=self.input_ids[index : index + 1, :length],
            attention_mask=self.attention_mask[index : index + 1, :length],
            token_type_ids=None if self.token_type_ids is None else self.token_type_ids[index : index + 1, :length],
            word_ids=[self.word_ids[index][:length]],
            reference_ids=self.reference_ids[index : index + 1, :length],
            n_words=[self.n_words[index]],
        )


def reference_token_ids(input_ids: torch.Tensor, attention_mask: torch.Tensor, tokenizer: Any) -> torch.Tensor:
    """``[CLS] [PAD]… [SEP]``: special tokens of the sentence kept, every other position set to ``[PAD]``."""
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        raise ValueError("the tokenizer has no pad token; the reference input [CLS] [PAD]… [SEP] needs one")
    special = torch.tensor(sorted(set(tokenizer.all_special_ids) - {pad_id}), dtype=input_ids.dtype)
    keep = torch.isin(input_ids, special.to(input_ids.device)) & attention_mask.bool()
    return torch.where(keep, input_ids, torch.full_like(input_ids, pad_id))


def encode_batch(
    tokenizer: Any, words: Sequence[Sequence[str]], device: torch.device, max_length: int = DEFAULT_MAX_LENGTH
) -> EncodedBatch:
    """Tokenize pre-split sentences (padded to the longest in the batch) with word ids and the reference input."""
    if getattr(tokenizer, "padding_side", "right") != "right":
        # sentence i's real tokens must be its first `length` positions
        raise ValueError(f"tokenizer.padding_side must be 'right' for the explainers, got {tokenizer.padding_side!r}")
    encoding, word_ids = tokenize_words(tokenizer, words, max_length=max_length, padding=True, return_tensors="pt")
    input_ids = encoding["input_ids"].to(device)
    attention_mask = encoding["attention_mask"].to(device)
    token_type_ids = encoding.get("token_type_ids")
    return EncodedBatch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        token_type_ids=None if token_type_ids is None else token_type_ids.to(device),
        word_ids=word_ids,
        reference_ids=reference_token_ids(input_ids, attention_mask, tokenizer),
        n_words=[len(w) for w in words],
    )


class EmbeddingForward(nn.Module):
    """``inputs_embeds -> logits`` view of a model, the function every gradient built-in differentiates.

    It is a module (not a closure) because Captum's DeepLift and Guided Backprop hook the model's modules.
    """

    def __init__(self, model: nn.Module, output: str = "logit") -> None:
        super().__init__()
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        self.model = model
        self.output = output

    def forward(
        self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        kwargs: dict[str, torch.Tensor] = {"inputs_embeds": inputs_embeds, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        logits = self.model(**kwargs).logits
        if self.output == "probability":
            return torch.softmax(logits, dim=-1)
        return logits


def embed(model: Any, input_ids: torch.Tensor) -> torch.Tensor:
    """The output of the model's word-embedding lookup (no position or token-type embeddings)."""
    return model.get_input_embeddings()(input_ids)


def forward_rows(
    forward: EmbeddingForward,
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    token_type_ids: torch.Tensor | None,
    rows_per_forward: int,
) -> torch.Tensor:
    """Model outputs (no gradient) for many rows of token ids, evaluated ``rows_per_forward`` rows at a time.

    Each chunk is cut to its longest unmasked row so short sentences do not pay for long ones' padding.
    """
    outputs = []
    with torch.inference_mode():
        for start in range(0, input_ids.shape[0], max(1, rows_per_forward)):
            stop = start + max(1, rows_per_forward)
            mask = attention_mask[start:stop]
            width = int(mask.sum(dim=1).max().item())
            types = None if token_type_ids is None else token_type_ids[start:stop, :width]
            outputs.append(forward(embed(model, input_ids[start:stop, :width]), mask[:, :width], types))
    return torch.cat(outputs, dim=0)


def fold_batch(token_scores: torch.Tensor, batch: EncodedBatch) -> list[np.ndarray]:
    """``(B, T, H)`` attributions → hidden dimension summed with sign → tokens folded to words (|.|, sum)."""
    from gecobench.words import fold_token_scores_to_words

    per_token = token_scores.detach().sum(dim=-1).to(torch.float64).cpu().numpy()
    out = []
    for i, length in enumerate(batch.lengths):
        out.append(fold_token_scores_to_words(per_token[i, :length], batch.word_ids[i][:length], batch.n_words[i]))
    return out

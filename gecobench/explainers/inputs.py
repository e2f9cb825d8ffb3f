"""Shared plumbing of the built-in explainers: encoding a batch, the reference input and the attribution point.

**Attribution point.** Gradient built-ins attribute at the output of the model's **embedding block**, as the
GECOBench authors do (``xai/methods.py``, ``get_captum_attributions``: Captum methods on
``model.base_model.embeddings``): for a BERT-family encoder that is after the word, position and token-type
embeddings are added and the embedding LayerNorm applied, so a token's attribution reflects its own embedding.
(At the word-embedding lookup, before that LayerNorm, Input×Gradient reduces to -(position + token-type
embedding)·gradient: LayerNorm ignores the scale of its input, and the word's own embedding drops out.) The block
is found generically (:func:`embedding_block`): ``model.embeddings``, else that of ``model.base_model`` (and of
its base model: a zero-shot wrapper's encoder); a model without one (the one-layer attention model) is explained
at its word-embedding output, ``model.get_input_embeddings()``. :class:`EmbeddingForward` computes the block's
output for token ids exactly as the model's own forward does (:meth:`EmbeddingForward.embed`) and runs the model
with the block's output *substituted* by the tensor being explained (a forward hook on the block), so the rest
of the model runs once, unchanged. ``attribution_point="word_embeddings"`` is the pre-2026-12 point.

**Precision.** ``precision="bfloat16"`` runs the model's matrix products in bfloat16 under ``torch.autocast``
(and what follows them inside a layer: GELU, the attention softmax; the residual stream and its LayerNorms, the
attribution point's output and the model's outputs stay float32):
about twice the matrix-product rate on CPUs with AVX-512 BF16 or AMX and on GPUs, for attributions that give the
same Mass Accuracy as float32's on the zoo's models (``BENCHMARKS.md``, "Mixed precision"). On CPU the
model's scaled-dot-product attention is switched to the eager implementation while it runs: torch's CPU flash
attention is slower in bfloat16 than in float32 when differentiated. ``float32`` (the default) runs the model
as it is.

The reference input is ``[CLS] [PAD] … [PAD] [SEP]`` of the same length as the sentence (special tokens kept,
every word token replaced by ``[PAD]``; the authors' ``create_bert_reference_tokens``), embedded through the same
block; positions that are batch padding stay ``[PAD]`` with attention mask 0, so they are invisible to the model
and contribute nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from gecobench.explainers.first_token import final_layer_at_first_token
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
    encoding, word_ids = tokenize_words(tokenizer, words, max_length=max_length, padding=True, return_tensors="pt",
                                        cache=True)
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


#: Where gradient built-ins attribute: the embedding block's output (default) or the word-embedding lookup's.
ATTRIBUTION_POINTS: tuple[str, ...] = ("embedding_block", "word_embeddings")
#: the precisions a built-in can run its model in (``precision`` parameter; see the module docstring)
PRECISIONS: tuple[str, ...] = ("float32", "bfloat16")
#: the autocast dtype of each precision below float32 (float32 runs the model as it is, without autocast)
AUTOCAST_DTYPES: dict[str, torch.dtype] = {"bfloat16": torch.bfloat16}


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else a ValueError naming them."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision


@contextmanager
def running_in(model: Any, precision: str) -> Iterator[None]:
    """Within the block, ``model``'s forward runs in ``precision`` (see the module docstring): nothing changes
    for ``float32``; for ``bfloat16``, ``torch.autocast`` on the model's device and, on CPU, eager attention in
    place of scaled-dot-product attention (restored after, error or not)."""
    dtype = AUTOCAST_DTYPES.get(check_precision(precision))
    if dtype is None:
        yield
        return
    device = model_device(model)
    config = getattr(model, "config", None)
    switch = device.type == "cpu" and getattr(config, "_attn_implementation", None) == "sdpa"
    if switch:
        config._attn_implementation = "eager"
    try:
        with torch.autocast(device.type, dtype=dtype):
            yield
    finally:
        if switch:
            config._attn_implementation = "sdpa"


def embedding_block(model: Any) -> nn.Module:
    """The module whose output gradient methods explain: the model's embedding block, else its word embeddings.

    The block is ``model.embeddings`` or, following ``base_model`` links (a classifier's encoder, a zero-shot
    wrapper's backbone and its encoder), the first ``embeddings`` module found; HF encoders (BERT, MiniLM,
    RoBERTa, …) have one. A model without one (the one-layer attention model) is explained at
    ``model.get_input_embeddings()``.
    """
    candidate, seen = model, set()
    while candidate is not None and id(candidate) not in seen:
        seen.add(id(candidate))
        block = getattr(candidate, "embeddings", None)
        if isinstance(block, nn.Module):
            return block
        candidate = getattr(candidate, "base_model", None)
    return model.get_input_embeddings()


class _BlockOutput(Exception):
    """Stops a forward pass right after the embedding block, carrying the block's output."""

    def __init__(self, output: torch.Tensor) -> None:
        super().__init__("embedding block output captured")
        self.output = output


class EmbeddingForward(nn.Module):
    """``attribution-point output -> model outputs`` view of a model, the function every gradient built-in
    differentiates (see the module docstring); ``from_ids`` runs the model on token ids (perturbation methods).

    It is a module (not a closure) because Captum's DeepLift and Guided Backprop hook the model's modules.
    """

    def __init__(self, model: nn.Module, output: str = "logit", attribution_point: str = "embedding_block",
                 precision: str = "float32") -> None:
        super().__init__()
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        if attribution_point not in ATTRIBUTION_POINTS:
            raise ValueError(f"attribution_point must be one of {', '.join(ATTRIBUTION_POINTS)}, got {attribution_point!r}")
        self.model = model
        self.output = output
        self.attribution_point = attribution_point
        self.precision = check_precision(precision)
        words = model.get_input_embeddings()
        # Not registered as submodules (plain attributes): the model already holds them.
        object.__setattr__(self, "_words", words)
        block = embedding_block(model) if attribution_point == "embedding_block" else words
        object.__setattr__(self, "_block", block)

    @property
    def substitutes_block(self) -> bool:
        """True when the point is an embedding block after the word lookup (its output is substituted by a hook)."""
        return self._block is not self._words

    def _sentence_positions(self, block_length: int, n_tokens: int, device: torch.device) -> torch.Tensor | None:
        """Where the sentence's tokens sit in the block's output (``None``: the same positions)."""
        if block_length == n_tokens:
            return None
        positions = getattr(self.model, "sentence_positions", None)
        if positions is None:
            raise ValueError(
                f"{type(self.model).__name__}'s embedding block returns {block_length} positions for {n_tokens} "
                "tokens; a model that inserts tokens must say where the sentence's are (sentence_positions(n))"
            )
        return positions(n_tokens).to(device)

    def embed(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The attribution point's output for token ids, as the model's own forward computes it (no gradient)."""
        if not self.substitutes_block:
            return self._words(input_ids)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)

        def capture(module: nn.Module, args: Any, output: torch.Tensor) -> None:
            raise _BlockOutput(output.detach())

        kwargs: dict[str, torch.Tensor] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        hook = self._block.register_forward_hook(capture)
        try:
            with torch.no_grad():
                self.model(**kwargs)
        except _BlockOutput as captured:
            output = captured.output
        else:
            raise RuntimeError(f"{type(self.model).__name__}'s forward never ran its embedding block")
        finally:
            hook.remove()
        positions = self._sentence_positions(output.shape[1], input_ids.shape[1], output.device)
        return output if positions is None else output[:, positions]

    def forward(
        self, inputs: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        kwargs: dict[str, torch.Tensor] = {"attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        if not self.substitutes_block:
            return self._run(inputs_embeds=inputs, **kwargs)
        # The word lookup's output is never read: the block's output is replaced by `inputs`. A zero placeholder
        # lets the model run its usual inputs_embeds path (masks, prompt insertion) at the cost of one addition.
        placeholder = torch.zeros(inputs.shape[:2] + (self._words.embedding_dim,), dtype=inputs.dtype, device=inputs.device)

        def substitute(module: nn.Module, args: Any, output: torch.Tensor) -> torch.Tensor:
            positions = self._sentence_positions(output.shape[1], inputs.shape[1], output.device)
            if positions is None:
                if output.shape != inputs.shape:
                    raise ValueError(f"attribution-point input of shape {tuple(inputs.shape)} for a block output of "
                                     f"shape {tuple(output.shape)}")
                return inputs
            return output.index_copy(1, positions, inputs.to(output.dtype))

        hook = self._block.register_forward_hook(substitute)
        try:
            return self._run(inputs_embeds=placeholder, **kwargs)
        finally:
            hook.remove()

    def from_ids(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Model outputs for token ids (the model embeds them itself; no attribution point involved)."""
        kwargs: dict[str, torch.Tensor] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        return self._run(**kwargs)

    def _run(self, **kwargs: torch.Tensor) -> torch.Tensor:
        # only the logits are read, so a BERT classifier's last layer need only compute its [CLS] position
        with running_in(self.model, self.precision), final_layer_at_first_token(self.model):
            logits = self.model(**kwargs).logits
        if self.precision in AUTOCAST_DTYPES:
            logits = logits.float()  # float32 out of a mixed-precision pass (a float64 model's stay float64)
        if self.output == "probability":
            return torch.softmax(logits, dim=-1)
        return logits


@contextmanager
def parameters_frozen(model: Any) -> Iterator[None]:
    """While the block runs, no parameter of ``model`` requires a gradient (restored after, error or not).

    Explanations differentiate with respect to the inputs only; parameters that require gradients make autograd
    keep and compute what their gradients would need, about 5 % of a backward pass on the zoo's MiniLM.
    """
    switched = [p for p in model.parameters() if p.requires_grad] if isinstance(model, nn.Module) else []
    for parameter in switched:
        parameter.requires_grad_(False)
    try:
        yield
    finally:
        for parameter in switched:
            parameter.requires_grad_(True)


def embed(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
    token_type_ids: torch.Tensor | None = None, attribution_point: str = "embedding_block",
) -> torch.Tensor:
    """The attribution point's output for token ids (:meth:`EmbeddingForward.embed`): the embedding block's by
    default, the word-embedding lookup's with ``attribution_point="word_embeddings"``."""
    return EmbeddingForward(model, attribution_point=attribution_point).embed(input_ids, attention_mask, token_type_ids)


def words_removed(
    batch: EncodedBatch, index: int, keep_words: torch.Tensor, pad_id: int, mask_id: int | None = None,
    collapse_masks: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Sentence ``index`` once per row of ``keep_words`` ``(R, n_words)``, the words a row zeroes *removed*.

    Every token of a removed word is dropped and the rest move up (special tokens always stay), so a row is
    the shorter sentence a reader would see, not the sentence with holes. With ``mask_id``, each run of
    consecutive removed words leaves one mask token in its place instead (``collapse_masks``, the default):
    the model still sees that something stood there, at the cost of one position per run. With
    ``collapse_masks=False`` every token of a removed word becomes a mask token and every other token keeps its
    position (what ``shap``'s text masker does for a tokenizer that has a mask token).
    Returns right-padded ``input_ids``, ``attention_mask`` and ``token_type_ids`` (or ``None``), each
    ``(R, length of the sentence)``.
    """
    length = batch.lengths[index]
    ids = batch.input_ids[index, :length]
    word_of_token = torch.tensor([-1 if w is None else w for w in batch.word_ids[index][:length]], device=ids.device)
    keep_words = keep_words.to(ids.device).bool()
    keep = torch.ones((keep_words.shape[0], length), dtype=torch.bool, device=ids.device)
    is_word = word_of_token >= 0
    keep[:, is_word] = keep_words[:, word_of_token[is_word]]
    shown, tokens = keep, ids[None, :].expand(keep.shape[0], -1)
    if mask_id is not None:
        removed = ~keep
        if collapse_masks:
            after_removed = torch.zeros_like(removed)
            after_removed[:, 1:] = removed[:, :-1]
            masked = removed & ~after_removed  # the first token of each run of removed tokens (= of removed words)
        else:
            masked = removed  # every removed token: the sentence keeps its length and positions
        shown = keep | masked
        tokens = torch.where(masked, torch.full_like(tokens, mask_id), tokens)
    # a stable sort of "dropped?" moves the shown tokens to the front in their original order
    order = torch.sort((~shown).to(torch.int8), dim=1, stable=True).indices
    attention = torch.arange(length, device=ids.device)[None, :] < shown.sum(dim=1, keepdim=True)
    rows = torch.where(attention, torch.gather(tokens, 1, order), torch.full_like(order, pad_id))
    types = None
    if batch.token_type_ids is not None:
        types = torch.where(attention, batch.token_type_ids[index, :length][order], torch.zeros_like(order))
    return rows, attention.to(batch.attention_mask.dtype), types


#: Per-token multiply-adds of the ``nn.Linear`` layers of the MiniLM-L6 classifier on which the token budget
#: (``DEFAULT_TOKENS_PER_FORWARD``) and ``CALL_COST_TOKENS`` were measured (10.77 M; the zero-shot model 10.62 M).
BUDGET_REFERENCE_LINEAR_MACS = 10_765_056
#: A smaller model gets a proportionally larger token budget, up to this factor: the authors' OLA (16.5 k
#: multiply-adds per token, 650× less) spent a fifth of Integrated Gradients' time on per-pass overhead at 1,024
#: positions per pass and none more at 8,192 than at 65,536 (BENCHMARKS.md, "Against ferret").
MAX_BUDGET_SCALE = 16


def token_budget_scale(model: Any) -> int:
    """How many times the default token budget a forward pass of ``model`` should hold: the reference MiniLM's
    per-token ``nn.Linear`` multiply-adds over ``model``'s, between 1 and :data:`MAX_BUDGET_SCALE` (1 for a model
    without ``nn.Linear`` layers, whose cost per token is unknown here). Never below 1: a larger model keeps the
    budget that fits its activations in cache on this machine."""
    modules = model.modules() if isinstance(model, nn.Module) else ()
    macs = sum(m.in_features * m.out_features for m in modules if isinstance(m, nn.Linear))
    if macs <= 0:
        return 1
    return int(min(MAX_BUDGET_SCALE, max(1, BUDGET_REFERENCE_LINEAR_MACS // macs)))


#: The fixed cost of one forward call (Python and framework overhead), counted in the token positions the
#: same time would compute: MiniLM on the 2-core CPU pays 8-12 ms per call at 2,900-5,100 positions/s, i.e.
#: 34-42 positions (bench/bench_forward_cost.py).
CALL_COST_TOKENS = 40


def pack_by_length(lengths: Sequence[int], tokens_per_forward: int, call_cost_tokens: float = CALL_COST_TOKENS) -> list[np.ndarray]:
    """Split rows into forward passes that waste the least: fewest padded positions plus per-call cost.

    Rows are sorted by length; a pass is a run of consecutive sorted rows, padded to its longest, holding at
    most ``tokens_per_forward`` positions (a lone longer row still gets its own pass). Dynamic programming over
    the sorted rows minimises ``sum(call_cost_tokens + rows * width)``. Returns the row indices of each pass.
    """
    lengths = np.maximum(np.asarray(lengths, dtype=np.int64), 1)
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    n = len(ordered)
    best = np.zeros(n + 1)
    cut = np.zeros(n + 1, dtype=np.int64)
    for stop in range(1, n + 1):
        width = ordered[stop - 1]
        most_rows = max(1, min(stop, tokens_per_forward // width))
        starts = np.arange(stop - most_rows, stop)
        costs = best[starts] + call_cost_tokens + (stop - starts) * width
        k = int(np.argmin(costs))
        best[stop], cut[stop] = costs[k], starts[k]
    passes, stop = [], n
    while stop > 0:
        passes.append(order[cut[stop] : stop])
        stop = int(cut[stop])
    return passes[::-1]


def forward_rows(
    forward: EmbeddingForward,
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    token_type_ids: torch.Tensor | None,
    rows_per_forward: int | None = None,
    tokens_per_forward: int = 1024,
) -> torch.Tensor:
    """Model outputs (no gradient) for many right-padded rows of token ids, in the rows' order.

    With ``rows_per_forward`` the rows go in that many at a time, in order (Captum's ``perturbations_per_eval``).
    Without, rows of similar length share a pass of at most ``tokens_per_forward`` positions
    (:func:`pack_by_length`); every pass is cut to its longest row.
    """
    lengths = attention_mask.sum(dim=1)
    if rows_per_forward is None:
        passes = pack_by_length(lengths.tolist(), tokens_per_forward)
        chunks = [torch.as_tensor(rows, device=input_ids.device) for rows in passes]
    else:
        chunks = list(torch.arange(input_ids.shape[0], device=input_ids.device).split(max(1, rows_per_forward)))
    outputs: list[torch.Tensor | None] = [None] * len(chunks)
    with torch.inference_mode():
        for k, rows in enumerate(chunks):
            width = max(1, int(lengths[rows].max()))
            types = None if token_type_ids is None else token_type_ids[rows, :width]
            outputs[k] = forward.from_ids(input_ids[rows, :width], attention_mask[rows, :width], types)
    result = torch.empty((input_ids.shape[0], outputs[0].shape[1]), dtype=outputs[0].dtype, device=outputs[0].device)
    for rows, out in zip(chunks, outputs):
        result[rows] = out
    return result


def outputs_without_words(
    forward: EmbeddingForward,
    model: Any,
    batch: EncodedBatch,
    keep_words: Sequence[tuple[int, np.ndarray]],
    pad_id: int,
    rows_per_forward: int | None = None,
    tokens_per_forward: int = 1024,
    deduplicate: bool = True,
    mask_id: int | None = None,
    collapse_masks: bool = True,
) -> list[np.ndarray]:
    """Model outputs for ``(sentence index, (R, n_words) 0/1 keep-matrix)`` pairs, words marked 0 removed
    (with ``mask_id``: each run of them replaced by one mask token, or with ``collapse_masks=False`` each of
    their tokens: :func:`words_removed`).

    All rows of all pairs are evaluated together (see :func:`forward_rows`). With ``deduplicate`` a row drawn
    several times for a sentence is evaluated once: sampling-based explainers repeat rows often (Kernel SHAP's
    kernel favours removing one word or all but one) and a deterministic model gives equal rows equal outputs.
    Returns one ``(R, n_classes)`` float64 array per pair.
    """
    rows, masks, types, copies, counts = [], [], [], [], []
    for index, keep in keep_words:
        keep = np.asarray(keep)
        if deduplicate:
            distinct, copy_of = np.unique(keep, axis=0, return_inverse=True)
        else:
            distinct, copy_of = keep, np.arange(len(keep))
        ids, attention, type_ids = words_removed(batch, index, torch.as_tensor(distinct), pad_id, mask_id, collapse_masks)
        rows.append(ids)
        masks.append(attention)
        types.append(type_ids)
        copies.append(np.asarray(copy_of).reshape(-1))
        counts.append(len(distinct))
    width = max(r.shape[1] for r in rows)
    pad = lambda t, value: torch.nn.functional.pad(t, (0, width - t.shape[1]), value=value)
    input_ids = torch.cat([pad(r, pad_id) for r in rows])
    attention_mask = torch.cat([pad(m, 0) for m in masks])
    token_type_ids = None if types[0] is None else torch.cat([pad(t, 0) for t in types])
    distinct_outputs = forward_rows(
        forward, model, input_ids, attention_mask, token_type_ids, rows_per_forward, tokens_per_forward
    ).to(torch.float64).cpu().numpy()
    starts = np.concatenate([[0], np.cumsum(counts)])
    return [distinct_outputs[starts[k] : starts[k + 1]][copies[k]] for k in range(len(keep_words))]


def fold_batch(token_scores: torch.Tensor, batch: EncodedBatch) -> list[np.ndarray]:
    """``(B, T, H)`` attributions → hidden dimension summed with sign → tokens folded to words (|.|, sum)."""
    from gecobench.words import fold_token_scores_to_words

    per_token = token_scores.detach().sum(dim=-1).to(torch.float64).cpu().numpy()
    out = []
    for i, length in enumerate(batch.lengths):
        out.append(fold_token_scores_to_words(per_token[i, :length], batch.word_ids[i][:length], batch.n_words[i]))
    return out

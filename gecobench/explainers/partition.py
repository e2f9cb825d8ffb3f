"""Partition SHAP: exact Owen values over a balanced binary hierarchy of the sentence's words.

The words of a sentence are split in two halves, each half in two again, down to single words (a balanced
binary partition of the word sequence, as ``shap``'s Partition explainer uses a hierarchy of the text's tokens).
The Owen value of a word (Owen, 1977) averages its marginal contribution ``f(C + word) - f(C)`` over the
orderings of all words in which every group of the hierarchy stays together. For a binary hierarchy that is the
average, over the ``2^depth`` ways of putting each sibling group on the word's path from the root before or after
it, of the contribution with the groups put before it present::

    owen(word) = 2^-depth * sum over b in {0,1}^depth of  f(C_b + word) - f(C_b),   C_b = union of siblings k with b_k = 1

Sibling groups either all present or all absent is what makes this cheap: a sentence of ``n`` words needs about
``2 n^2 / 3`` model outputs (a balanced tree of depth ``log2 n``), not the ``2^n`` of exact Shapley values, and
no sampling (the values are exact and deterministic). The values add up to ``f(sentence) - f(no word)``.

A model output for a coalition is the output on the sentence with each run of absent words replaced by one
``[MASK]`` token (``removal="mask"``, the default since 2.0.0, as ``shap``'s text masker does), so "no word" is
``[CLS] [MASK] [SEP]``; ``removal="delete"`` drops them instead (1.0.0, the shared perturbation protocol of LIME
and Kernel SHAP; "no word" is ``[CLS] [SEP]``). On the reference CEfAf model the mask reached ferret's MA where
deletion stayed 0.02 below it (BENCHMARKS.md, "Partition SHAP: masked runs"). All coalitions of all
sentences in a batch are evaluated together, packed by length into forward passes of about the token budget.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from gecobench.explainers.base import register_explainer
from gecobench.explainers.builtin import BuiltinExplainer, word_first_tokens
from gecobench.explainers.inputs import (
    EmbeddingForward,
    encode_batch,
    model_device,
    outputs_without_words,
)

#: The protocol's ``perturbation`` entry for ``removal="mask"`` (``"delete"`` keeps the shared one of LIME and
#: Kernel SHAP).
MASKED_PERTURBATION = ("whole words removed, each run of consecutive removed words replaced by one mask token of "
                       "the tokenizer (special tokens kept)")

#: A node of the hierarchy: the half-open range ``[start, stop)`` of player indices it groups.
Node = tuple[int, int]


def split_node(node: Node) -> tuple[Node, Node]:
    """The two children of a group of two or more players: its first ``ceil(size/2)`` players, then the rest."""
    start, stop = node
    if stop - start < 2:
        raise ValueError(f"a group of {stop - start} player(s) {node} has no children")
    middle = start + (stop - start + 1) // 2
    return (start, middle), (middle, stop)


def balanced_partition(n_players: int) -> list[Node]:
    """Every group of the balanced binary hierarchy over ``n_players`` players, root first (pre-order)."""
    if n_players < 1:
        raise ValueError(f"need at least one player, got {n_players}")
    nodes, stack = [], [(0, n_players)]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if node[1] - node[0] > 1:
            left, right = split_node(node)
            stack.extend([right, left])
    return nodes


@functools.lru_cache(maxsize=256)
def owen_design(n_players: int) -> tuple[np.ndarray, np.ndarray]:
    """The coalitions the Owen values of ``n_players`` players need, and how to combine their outputs.

    Returns ``(coalitions, weights)``: a ``(K, n_players)`` 0/1 matrix of the coalitions (row 0 all present, row 1
    all absent) and an ``(n_players, K)`` matrix with ``owen_values = weights @ f(coalitions)`` for any set
    function ``f``. The design depends only on the number of players, so it is computed once per sentence length.
    """
    if n_players < 1:
        raise ValueError(f"need at least one player, got {n_players}")
    full = (1 << n_players) - 1
    index: dict[int, int] = {full: 0, 0: 1}
    terms: list[tuple[int, int, float]] = []  # (player, coalition index, weight)

    def column(coalition: int) -> int:
        return index.setdefault(coalition, len(index))

    # Each entry is (group, coalition of the players outside the group that are present, probability weight);
    # a group's two children each see the other child absent or present, with probability 1/2 each.
    stack: list[tuple[Node, int, float]] = [((0, n_players), 0, 1.0)]
    while stack:
        (start, stop), context, weight = stack.pop()
        if stop - start == 1:
            terms.append((start, column(context | (1 << start)), weight))
            terms.append((start, column(context), -weight))
            continue
        left, right = split_node((start, stop))
        left_bits = ((1 << (left[1] - left[0])) - 1) << left[0]
        right_bits = ((1 << (right[1] - right[0])) - 1) << right[0]
        half = weight / 2
        stack.extend([(left, context, half), (left, context | right_bits, half),
                      (right, context, half), (right, context | left_bits, half)])
    coalitions = np.zeros((len(index), n_players), dtype=np.int64)
    for bits, row in index.items():
        coalitions[row] = [(bits >> player) & 1 for player in range(n_players)]
    weights = np.zeros((n_players, len(index)))
    for player, row, weight in terms:
        weights[player, row] += weight
    coalitions.setflags(write=False)
    weights.setflags(write=False)
    return coalitions, weights


def owen_values(n_players: int, outputs: np.ndarray) -> np.ndarray:
    """Owen values from the outputs of :func:`owen_design`'s coalitions (``(K,)``, or ``(K, classes)``)."""
    coalitions, weights = owen_design(n_players)
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.shape[0] != coalitions.shape[0]:
        raise ValueError(f"{n_players} players need outputs for {coalitions.shape[0]} coalitions, got {outputs.shape[0]}")
    return weights @ outputs


@register_explainer
class PartitionShapExplainer(BuiltinExplainer):
    """Partition SHAP: exact Owen values of the words over a balanced binary hierarchy, ``|Owen value|`` per word.

    Deterministic (no sampling). Words lost to truncation are not players and score 0. ``output`` is the model
    output explained: the target ``"logit"`` (default) or its softmax ``"probability"``. ``removal``: how an
    absent word leaves the sentence — ``"mask"`` (default: each run of absent words becomes one mask token of
    the tokenizer) or ``"delete"`` (its tokens dropped, as LIME and Kernel SHAP do; version 1.0.0).
    """

    name = "partition_shap"
    version = "2.0.0"  # 2.0.0: absent words masked (one mask token per run); 1.0.0: deleted
    description = ("Partition SHAP: exact Owen values over a balanced binary word hierarchy (each run of absent "
                   "words one [MASK]); |value| per word.")
    protocol_keys = ("perturbation", "target", "max_length")
    REMOVALS = ("mask", "delete")

    def __init__(self, output: str = "logit", removal: str = "mask", perturbations_per_eval: int | None = None,
                 **kwargs: Any) -> None:
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        if removal not in self.REMOVALS:
            raise ValueError(f"removal must be one of {', '.join(self.REMOVALS)}, got {removal!r}")
        if perturbations_per_eval is not None and int(perturbations_per_eval) < 1:
            raise ValueError(f"perturbations_per_eval must be >= 1, got {perturbations_per_eval}")
        super().__init__(output=output, removal=removal, hierarchy="balanced binary partition of the word sequence",
                         **kwargs)
        # Speed knob only: None packs the coalitions of every sentence by length into passes of the token budget;
        # N evaluates each sentence's coalitions N at a time, in order (the unbatched reference with N = 1).
        self.perturbations_per_eval = None if perturbations_per_eval is None else int(perturbations_per_eval)
        # Coalition outputs kept for reuse, only inside `outputs_reused` (None outside it).
        self._reused_outputs: dict[tuple[int, int, tuple[str, ...]], np.ndarray] | None = None

    @contextmanager
    def outputs_reused(self) -> Iterator[None]:
        """Inside the block, a sentence explained again on the same model and tokenizer (for another target: the
        label-difference pass) reuses its coalition outputs instead of running the model again.

        Owen values are linear in the outputs, and the outputs carry every class, so the scores are exactly those
        of a fresh run. The outputs are keyed by the model's and tokenizer's identity: the caller keeps both alive
        and unchanged for the block, as the evaluation runner does for one chunk. Nested blocks share one store.
        """
        outer = self._reused_outputs
        if outer is None:
            self._reused_outputs = {}
        try:
            yield
        finally:
            if outer is None:
                self._reused_outputs = None

    def protocol(self) -> dict[str, Any]:
        out = super().protocol()
        if self._params["removal"] == "mask":
            out["perturbation"] = MASKED_PERTURBATION
        return out

    @property
    def rows_per_sentence(self) -> int:
        # As for LIME: the coalitions of all sentences in a batch are packed by length together.
        return 1

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        mask_id = None
        if self._params["removal"] == "mask":
            mask_id = getattr(tokenizer, "mask_token_id", None)
            if mask_id is None:
                raise ValueError(f"partition_shap with removal='mask' needs a tokenizer with a mask token; "
                                 f"{type(tokenizer).__name__} has none: use removal='delete'")
        batch = encode_batch(tokenizer, words, model_device(model))
        present = [word_first_tokens(batch.word_ids[i], batch.n_words[i]) >= 0 for i in range(len(words))]
        store = self._reused_outputs
        keys = [(id(model), id(tokenizer), tuple(sentence)) for sentence in words]
        known = {i: store[key] for i, key in enumerate(keys) if store is not None and key in store}
        keep_matrices = []
        for i in range(len(words)):
            if i in known:
                continue
            coalitions, _ = owen_design(int(present[i].sum()))
            keep = np.ones((coalitions.shape[0], batch.n_words[i]), dtype=np.int64)
            keep[:, present[i]] = coalitions
            keep_matrices.append((i, keep))
        forward = EmbeddingForward(model, self._params["output"])
        if not keep_matrices:
            computed = []
        elif self.perturbations_per_eval is None:
            computed = outputs_without_words(forward, model, batch, keep_matrices, tokenizer.pad_token_id,
                                             tokens_per_forward=self.tokens_per_forward, deduplicate=False,
                                             mask_id=mask_id)
        else:
            computed = [outputs_without_words(forward, model, batch, [pair], tokenizer.pad_token_id,
                                              rows_per_forward=self.perturbations_per_eval, deduplicate=False,
                                              mask_id=mask_id)[0]
                        for pair in keep_matrices]
        outputs = dict(known)
        for (i, _), output in zip(keep_matrices, computed):
            outputs[i] = output
            if store is not None:
                store[keys[i]] = output
        scores = []
        for i in range(len(words)):
            output = outputs[i]
            word_scores = np.zeros(batch.n_words[i])
            word_scores[present[i]] = np.abs(owen_values(int(present[i].sum()), output[:, int(targets[i])]))
            scores.append(word_scores)
        return scores

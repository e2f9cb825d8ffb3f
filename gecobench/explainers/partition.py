"""Partition SHAP: Owen values over a balanced binary hierarchy of the sentence's words, exact or within a budget.

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

**An accuracy target** (``coalitions_per_word=adaptive``): the same priority expansion as the budget below, but
each sentence stops once the groups not yet expanded hold at most ``tolerance`` (0.05) of the explained amount,
so a sentence whose output is carried by a few words stops early and one with many contributing words is
expanded further (on the reference CE model: MA 0.66 at 2.3× the default's time; BENCHMARKS.md). **The default
spends a budget** (``coalitions_per_word=4``, since version 3.0.0): 4 model outputs per word, not
the exact design's ``~2 n^2 / 3``. The hierarchy is expanded from the root, always where the model's output moves
most (``shap``'s Partition explainer expands by the same kind of priority, under its ``max_evals``). A group
``G`` seen in context ``C`` with weight ``w`` holds ``w * (f(C + G) - f(C))`` of the Owen values; expanding it costs
the two outputs ``f(C + left half)`` and ``f(C + right half)`` and yields its four (child, context) pairs, each
with weight ``w / 2``. The pairs of single words are the exact terms above. When the budget is spent, every group
not expanded shares its amount equally among its words. So the values still add up to
``f(sentence) - f(no word)``, every pair keeps its exact amount, and only the split inside low-priority groups is
approximated; a budget at least the exact design's size gives the exact values in one round. The priority of a
pair is ``w * sum over classes |f(C + G) - f(C)|`` (class-agnostic, so the label-difference pass reuses the same
outputs). Expansion runs in rounds of ``max(1, n // 4)`` groups per sentence; all sentences of a batch share each
round's forward passes. Per sentence the explainer reports ``n_coalitions`` (model outputs used) and
``spread_share`` (the share of the explained amount, ``sum |w * (f(C + G) - f(C))|``, that was split equally
rather than resolved to single words: 0 for exact values). On the reference CEfAf model and 64 ``binary_all`` test
sentences (18.4 words on average), 4 outputs per word reach MA 0.921 with 81 outputs per sentence where the exact
values (310 outputs) reach 0.910; 3 per word fall to 0.885 (BENCHMARKS.md, "Partition SHAP on a budget").

**Another hierarchy** (``hierarchy="text"``): groups that follow the sentence's punctuation instead of its halves
(:func:`text_hierarchy`); every rule above holds for any binary hierarchy of contiguous groups (:class:`Hierarchy`).

A model output for a coalition is the output on the sentence with each run of absent words replaced by one
``[MASK]`` token (``removal="mask"``, the default since 2.0.0), so "no word" is ``[CLS] [MASK] [SEP]``;
``removal="mask_tokens"`` replaces *every token* of an absent word by ``[MASK]``, so the sentence keeps its length
and every word its position — what ``shap``'s text masker (and so ferret's Partition SHAP) does for a tokenizer
that has a mask token (it collapses runs only for tokenizers without one); ``removal="delete"`` drops the absent
words' tokens (1.0.0, the shared perturbation protocol of LIME and Kernel SHAP; "no word" is ``[CLS] [SEP]``). On
a freshly trained CEfAf, ``mask_tokens`` reaches ferret's MA (0.935 against 0.937) where the collapsed mask stays
0.018 below it (BENCHMARKS.md, "Partition SHAP: ferret's masking closes the gap"). All coalitions of all
sentences in a batch are evaluated together, packed by length into forward passes of about the token budget.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from gecobench.explainers.base import register_explainer
from gecobench.explainers.builtin import (
    MASKED_TOKENS_PERTURBATION,
    BuiltinExplainer,
    mask_removal_options,
    word_first_tokens,
)
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

#: ``coalitions_per_word`` of the accuracy-target mode: expand each sentence until its remaining share <= tolerance
ADAPTIVE = "adaptive"
#: that mode's default tolerance (the share of the explained amount still held by unexpanded groups)
ADAPTIVE_TOLERANCE = 0.05

#: A node of the hierarchy: the half-open range ``[start, stop)`` of player indices it groups.
Node = tuple[int, int]


def split_node(node: Node, hierarchy: Hierarchy | None = None) -> tuple[Node, Node]:
    """The two children of a group of two or more players: where ``hierarchy`` splits it, or (``None``, the
    balanced hierarchy) its first ``ceil(size/2)`` players, then the rest."""
    start, stop = node
    if stop - start < 2:
        raise ValueError(f"a group of {stop - start} player(s) {node} has no children")
    middle = start + (stop - start + 1) // 2 if hierarchy is None else hierarchy.middle(node)
    return (start, middle), (middle, stop)


@dataclass(frozen=True)
class Hierarchy:
    """A binary hierarchy of contiguous groups of players: where each group of two or more players splits.

    ``splits`` holds ``(start, stop, middle)`` for every such group ``[start, stop)``: its children are
    ``[start, middle)`` and ``[middle, stop)``. Frozen and hashable, so a design computed for one hierarchy is
    cached for every sentence that has it. Build one with :meth:`balanced` or :func:`text_hierarchy`."""

    n_players: int
    splits: tuple[tuple[int, int, int], ...]

    def __post_init__(self) -> None:
        if self.n_players < 1:
            raise ValueError(f"need at least one player, got {self.n_players}")
        middles = {(start, stop): middle for start, stop, middle in self.splits}
        # every group reached from the root splits inside itself, down to single players, and nothing else is listed
        reached, stack = 0, [(0, self.n_players)]
        while stack:
            start, stop = stack.pop()
            if stop - start == 1:
                continue
            middle = middles.get((start, stop))
            if middle is None or not start < middle < stop:
                raise ValueError(f"hierarchy of {self.n_players} players: group [{start}, {stop}) has no split "
                                 f"inside it ({middle})")
            reached += 1
            stack.extend([(start, middle), (middle, stop)])
        if reached != len(self.splits):
            raise ValueError(f"hierarchy of {self.n_players} players lists {len(self.splits)} splits, "
                             f"{len(self.splits) - reached} of groups outside it")
        object.__setattr__(self, "_middles", middles)

    @classmethod
    def balanced(cls, n_players: int) -> Hierarchy:
        """The balanced hierarchy (each group's first ``ceil(size/2)`` players, then the rest)."""
        return _balanced_hierarchy(n_players)

    def middle(self, node: Node) -> int:
        """Where group ``node`` (two or more players) splits."""
        try:
            return self._middles[node]  # type: ignore[attr-defined]
        except KeyError:
            raise ValueError(f"{node} is not a group of this hierarchy") from None

    def nodes(self) -> list[Node]:
        """Every group, root first (pre-order)."""
        nodes, stack = [], [(0, self.n_players)]
        while stack:
            node = stack.pop()
            nodes.append(node)
            if node[1] - node[0] > 1:
                left, right = split_node(node, self)
                stack.extend([right, left])
        return nodes


@functools.lru_cache(maxsize=256)
def _balanced_hierarchy(n_players: int) -> Hierarchy:
    splits, stack = [], [(0, n_players)]
    while stack:
        start, stop = stack.pop()
        if stop - start > 1:
            (_, middle), right = split_node((start, stop))
            splits.append((start, stop, middle))
            stack.extend([(start, middle), right])
    return Hierarchy(n_players, tuple(splits))


#: words that end a sentence or a clause, and the words that join clauses: groups across them join late
SENTENCE_ENDS = frozenset({".", "?", "!"})
CLAUSE_BREAKS = frozenset({",", ";", ":", "—", "–"})
CONNECTIVES = frozenset({"and", "but", "or"})
BRACKETS = {"(": ")", "[": "]"}


def _open_bracket(group: Sequence[str]) -> bool:
    """Whether the group starts with a bracket it does not close."""
    return group[0] in BRACKETS and BRACKETS[group[0]] not in group[1:]


def _unopened_bracket(group: Sequence[str]) -> bool:
    """Whether the group ends with a closing bracket it does not open."""
    openers = {close: opener for opener, close in BRACKETS.items()}
    return group[-1] in openers and openers[group[-1]] not in group[:-1]


def _join_cost(left: Sequence[str], right: Sequence[str]) -> float:
    """What joining two adjacent groups of words costs (the cheapest join is made first): their size, so that
    small groups pair up before large ones, plus the boundary's punctuation. Across a sentence end, a clause
    break or a connective a join comes late; a lone mark joins the group before it early (it belongs to it); a
    bracket is closed inside its group before the group meets what stands outside the brackets."""
    cost = float(len(left) + len(right))
    last, first = left[-1], right[0]
    for marks, penalty in ((SENTENCE_ENDS, 20.0), (CLAUSE_BREAKS, 10.0)):
        if last in marks:
            cost += penalty
        if first in marks:
            cost += penalty if len(right) > 1 else 1.0
    if last.lower() in CONNECTIVES or first.lower() in CONNECTIVES:
        cost += 2.0
    if _open_bracket(right) or _unopened_bracket(left):
        cost += 100.0
    return cost


def text_hierarchy(words: Sequence[str]) -> Hierarchy:
    """A hierarchy that follows the sentence's punctuation: adjacent groups of words are joined bottom-up,
    cheapest join first (:func:`_join_cost`; the leftmost of equal costs), until one group remains.

    The idea is ``shap``'s text masker's (``shap.maskers.Text``, whose clustering groups tokens by such a
    heuristic: sub-words first, across commas and sentence ends last), which ferret's Partition SHAP uses; here on
    whole words (the players), with this module's own costs. Without punctuation it pairs neighbours from the left:
    a balanced hierarchy built bottom-up."""
    if not words:
        raise ValueError("need at least one word")
    groups = [(k, k + 1) for k in range(len(words))]
    splits = []
    while len(groups) > 1:
        costs = [_join_cost(words[a[0]:a[1]], words[b[0]:b[1]]) for a, b in zip(groups, groups[1:])]
        k = int(np.argmin(costs))
        (start, middle), (_, stop) = groups[k], groups[k + 1]
        splits.append((start, stop, middle))
        groups[k:k + 2] = [(start, stop)]
    return Hierarchy(len(words), tuple(splits))


#: the hierarchies :class:`PartitionShapExplainer` can use (its ``hierarchy`` parameter)
HIERARCHIES = ("balanced", "text")
#: how a record's parameters name the balanced hierarchy (the default, recorded so since version 1.0.0)
BALANCED_DESCRIPTION = "balanced binary partition of the word sequence"


def balanced_partition(n_players: int) -> list[Node]:
    """Every group of the balanced binary hierarchy over ``n_players`` players, root first (pre-order)."""
    if n_players < 1:
        raise ValueError(f"need at least one player, got {n_players}")
    return Hierarchy.balanced(n_players).nodes()


@functools.lru_cache(maxsize=256)
def owen_design(n_players: int, hierarchy: Hierarchy | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The coalitions the Owen values of ``n_players`` players need, and how to combine their outputs.

    Returns ``(coalitions, weights)``: a ``(K, n_players)`` 0/1 matrix of the coalitions (row 0 all present, row 1
    all absent) and an ``(n_players, K)`` matrix with ``owen_values = weights @ f(coalitions)`` for any set
    function ``f``. The design depends only on the hierarchy (default: the balanced one of ``n_players``), so it is
    computed once per sentence length, or once per hierarchy.
    """
    if n_players < 1:
        raise ValueError(f"need at least one player, got {n_players}")
    if hierarchy is not None and hierarchy.n_players != n_players:
        raise ValueError(f"a hierarchy of {hierarchy.n_players} players for {n_players} players")
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
        left, right = split_node((start, stop), hierarchy)
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


def group_bits(node: Node) -> int:
    """The players of a group as a bit mask (player ``k`` is bit ``k``)."""
    start, stop = node
    return ((1 << (stop - start)) - 1) << start


def coalition_matrix(coalitions: Sequence[int], n_players: int) -> np.ndarray:
    """``(len(coalitions), n_players)`` 0/1 rows of bit-mask coalitions (Python integers: any number of players)."""
    return np.array([[(bits >> player) & 1 for player in range(n_players)] for bits in coalitions],
                    dtype=np.int64).reshape(len(coalitions), n_players)


def _coarse(priority: float) -> float:
    # Four significant digits: outputs of one coalition differ by rounding between batch layouts (padding, packing)
    # and that must not reorder two groups of nearly equal priority; equal coarse priorities keep insertion order.
    return float(f"{priority:.3e}")


@functools.lru_cache(maxsize=256)
def _design_bits(n_players: int, hierarchy: Hierarchy | None = None) -> tuple[int, ...]:
    """:func:`owen_design`'s coalitions as bit masks, in its order (computed once per hierarchy, like the design)."""
    return tuple(int(sum(int(b) << k for k, b in enumerate(row))) for row in owen_design(n_players, hierarchy)[0])


class OwenExpansion:
    """Owen values of one sentence's players, computed in rounds of model outputs: exact, or within a budget.

    Drive it with :meth:`request` (the coalitions, as bit masks, whose outputs the next round needs; empty when
    done) and :meth:`receive` (their outputs, ``(len(request), n_classes)``, in that order). Then
    :meth:`values` gives the values for any class. ``max_outputs=None``, or a budget at least the exact design's
    size, evaluates :func:`owen_design` in one round (exact values); a smaller budget expands the hierarchy by
    priority as the module docstring describes. The order of expansion depends only on this sentence's outputs,
    so it does not depend on which other sentences share the forward passes.
    """

    def __init__(self, n_players: int, max_outputs: int | None = None, tolerance: float | None = None,
                 hierarchy: Hierarchy | None = None) -> None:
        if n_players < 1:
            raise ValueError(f"need at least one player, got {n_players}")
        if hierarchy is not None and hierarchy.n_players != n_players:
            raise ValueError(f"a hierarchy of {hierarchy.n_players} players for {n_players} players")
        if max_outputs is not None and max_outputs < 2:
            raise ValueError(f"a budget needs at least the 2 outputs of everyone and no one, got {max_outputs}")
        if tolerance is not None and not 0 <= float(tolerance) < 1:
            raise ValueError(f"tolerance must be a share of the explained amount in [0, 1), got {tolerance}")
        self.n_players = n_players
        #: the groups' hierarchy (None: the balanced one)
        self.hierarchy = hierarchy
        exact_size = owen_design(n_players, hierarchy)[0].shape[0]
        # With a tolerance the hierarchy is expanded by priority even when the budget would allow the exact design:
        # expanding stops once the unresolved share is small enough (the full expansion is the exact design).
        self.tolerance = None if tolerance is None else float(tolerance)
        self.exact = self.tolerance is None and (max_outputs is None or max_outputs >= exact_size)
        self.max_outputs = exact_size if max_outputs is None else min(int(max_outputs), exact_size)
        # the class-agnostic amount (weight * sum over classes |f(C + G) - f(C)|) of the single-word terms resolved;
        # the stop rule's remaining share is queued / (queued + resolved), the queued amount summed from the queue
        self._resolved_mass = 0.0
        self.expansions_per_round = max(1, n_players // 4)
        self._index: dict[int, int] = {}  # coalition bits -> row of the outputs
        self._outputs: list[np.ndarray] = []
        self._requested: list[int] = []
        self._expanding: list[tuple[Node, int, float]] = []
        # (-coarse priority, insertion order, group, context bits, weight, mass): heapq pops the highest priority
        # first (the insertion order breaks ties, so the mass is never compared)
        self._queue: list[tuple[float, int, Node, int, float, float]] = []
        self._inserted = 0
        # (start, stop, row with the group, row without it, weight, split equally?)
        self._terms: list[tuple[int, int, int, int, float, bool]] = []
        self._started = False
        self.done = False

    @property
    def n_outputs(self) -> int:
        """Model outputs received so far."""
        return len(self._outputs)

    def remaining_share(self) -> float:
        """The share of the explained amount (class-agnostic: summed over classes) still held by groups not
        expanded to single words: the Owen expansion's remaining mass, 0 when every pair is resolved.
        0 too when no pair seen so far moves the output (no amount to resolve: a sentence whose words do not move
        the model stops at once)."""
        if not self._queue:
            return 0.0
        queued = sum(item[-1] for item in self._queue)
        total = queued + self._resolved_mass
        return queued / total if total > 0 else 0.0

    def request(self) -> list[int]:
        """The coalitions (bit masks, each new) whose outputs the next round needs; ``[]`` once the values are known."""
        if self._requested:
            raise RuntimeError("the outputs of the previous request have not been received")
        if self.done:
            return []
        if not self._started:
            self._started = True
            if self.exact:
                self._requested = list(_design_bits(self.n_players, self.hierarchy))
            else:
                self._requested = [group_bits((0, self.n_players)), 0]
            return list(self._requested)
        while True:
            if self.tolerance is not None and self.remaining_share() <= self.tolerance:
                self._finish()
                return []
            chosen: list[tuple[Node, int, float]] = []
            new: list[int] = []
            while self._queue and len(chosen) < self.expansions_per_round:
                _, _, node, context, weight, _ = self._queue[0]
                left, right = split_node(node, self.hierarchy)
                needed = []
                for bits in (context | group_bits(left), context | group_bits(right)):
                    if bits not in self._index and bits not in new and bits not in needed:
                        needed.append(bits)
                if len(self._index) + len(new) + len(needed) > self.max_outputs:
                    break
                heapq.heappop(self._queue)
                chosen.append((node, context, weight))
                new.extend(needed)
            if not chosen:
                self._finish()
                return []
            if new:
                self._expanding, self._requested = chosen, new
                return list(new)
            for item in chosen:  # every output they need is known already
                self._expand(*item)

    def receive(self, outputs: np.ndarray) -> None:
        """The outputs of the coalitions of the last :meth:`request`, in its order."""
        outputs = np.asarray(outputs, dtype=np.float64)
        if outputs.ndim == 1:
            outputs = outputs[:, None]
        if outputs.shape[0] != len(self._requested):
            raise ValueError(f"expected outputs for {len(self._requested)} coalitions, got {outputs.shape[0]}")
        for bits, output in zip(self._requested, outputs):
            self._index[bits] = len(self._outputs)
            self._outputs.append(output)
        self._requested = []
        if self.exact:
            self.done = True
            return
        if len(self._outputs) == 2 and not self._expanding:  # everyone and no one: the root
            self._add((0, self.n_players), 0, 1.0)
        expanding, self._expanding = self._expanding, []
        for item in expanding:
            self._expand(*item)

    def _add(self, node: Node, context: int, weight: float) -> None:
        start, stop = node
        change = self._outputs[self._index[context | group_bits(node)]] - self._outputs[self._index[context]]
        mass = weight * float(np.abs(change).sum())
        if stop - start == 1:
            self._terms.append((start, stop, self._index[context | group_bits(node)], self._index[context], weight,
                                False))
            self._resolved_mass += mass
            return
        heapq.heappush(self._queue, (-_coarse(mass), self._inserted, node, context, weight, mass))
        self._inserted += 1

    def _expand(self, node: Node, context: int, weight: float) -> None:
        left, right = split_node(node, self.hierarchy)
        half = weight / 2
        self._add(left, context, half)
        self._add(left, context | group_bits(right), half)
        self._add(right, context, half)
        self._add(right, context | group_bits(left), half)

    def _finish(self) -> None:
        # the budget is spent: each group left shares its amount equally among its players
        for _, _, node, context, weight, _ in sorted(self._queue, key=lambda item: item[1]):
            self._terms.append((node[0], node[1], self._index[context | group_bits(node)], self._index[context],
                                weight, True))
        self._queue = []
        self.done = True

    def values(self, target: int) -> tuple[np.ndarray, float]:
        """The Owen values for class ``target`` and the share of the explained amount split equally in groups."""
        if not self.done:
            raise RuntimeError("the expansion has not finished: request() until it returns []")
        outputs = np.stack(self._outputs)[:, int(target)]
        if self.exact:
            # requested in the design's order, one row each (the design has no repeated coalition)
            return owen_design(self.n_players, self.hierarchy)[1] @ outputs, 0.0
        values = np.zeros(self.n_players)
        resolved = spread = 0.0
        for start, stop, with_group, without_group, weight, split in self._terms:
            amount = weight * (outputs[with_group] - outputs[without_group])
            values[start:stop] += amount / (stop - start)
            if split:
                spread += abs(amount)
            else:
                resolved += abs(amount)
        total = resolved + spread
        return values, (spread / total if total > 0 else 0.0)


def owen_values(n_players: int, outputs: np.ndarray, hierarchy: Hierarchy | None = None) -> np.ndarray:
    """Owen values from the outputs of :func:`owen_design`'s coalitions (``(K,)``, or ``(K, classes)``)."""
    coalitions, weights = owen_design(n_players, hierarchy)
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.shape[0] != coalitions.shape[0]:
        raise ValueError(f"{n_players} players need outputs for {coalitions.shape[0]} coalitions, got {outputs.shape[0]}")
    return weights @ outputs


@register_explainer
class PartitionShapExplainer(BuiltinExplainer):
    """Partition SHAP: Owen values of the words over a balanced binary hierarchy, ``|Owen value|`` per word.

    Deterministic (no sampling). Words lost to truncation are not players and score 0. ``output`` is the model
    output explained: the target class's softmax ``"probability"`` (default, 4.0.0) or its ``"logit"`` (3.x). Partition
    SHAP is not in the authors' code; it explains what their Kernel SHAP and LIME explain (``xai/methods.py``,
    ``get_captum_attributions``: the softmax of the logits). ``removal``: how an
    absent word leaves the sentence — ``"mask"`` (default: each run of absent words becomes one mask token of
    the tokenizer), ``"mask_tokens"`` (each of its tokens becomes a mask token, positions kept: ``shap``'s text
    masker with a BERT tokenizer) or ``"delete"`` (its tokens dropped, as LIME and Kernel SHAP do; version 1.0.0).
    ``coalitions_per_word``: a number (default 4) is a fixed budget of model outputs per word of the sentence (at
    least the two of the whole sentence and of no word); ``"adaptive"`` expands each sentence's hierarchy, where the output
    moves most, until the share of the explained amount still held by unexpanded groups (the expansion's remaining
    mass, class-agnostic: :meth:`OwenExpansion.remaining_share`) is at most ``tolerance`` (default 0.05), or the
    cap ``max_coalitions_per_word`` (default ``None``: the exact design, where the remaining share is 0) is
    reached; ``None`` computes the exact Owen values (about ``2 n / 3``
    outputs per word; version 2.0.0). Diagnostics per sentence: ``n_coalitions`` and ``spread_share`` (see the
    module docstring). The adaptive stop is this hub's own (Partition SHAP is not in the authors' code; ``shap``'s
    Partition explainer stops at a fixed ``max_evals``). ``hierarchy``: ``"balanced"`` (default) or ``"text"``, a
    hierarchy that follows the sentence's punctuation (:func:`text_hierarchy`, the idea of ``shap``'s text masker).
    """

    name = "partition_shap"
    # coalitions_per_word=adaptive (an accuracy target) is a parameter: the default's scores did not change; 4.0.0: the target probability by default, as Kernel SHAP and LIME (3.x: the logit); 3.0.0: a budget of 4 model outputs per word by default (exact values with coalitions_per_word=None);
    # 2.0.0: absent words masked (one mask token per run); 1.0.0: deleted
    version = "4.0.0"
    description = ("Partition SHAP on the target probability: Owen values over a balanced binary word hierarchy (each run of absent words one "
                   "[MASK]), expanded by priority within 4 model outputs per word; |value| per word.")
    protocol_keys = ("perturbation", "target", "max_length")
    REMOVALS = ("mask", "mask_tokens", "delete")
    runs_model = True

    def __init__(self, output: str = "probability", removal: str = "mask",
                 coalitions_per_word: float | str | None = 4.0, tolerance: float | None = None,
                 max_coalitions_per_word: float | None = None, perturbations_per_eval: int | None = None,
                 hierarchy: str = "balanced", **kwargs: Any) -> None:
        if output not in ("logit", "probability"):
            raise ValueError(f"output must be 'logit' or 'probability', got {output!r}")
        if removal not in self.REMOVALS:
            raise ValueError(f"removal must be one of {', '.join(self.REMOVALS)}, got {removal!r}")
        adaptive = {}
        if coalitions_per_word != ADAPTIVE and (tolerance is not None or max_coalitions_per_word is not None):
            # a budget or the exact design has no accuracy target: refuse rather than silently ignore it
            raise ValueError(f"tolerance and max_coalitions_per_word set the accuracy target of coalitions_per_word="
                             f"{ADAPTIVE}; with coalitions_per_word={coalitions_per_word!r} they do nothing")
        if coalitions_per_word == ADAPTIVE:
            tolerance = ADAPTIVE_TOLERANCE if tolerance is None else tolerance
            if not 0 < float(tolerance) < 1:
                raise ValueError(f"tolerance must be a share of the explained amount in (0, 1), got {tolerance!r}")
            if max_coalitions_per_word is not None and not float(max_coalitions_per_word) > 0:
                raise ValueError(f"max_coalitions_per_word must be a positive number or None (up to the exact "
                                 f"design), got {max_coalitions_per_word!r}")
            adaptive = {"tolerance": float(tolerance), "max_coalitions_per_word":
                        None if max_coalitions_per_word is None else float(max_coalitions_per_word)}
        elif coalitions_per_word is not None:
            try:
                coalitions_per_word = float(coalitions_per_word)
            except (TypeError, ValueError):
                raise ValueError(f"coalitions_per_word must be a positive number, None (exact values) or "
                                 f"{ADAPTIVE!r}, got {coalitions_per_word!r}") from None
            if not math.isfinite(coalitions_per_word) or coalitions_per_word <= 0:
                raise ValueError(f"coalitions_per_word must be a positive number, None (exact values) or "
                                 f"{ADAPTIVE!r}, got {coalitions_per_word!r}")
        if perturbations_per_eval is not None and int(perturbations_per_eval) < 1:
            raise ValueError(f"perturbations_per_eval must be >= 1, got {perturbations_per_eval}")
        if hierarchy == BALANCED_DESCRIPTION:  # the recorded form of the default, read back from a record
            hierarchy = "balanced"
        if hierarchy not in HIERARCHIES:
            raise ValueError(f"hierarchy must be one of {', '.join(HIERARCHIES)}, got {hierarchy!r}")
        self._text_hierarchy = hierarchy == "text"
        # the default is recorded as it always was (its records keep their parameters); the text one by its name
        super().__init__(output=output, removal=removal, coalitions_per_word=coalitions_per_word, **adaptive,
                         hierarchy=BALANCED_DESCRIPTION if hierarchy == "balanced" else hierarchy, **kwargs)
        # Speed knob only: None packs the coalitions of every sentence by length into passes of the token budget;
        # N evaluates each sentence's coalitions N at a time, in order (the unbatched reference with N = 1).
        self.perturbations_per_eval = None if perturbations_per_eval is None else int(perturbations_per_eval)
        # Finished expansions (their outputs) kept for reuse, only inside `outputs_reused` (None outside it).
        self._reused: dict[tuple[int, int, tuple[str, ...]], OwenExpansion] | None = None

    @contextmanager
    def outputs_reused(self) -> Iterator[None]:
        """Inside the block, a sentence explained again on the same model and tokenizer (for another target: the
        label-difference pass) reuses its coalition outputs instead of running the model again.

        Owen values are linear in the outputs, the outputs carry every class and the expansion's priority is
        class-agnostic, so the scores are exactly those of a fresh run. The outputs are keyed by the model's and
        tokenizer's identity: the caller keeps both alive and unchanged for the block, as the evaluation runner
        does for one chunk. Nested blocks share one store.
        """
        outer = self._reused
        if outer is None:
            self._reused = {}
        try:
            yield
        finally:
            if outer is None:
                self._reused = None

    def protocol(self) -> dict[str, Any]:
        out = super().protocol()
        if self._params["removal"] == "mask":
            out["perturbation"] = MASKED_PERTURBATION
        elif self._params["removal"] == "mask_tokens":
            out["perturbation"] = MASKED_TOKENS_PERTURBATION
        return out

    @property
    def packs_rows_by_length(self) -> bool:  # type: ignore[override]
        return self.perturbations_per_eval is None  # else Captum's fixed count of rows per pass

    @property
    def rows_per_sentence(self) -> int:
        # As for LIME: the coalitions of all sentences in a batch are packed by length together.
        return 1

    @property
    def adaptive(self) -> bool:
        """True when each sentence expands until its remaining share is at most ``tolerance``."""
        return self._params["coalitions_per_word"] == ADAPTIVE

    def max_outputs(self, n_players: int) -> int | None:
        """The budget (adaptive: the cap) of model outputs for a sentence of ``n_players`` words (``None``: the
        exact design's size)."""
        per_word = self._params.get("max_coalitions_per_word") if self.adaptive else self._params["coalitions_per_word"]
        return None if per_word is None else max(2, math.ceil(per_word * n_players))

    def explain(self, model: Any, tokenizer: Any, words: Sequence[Sequence[str]], targets: Sequence[int]) -> list[np.ndarray]:
        removal_options = mask_removal_options(tokenizer, self._params["removal"], self.name)
        batch = encode_batch(tokenizer, words, model_device(model))
        present = [word_first_tokens(batch.word_ids[i], batch.n_words[i]) >= 0 for i in range(len(words))]
        store = self._reused
        keys = [(id(model), id(tokenizer), tuple(sentence)) for sentence in words]
        expansions: dict[int, OwenExpansion] = {}
        running: dict[int, OwenExpansion] = {}
        for i, key in enumerate(keys):
            if store is not None and key in store:
                expansions[i] = store[key]
            else:
                n_players = int(present[i].sum())
                # the players are the words not lost to truncation, in order
                hierarchy = (text_hierarchy([w for w, kept in zip(words[i], present[i]) if kept])
                             if self._text_hierarchy else None)
                expansions[i] = running[i] = OwenExpansion(n_players, self.max_outputs(n_players),
                                                           self._params.get("tolerance"), hierarchy)
        forward = EmbeddingForward(model, self._params["output"], precision=self.precision)
        while running:
            requests = []
            for i, expansion in list(running.items()):
                coalitions = expansion.request()
                if coalitions:
                    requests.append((i, coalitions))
                else:  # finished
                    del running[i]
            if not requests:
                continue
            keep_matrices = []
            for i, coalitions in requests:
                keep = np.ones((len(coalitions), batch.n_words[i]), dtype=np.int64)
                keep[:, present[i]] = coalition_matrix(coalitions, int(present[i].sum()))
                keep_matrices.append((i, keep))
            if self.perturbations_per_eval is None:
                computed = outputs_without_words(forward, model, batch, keep_matrices, tokenizer.pad_token_id,
                                                 tokens_per_forward=self.tokens_per_forward, deduplicate=False,
                                                 **removal_options)
            else:
                computed = [outputs_without_words(forward, model, batch, [pair], tokenizer.pad_token_id,
                                                  rows_per_forward=self.perturbations_per_eval, deduplicate=False,
                                                  **removal_options)[0]
                            for pair in keep_matrices]
            for (i, _), output in zip(requests, computed):
                running[i].receive(output)
        if store is not None:
            for i, key in enumerate(keys):
                store.setdefault(key, expansions[i])
        scores, n_coalitions, spread_shares = [], [], []
        for i in range(len(words)):
            values, spread_share = expansions[i].values(int(targets[i]))
            word_scores = np.zeros(batch.n_words[i])
            word_scores[present[i]] = np.abs(values)
            scores.append(word_scores)
            n_coalitions.append(expansions[i].n_outputs)
            spread_shares.append(spread_share)
        self.last_diagnostics = {"n_coalitions": np.array(n_coalitions, dtype=np.float64),
                                 "spread_share": np.array(spread_shares)}
        return scores

"""Which process explains which chunk: balance the work, not the chunk count.

The property metrics and the faithfulness evaluators run on the first chunks only (the reference protocol: about
10 % of a split), and a chunk that carries them costs several explainer passes more than one that does not.
Splitting the chunk list into contiguous halves (``Accelerator.split_between_processes``) gave every such chunk
to the first process, which then finished last: on two processes the whole evaluation ran at 1.6× one process
instead of close to 2× (BENCHMARKS.md, issue #19).

:func:`assign_chunks` estimates a chunk's cost as its rows times the explainer passes it needs and hands chunks
out longest-first to the least-loaded process (Graham's LPT rule, within 4/3 of the best makespan). The
assignment depends on the chunks and the process count only, so every process computes the same one without
talking to the others; results are gathered by chunk id, so the records do not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence


def chunk_cost(n_rows: int, *, reference: bool, properties: bool, faithfulness: bool, n_classes: int) -> float:
    """Explainer passes × rows: the model's own pass, the zero-shot reference's, the property passes
    (randomised copy, noisy copy, each other class) and the faithfulness curves (counted as one pass)."""
    passes = 1 + int(reference)
    if properties:
        passes += 2 + max(n_classes - 1, 1)
    passes += int(faithfulness)
    return float(n_rows * passes)


def assign_chunks(costs: Sequence[float], n_processes: int) -> list[list[int]]:
    """Chunk ids per process, balanced by ``costs`` (longest first to the least loaded; ties by lower id).

    Each process's ids come back in ascending order. Deterministic, so every process derives the same split.

    >>> assign_chunks([6, 6, 2, 2, 2, 2], 2)
    [[0, 2, 4], [1, 3, 5]]
    >>> assign_chunks([1, 1, 1], 1)
    [[0, 1, 2]]
    """
    if n_processes < 1:
        raise ValueError(f"n_processes must be >= 1, got {n_processes}")
    if any(not cost >= 0 for cost in costs):
        raise ValueError(f"chunk costs must be non-negative numbers, got {list(costs)}")
    loads = [0.0] * n_processes
    assigned: list[list[int]] = [[] for _ in range(n_processes)]
    for chunk_id in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        process = min(range(n_processes), key=lambda p: (loads[p], p))
        loads[process] += costs[chunk_id]
        assigned[process].append(chunk_id)
    return [sorted(ids) for ids in assigned]

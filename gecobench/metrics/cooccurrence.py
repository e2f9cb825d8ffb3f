"""Co-occurrence bias of a gendered dataset (the GECO paper's dataset-bias measure).

For group ``g`` with term slots ``A_g`` (a slot is a list of equivalent gender terms that counts once when
any of them occurs) and the sentences ``D^g`` of that group::

    C(D^g) = sum_{x in D^g} sum_{w in V_x} sum_{a in A_g} 1_x(a, w)
    bias_C(D^g) = C(D^g) / sum_{g'} C(D^{g'})

``V_x`` is the set of *distinct* words of sentence ``x`` (word types, lower-cased) minus every gender term of
every group and minus punctuation-only words. Using types follows the formula's ``w in V``: a word repeated in
one sentence co-occurs with the gender term once. ``1_x(a, w)`` is 1 when slot ``a`` and word ``w`` both occur
in ``x``, so a sentence contributes ``(#slots of its group present) * |V_x|``.

A balanced dataset gives ``1 / number of groups`` to every group.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

METRIC_META: dict[str, Any] = {
    "name": "cooccurrence_bias",
    "direction": "balanced",
    "range": [0.0, 1.0],
    "best": "1 / number of groups",
    "property": "dataset gender bias",
}

DEFAULT_TERMS: dict[str, list[list[str]]] = {
    "male": [["he"], ["him", "his"], ["himself"]],
    "female": [["she"], ["her", "hers"], ["herself"]],
    "non-binary": [["they"], ["them", "their", "theirs"], ["themself", "themselves"]],
}

_PUNCTUATION = set(string.punctuation) | {"``", "''", "“", "”", "‘", "’", "…", "–", "—"}


def _is_punctuation(word: str) -> bool:
    return all(ch in _PUNCTUATION for ch in word)


def _validate_terms(terms: Mapping[str, Sequence[Sequence[str]]]) -> dict[str, list[frozenset[str]]]:
    if not isinstance(terms, Mapping) or not terms:
        raise ValueError("terms: expected a non-empty dict {group: [[term, ...], ...]}")
    slots: dict[str, list[frozenset[str]]] = {}
    for group, group_slots in terms.items():
        if isinstance(group_slots, str) or not isinstance(group_slots, Sequence) or not group_slots:
            raise ValueError(f"terms[{group!r}]: expected a non-empty list of slots (lists of terms)")
        parsed = []
        for j, slot in enumerate(group_slots):
            if isinstance(slot, str) or not slot or not all(isinstance(t, str) and t.strip() for t in slot):
                raise ValueError(f"terms[{group!r}][{j}]: a slot is a non-empty list of non-empty strings")
            parsed.append(frozenset(t.strip().lower() for t in slot))
        slots[str(group)] = parsed
    return slots


def cooccurrence_bias(
    words: Sequence[Sequence[str]],
    groups: Sequence[str],
    terms: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> dict[str, Any]:
    """Co-occurrence bias per group.

    Args:
        words: per sentence, its words.
        groups: per sentence, its group (a key of ``terms``).
        terms: ``{group: [slot, ...]}``; defaults to :data:`DEFAULT_TERMS` (male, female, non-binary).
            The groups reported are the keys of ``terms``.

    Returns:
        ``bias_c`` (``{group: C / sum C}``; NaN for every group when nothing co-occurs), ``counts``
        (``{group: C}``) and ``n_sentences`` (``{group: number of sentences}``).

    >>> out = cooccurrence_bias(
    ...     [["He", "ran", "home", "."], ["She", "saw", "her", "cat", "cat"]],
    ...     ["male", "female"],
    ...     terms={"male": [["he"], ["him", "his"]], "female": [["she"], ["her", "hers"]]},
    ... )
    >>> out["counts"], out["bias_c"]
    ({'male': 2, 'female': 4}, {'male': 0.3333333333333333, 'female': 0.6666666666666666})
    """
    slots = _validate_terms(DEFAULT_TERMS if terms is None else terms)
    for field, values in (("words", words), ("group", groups)):
        if values is None or isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
            raise ValueError(f"{field}: expected a list with one entry per sentence, got {values!r:.40}")
    if len(words) == 0:
        raise ValueError("words: empty input, at least one sentence is required")
    if len(groups) != len(words):
        n_groups = 0 if groups is None else len(groups)
        raise ValueError(f"words has {len(words)} sentences but group has {n_groups}")
    all_terms = frozenset().union(*(s for group_slots in slots.values() for s in group_slots))
    counts = {g: 0 for g in slots}
    n_sentences = {g: 0 for g in slots}
    for i, (sentence, group) in enumerate(zip(words, groups)):
        if not isinstance(group, str) or group not in slots:
            raise ValueError(f"group: sentence {i} has group {group!r}, which is not in terms {sorted(slots)}")
        if isinstance(sentence, str) or not isinstance(sentence, Sequence):
            raise ValueError(f"words: sentence {i} must be a list of words, got {type(sentence).__name__}")
        tokens = set()
        for j, w in enumerate(sentence):
            if not isinstance(w, str):
                raise ValueError(f"words: sentence {i}, word {j} is {w!r}, not a string")
            w = w.strip().lower()
            if w and not _is_punctuation(w):
                tokens.add(w)
        vocabulary_size = len(tokens - all_terms)
        slots_present = sum(1 for slot in slots[group] if slot & tokens)
        counts[group] += slots_present * vocabulary_size
        n_sentences[group] += 1
    total = sum(counts.values())
    bias = {g: (c / total if total else float("nan")) for g, c in counts.items()}
    return {"bias_c": bias, "counts": counts, "n_sentences": n_sentences}


GECO_GENDER_TO_GROUP = {"female": "female", "male": "male", "neutral": "non-binary"}


def geco_cooccurrence_table(geco_dir: str, split: str = "train") -> dict[str, dict[str, Any]]:
    """bias_C of every GECO config folder under ``geco_dir`` (``<config>/<split>.jsonl``).

    Gender ``neutral`` maps to the ``non-binary`` group; the groups are those present in the file
    (binary configs: female and male only).
    """
    import json
    from pathlib import Path

    table: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(geco_dir).glob(f"*/{split}.jsonl")):
        words, groups = [], []
        with path.open(encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if row.get("gender") not in GECO_GENDER_TO_GROUP:
                    raise ValueError(f"{path}:{line_no}: unknown gender {row.get('gender')!r}")
                words.append(row["sentence"])
                groups.append(GECO_GENDER_TO_GROUP[row["gender"]])
        present = [g for g in DEFAULT_TERMS if g in set(groups)]
        table[path.parent.name] = cooccurrence_bias(words, groups, {g: DEFAULT_TERMS[g] for g in present})
    if not table:
        raise ValueError(f"no */{split}.jsonl files under {geco_dir}")
    return table



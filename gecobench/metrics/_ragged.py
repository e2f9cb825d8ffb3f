"""Ragged per-sentence inputs as one flat array: the shared validation behind every metric.

Sentences have different lengths, so per-sentence metrics are computed on the concatenation of all
sentences plus a ``lengths`` vector; per-sentence sums then become one ``np.bincount`` call instead of a
Python loop. Every check names the input field and the offending sentence so bad input never passes
silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Ragged:
    """Sentences flattened into one array.

    Attributes:
        flat: all values, sentence after sentence (float64).
        lengths: number of values of each sentence.
    """

    flat: np.ndarray
    lengths: np.ndarray

    @property
    def n_sentences(self) -> int:
        return int(self.lengths.shape[0])

    @cached_property
    def starts(self) -> np.ndarray:
        """Flat index where each sentence begins."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    @cached_property
    def sentence_of(self) -> np.ndarray:
        """For every flat position, the index of its sentence (built only when a caller needs it)."""
        return np.repeat(np.arange(self.n_sentences, dtype=np.int64), self.lengths)

    def sentence_at(self, position: int) -> tuple[int, int]:
        """(sentence index, position inside the sentence) of a flat position."""
        sentence = int(np.searchsorted(self.starts, position, side="right") - 1)
        # Empty sentences share their start with the next one: step forward to the one that holds it.
        while self.lengths[sentence] == 0:
            sentence += 1
        return sentence, int(position - self.starts[sentence])

    def per_sentence_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum ``values`` (aligned with ``flat``) within each sentence; 0 for an empty sentence."""
        out = np.zeros(self.n_sentences)
        nonempty = self.lengths > 0
        if values.size:
            # reduceat over the starts of non-empty sentences: each segment runs to the next such start.
            out[nonempty] = np.add.reduceat(values, self.starts[nonempty], dtype=np.float64)
        return out

    def per_sentence_max(self, values: np.ndarray) -> np.ndarray:
        """Largest of ``values`` (aligned with ``flat``) within each sentence; 0 for an empty sentence."""
        out = np.zeros(self.n_sentences)
        nonempty = self.lengths > 0
        if values.size:
            out[nonempty] = np.maximum.reduceat(values, self.starts[nonempty])
        return out

    def scaled_magnitudes(self) -> np.ndarray:
        """``|flat|`` scaled per sentence so that its largest value lies in [0.5, 1) (all-zero sentences stay 0).

        Every ratio of attribution mass (Mass Accuracy, the normalised distributions of the properties) is
        computed on these: a sentence's sum then cannot overflow (scores of 1e308 summed to infinity gave
        MA 0) and tiny scores (1e-308) are lifted out of the subnormal range before they are added up. The
        factor is a power of two, which is exact in binary floating point: for ordinary scores every ratio is
        bit-for-bit what it was without scaling.
        """
        return scale_by_sentence_peak(np.abs(self.flat.astype(np.float64, copy=False)), self)

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """Cut an array aligned with ``flat`` back into per-sentence arrays."""
        return np.split(values, np.cumsum(self.lengths)[:-1]) if self.n_sentences else []


def scale_by_sentence_peak(magnitudes: np.ndarray, layout: Ragged) -> np.ndarray:
    """Multiply each sentence of non-negative ``magnitudes`` by the power of two that brings its maximum
    into [0.5, 1) (see :meth:`Ragged.scaled_magnitudes`)."""
    peak = layout.per_sentence_max(magnitudes)
    _, exponent = np.frexp(peak)  # peak = mantissa * 2**exponent, mantissa in [0.5, 1); exponent 0 for 0
    return np.ldexp(magnitudes, -np.repeat(exponent, layout.lengths))


# numpy dtype kinds accepted as numbers: bool (0/1 masks), signed and unsigned integers, floats.
_NUMERIC_KINDS = "biuf"


def _first_non_number(values: Any) -> tuple[int, Any]:
    """Position and value of the first entry that is not a real number (or bool) in a flat list or array.

    Read from the caller's list, not from ``np.asarray`` of it: numpy turns ``[1, "x"]`` into two strings.
    """
    entries = values.tolist() if isinstance(values, np.ndarray) else list(values)
    for position, value in enumerate(entries):
        if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            return position, value
    return 0, entries[0] if entries else None


def flatten(
    sentences: Sequence[Any], field: str, allow_empty_sentence: bool = True, keep_integer_dtype: bool = False
) -> Ragged:
    """Validate a list of per-sentence score vectors and flatten it.

    The fast path concatenates everything at once (a million sentences in well under a second); only when
    that fails does the per-sentence path run, to name the sentence that is wrong.

    With ``keep_integer_dtype`` (0/1 masks) integer and boolean input stays as it is instead of being
    copied to float64, which halves the cost of flattening a million masks.

    Raises:
        ValueError: the input is empty or not a list, a sentence is None, not one-dimensional or holds
            something other than numbers (strings, None), or a value is NaN/infinite; the message names
            ``field`` and the sentence index.
    """
    if sentences is None:
        raise ValueError(f"{field}: missing (None); expected a list with one list of numbers per sentence")
    if isinstance(sentences, (str, bytes, dict)) or not hasattr(sentences, "__len__"):
        raise ValueError(f"{field}: expected a list of sentences, got {type(sentences).__name__}")
    if len(sentences) == 0:
        raise ValueError(f"{field}: empty input, at least one sentence is required")
    try:
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        flat = np.concatenate(sentences) if lengths.sum() else np.zeros(0)
        # Strings ("0.5") and None would be converted silently by astype: only numbers take the fast path.
        fast_ok = flat.dtype.kind in _NUMERIC_KINDS and flat.ndim == 1 and flat.shape[0] == int(lengths.sum())
        if fast_ok and not (keep_integer_dtype and flat.dtype.kind in "biu"):
            flat = flat.astype(np.float64, copy=False)
    except (TypeError, ValueError):
        fast_ok = False
    if not fast_ok or (not allow_empty_sentence and (lengths == 0).any()):
        flat, lengths = _flatten_checked(sentences, field, allow_empty_sentence)
    ragged = Ragged(flat=flat, lengths=lengths)
    finite = np.isfinite(flat) if flat.dtype.kind == "f" else np.ones(1, dtype=bool)
    if not finite.all():
        sentence, word = ragged.sentence_at(int(np.argmin(finite)))
        raise ValueError(f"{field}: sentence {sentence} has a NaN or infinite value at position {word}")
    return ragged


def _flatten_checked(
    sentences: Sequence[Any], field: str, allow_empty_sentence: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Slow path: convert sentence by sentence and report the first one that is not a flat list of numbers."""
    arrays = []
    for i, sentence in enumerate(sentences):
        if sentence is None:
            raise ValueError(f"{field}: sentence {i} is None")
        if isinstance(sentence, (str, bytes, dict)):
            raise ValueError(f"{field}: sentence {i} is a {type(sentence).__name__}, not a list of numbers")  # noqa: TRY004
        try:
            raw = np.asarray(sentence)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{field}: sentence {i} is not a list of numbers ({err})") from None
        if raw.ndim == 1 and raw.dtype.kind not in _NUMERIC_KINDS:
            position, value = _first_non_number(sentence)
            raise ValueError(f"{field}: sentence {i} holds {value!r} at position {position}; only numbers are allowed")
        try:
            arr = raw.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{field}: sentence {i} is not a list of numbers ({err})") from None
        if arr.ndim != 1:
            raise ValueError(f"{field}: sentence {i} must be a flat list of numbers, got shape {arr.shape}")
        if arr.size == 0 and not allow_empty_sentence:
            raise ValueError(f"{field}: sentence {i} is empty")
        arrays.append(arr)
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    return flat, lengths


def check_same_shape(a: Ragged, b: Ragged, field_a: str, field_b: str) -> None:
    """Both inputs must have the same number of sentences and the same length per sentence."""
    if a.n_sentences != b.n_sentences:
        raise ValueError(f"{field_a} has {a.n_sentences} sentences but {field_b} has {b.n_sentences}")
    differ = np.nonzero(a.lengths != b.lengths)[0]
    if differ.size:
        i = int(differ[0])
        raise ValueError(
            f"sentence {i}: {field_a} has {int(a.lengths[i])} values but {field_b} has {int(b.lengths[i])}"
        )


def check_binary(mask: Ragged, field: str) -> None:
    """A ground-truth mask holds only 0 and 1."""
    if mask.flat.dtype == np.bool_:
        return
    bad = (mask.flat != 0) & (mask.flat != 1)
    if bad.any():
        pos = int(np.argmax(bad))
        sentence, _ = mask.sentence_at(pos)
        raise ValueError(f"{field}: sentence {sentence} holds {mask.flat[pos].item()!r}; only 0 and 1 are allowed")


def check_finite_vector(values: Sequence[Any], field: str) -> np.ndarray:
    """A flat list of finite numbers (one per sentence)."""
    if values is None or len(values) == 0:
        raise ValueError(f"{field}: empty input")
    raw = np.asarray(values)
    if raw.ndim == 1 and raw.dtype.kind not in _NUMERIC_KINDS:
        position, value = _first_non_number(values)
        raise ValueError(f"{field}: sentence {position} is {value!r}; expected a number")
    arr = raw.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{field}: expected one number per sentence, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{field}: sentence {int(np.argmax(bad))} is NaN or infinite")
    return arr

"""Strict checks of what a caller hands to a ``metrics/<name>`` evaluate module, before ``evaluate`` sees it.

``evaluate`` encodes every input column with the module's ``datasets.Features`` before ``_compute`` runs,
and that encoding converts silently: a ground truth of 0.5 becomes 0 in an ``int64`` column, the string
``"no"`` becomes ``True`` in a ``bool`` column, and ``None`` ends in a ``TypeError`` deep inside
``evaluate``. :class:`StrictInputs` therefore checks the raw inputs against the declared features first and
raises a ``ValueError`` that names the field and the sentence (or row) index.

What each declared feature accepts:

* ``Sequence(Value("float64"))``: per sentence a list of finite real numbers (no strings, None or bools);
* ``Sequence(Value("int64"))``: per sentence a list of integers (bools and integral floats such as 1.0
  count); fields listed in ``strict_binary_fields`` only 0 and 1;
* ``Sequence(Value("string"))``: per sentence a list of strings;
* ``Value("float64")``: one finite real number per sentence (None too for ``nullable_fields``);
* ``Value("int64")``: one integer per row (integral floats count);
* ``Value("bool")``: True or False (0 and 1 count), never strings such as ``"no"``;
* ``Value("string")``: one string per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

_NUMBER_TYPES = (int, float, np.integer, np.floating)


def _is_real(value: Any) -> bool:
    return isinstance(value, _NUMBER_TYPES) and not isinstance(value, (bool, np.bool_))


def _is_integral(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer()


def _as_list(value: Any, field: str, where: str) -> list[Any]:
    """A list-like input as a list; strings, dicts, None and scalars are refused."""
    if value is None:
        raise ValueError(f"{field}: {where} is None; expected a list")
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        raise ValueError(f"{field}: {where} is a {type(value).__name__}; expected a list")
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(f"{field}: {where} has shape {value.shape}; expected a flat list")
        return value.tolist()
    return list(value)


def _check_scalar(value: Any, dtype: str, field: str, where: str, nullable: bool) -> None:
    """One value against a ``datasets.Value`` dtype."""
    if value is None:
        if nullable:
            return
        raise ValueError(f"{field}: {where} is None")
    if dtype.startswith("float"):
        if not _is_real(value):
            raise ValueError(f"{field}: {where} is {value!r}; expected a number")
        if not math.isfinite(float(value)):
            raise ValueError(f"{field}: {where} is {float(value)!r}; expected a finite number")
    elif dtype.startswith(("int", "uint")):
        if not _is_integral(value) or isinstance(value, str):
            raise ValueError(f"{field}: {where} is {value!r}; expected an integer")
    elif dtype == "bool":
        if not (isinstance(value, (bool, np.bool_)) or (_is_integral(value) and value in (0, 1))):
            raise ValueError(f"{field}: {where} is {value!r}; expected True or False")
    elif dtype in ("string", "large_string") and not isinstance(value, str):
        raise ValueError(f"{field}: {where} is {value!r}; expected a string")


def _whole_column_is_valid(entries: list[Any], dtype: str, binary: bool) -> bool:
    """The common case at numpy speed: every sentence a flat list of numbers of the right kind (finite floats;
    integers, 0/1 only when ``binary``). False means "check sentence by sentence", which names the culprit."""
    if dtype.startswith("float"):
        kinds = "iuf"
    elif dtype.startswith(("int", "uint")):
        kinds = "biu"
    else:
        return False
    try:
        if any(isinstance(sentence, (str, bytes, Mapping)) for sentence in entries):
            return False
        n_values = sum(len(sentence) for sentence in entries)
        flat = np.concatenate(entries) if n_values else np.zeros(0, dtype=np.int64)
    except (TypeError, ValueError):
        return False
    if flat.ndim != 1 or flat.shape[0] != n_values or flat.dtype.kind not in kinds:
        return False
    if flat.dtype.kind == "f" and not np.isfinite(flat).all():
        return False
    return not (binary and not np.isin(flat, (0, 1)).all())


def _try_array(values: list[Any]) -> np.ndarray | None:
    """``values`` as a numpy array for the fast checks; None when empty or ragged (the slow path explains)."""
    if not values:
        return None
    try:
        return np.asarray(values)
    except (TypeError, ValueError):
        return None


def check_column(
    values: Any, feature: Any, field: str, item: str = "sentence", binary: bool = False, nullable: bool = False
) -> int:
    """Check one input column against its ``datasets`` feature; return its number of entries.

    Raises:
        ValueError: naming ``field``, the ``item`` (sentence/row) index and, inside a sentence, the position.
    """
    import datasets

    entries = _as_list(values, field, "the input") if values is not None else None
    if entries is None:
        raise ValueError(f"{field}: missing (None); expected a list with one entry per {item}")
    if isinstance(feature, (datasets.Sequence, list)):
        inner = feature.feature if isinstance(feature, datasets.Sequence) else feature[0]
        dtype = getattr(inner, "dtype", "")
        if _whole_column_is_valid(entries, dtype, binary):
            return len(entries)
        for i, sentence in enumerate(entries):
            words = _as_list(sentence, field, f"{item} {i}")
            array = _try_array(words)
            integer_array = array is not None and array.dtype.kind in "biu" and array.ndim == 1
            if dtype.startswith(("int", "uint")) and integer_array:
                outside = ~np.isin(array, (0, 1)) if binary else np.zeros(array.shape, dtype=bool)
                if outside.any():
                    position = int(np.argmax(outside))
                    raise ValueError(f"{field}: {item} {i} holds {words[position]!r} at position {position}; "
                                     "only 0 and 1 are allowed")
                continue
            number_array = array is not None and array.dtype.kind in "iuf" and array.ndim == 1
            if dtype.startswith("float") and number_array:
                if array.dtype.kind == "f" and not np.isfinite(array).all():
                    position = int(np.argmin(np.isfinite(array)))
                    raise ValueError(f"{field}: {item} {i} has a NaN or infinite value at position {position}")
                continue
            for position, value in enumerate(words):
                if binary and (value is None or isinstance(value, str) or not _is_integral(value)
                               or value not in (0, 1)):
                    raise ValueError(f"{field}: {item} {i} holds {value!r} at position {position}; only 0 and 1 "
                                     "are allowed")
                _check_scalar(value, dtype, field, f"{item} {i}, position {position}", nullable=False)
        return len(entries)
    dtype = getattr(feature, "dtype", "")
    for i, value in enumerate(entries):
        _check_scalar(value, dtype, field, f"{item} {i}", nullable=nullable)
    return len(entries)


def check_options(options: Mapping[str, Any]) -> None:
    """The keyword options shared by the per-sentence modules: ``bootstrap``, ``seed``, ``return_per_sentence``."""
    for name in ("bootstrap", "seed"):
        if name in options:
            value = options[name]
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name}: expected an integer >= 0, got {value!r}")
    if "return_per_sentence" in options and not isinstance(options["return_per_sentence"], (bool, np.bool_)):
        raise ValueError(f"return_per_sentence: expected True or False, got {options['return_per_sentence']!r}")


class StrictInputs:
    """Mix into an ``evaluate.EvaluationModule`` (before it in the bases) to check raw inputs first.

    Class attributes a module may set: ``strict_binary_fields`` (0/1 only), ``strict_nullable_fields``
    (None allowed per entry) and ``strict_item_name`` (how an entry is called in messages, ``"sentence"``).
    """

    strict_binary_fields: tuple[str, ...] = ()
    strict_nullable_fields: tuple[str, ...] = ()
    strict_item_name: str = "sentence"

    def _strict_check(self, inputs: Mapping[str, Any]) -> None:
        features = self._info().features
        if isinstance(features, list):  # modules with several accepted formats: check against the first
            features = features[0]
        sizes = {}
        for name, feature in features.items():
            sizes[name] = check_column(
                inputs.get(name), feature, name, item=self.strict_item_name,
                binary=name in self.strict_binary_fields, nullable=name in self.strict_nullable_fields,
            )
        if len(set(sizes.values())) > 1:
            described = ", ".join(f"{name} has {n}" for name, n in sizes.items())
            raise ValueError(f"inputs differ in length: {described} {self.strict_item_name}s")

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Check the inputs and options (``ValueError`` naming field and sentence), then compute the module."""
        # evaluate appends the module's inputs description to this docstring, so it must exist
        names = list(self._info().features if not isinstance(self._info().features, list)
                     else self._info().features[0])
        given = {"predictions": predictions, "references": references, **kwargs}
        if all(given.get(name) is None for name in names) and getattr(self, "writer", None) is None:
            raise ValueError(f"no input: pass {', '.join(f'{n}=...' for n in names)}")
        check_options(kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Check a batch of inputs, then add it to the module's stack."""
        self._strict_check({"predictions": predictions, "references": references, **kwargs})
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Check one example, then add it to the module's stack."""
        single = {"predictions": prediction, "references": reference, **kwargs}
        self._strict_check({name: [value] for name, value in single.items()})
        return super().add(prediction=prediction, reference=reference, **kwargs)

"""How every table of the package writes a number: the CLI, the Space, the docs and the metric cards alike."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def format_number(value: float, digits: int = 3, signed: bool = False) -> str:
    """``value`` with ``digits`` decimals; ``signed`` puts ``+`` on positive numbers.

    A value that rounds to zero at ``digits`` is written ``0.000``, without a sign: ``-0.000`` (a gap of -1e-17
    from float rounding) or ``+0.000`` would claim a direction that the printed number does not have.

    >>> format_number(0.1234)
    '0.123'
    >>> format_number(0.05, 2, signed=True)
    '+0.05'
    >>> format_number(-1e-17, signed=True), format_number(-0.0004)
    ('0.000', '0.000')
    """
    value = float(value)
    if round(value, digits) == 0:
        return f"{0.0:.{digits}f}"
    return format(value, f"{'+' if signed else ''}.{digits}f")


def format_interval(value: Any, low: Any = None, high: Any = None, digits: int = 3, signed: bool = False) -> str:
    """``value [low, high]`` through :func:`format_number`: ``–`` when the value is undefined (None, NaN, inf),
    the value alone when either end of the interval is.

    >>> format_interval(0.6234, 0.5812, 0.6641)
    '0.623 [0.581, 0.664]'
    >>> format_interval(-1.5, -2.25, 0.5, digits=2, signed=True)
    '-1.50 [-2.25, +0.50]'
    >>> format_interval(3.0, None, 4.0), format_interval(float("nan"), 0.1, 0.2)
    ('3.000', '–')
    """
    if not is_finite_number(value):
        return "–"
    text = format_number(value, digits, signed)
    if is_finite_number(low) and is_finite_number(high):
        text += f" [{format_number(low, digits, signed)}, {format_number(high, digits, signed)}]"
    return text


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is a number to show: an int, float or NumPy number (not a bool, not a string) that is
    neither NaN nor infinite. Every table decides "show it or write –" with this.

    >>> [is_finite_number(v) for v in (0.5, 3, float("nan"), None, True, "0.5")]
    [True, True, False, False, False, False]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        return False
    return math.isfinite(float(value))

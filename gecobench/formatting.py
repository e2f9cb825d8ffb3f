"""How every table of the package writes a number: the CLI, the Space, the docs and the metric cards alike."""

from __future__ import annotations


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

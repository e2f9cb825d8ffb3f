"""Shaded cells with readable text: a colour scale blended on white, the text black or white by WCAG contrast.

Every shaded table cell of the Space (drill-down shares, Spanish bias) gets a solid background *and* an explicit
text colour from here, so it reads the same in light and dark mode, at ≥ 4.5:1 (WCAG AA) on every shade: for any
sRGB colour the better of black and white text reaches at least 4.58:1.
"""

from __future__ import annotations

from collections.abc import Sequence

WHITE, BLACK = (255, 255, 255), (0, 0, 0)
GREY = (224, 224, 224)  # a category that is shown but not counted


def _luminance(rgb: Sequence[float]) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: Sequence[float], second: Sequence[float]) -> float:
    """The WCAG 2 contrast ratio of two sRGB colours (1 … 21)."""
    high, low = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour(background: Sequence[float]) -> tuple[int, int, int]:
    """Black or white, whichever contrasts more with ``background``."""
    return max((BLACK, WHITE), key=lambda colour: contrast_ratio(background, colour))


def blend(colour: Sequence[int], fraction: float, base: Sequence[int] = WHITE) -> tuple[int, int, int]:
    """``colour`` at ``fraction`` (0 … 1, clipped) over ``base``: a solid colour, not a transparent one (a
    transparent shade would change with the page's theme)."""
    fraction = min(1.0, max(0.0, float(fraction)))
    return tuple(round(b + (c - b) * fraction) for b, c in zip(base, colour))


def css(rgb: Sequence[int]) -> str:
    return "#" + "".join(f"{int(c):02x}" for c in rgb)


def cell_style(background: Sequence[int]) -> str:
    """``background`` and its readable text colour as an inline style."""
    return f"background: {css(background)}; color: {css(text_colour(background))}"

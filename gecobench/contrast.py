"""WCAG 2 contrast, computed: opaque shades and the readable (black or white) text colour on them.

A heat-map cell shaded ``rgba(r, g, b, a)`` lies over whatever the page's ground is — white in light mode, near
black in dark mode — so its text colour cannot be chosen once for both. Every shaded cell is therefore made
opaque (:func:`composite` over white: the same cell in both modes) and gets the one of black and white text that
contrasts more (:func:`readable_text`). For any opaque colour that choice reaches at least 4.58:1 (the worst case
is a luminance of about 0.18, where both give (1.05)/(0.23)), above WCAG AA's 4.5:1 for body text.

The arithmetic's one home: the notebook heat map (:mod:`gecobench.heatmap`) and the leaderboard Space's shaded
tables (which add their own colours and markup helpers) both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

RGB = tuple[int, int, int]
WHITE: RGB = (255, 255, 255)
BLACK: RGB = (0, 0, 0)
#: WCAG 2 level AA, normal text
AA_CONTRAST = 4.5


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: Sequence[int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 black … 1 white)."""
    if len(rgb) != 3 or any(not 0 <= int(v) <= 255 for v in rgb):
        raise ValueError(f"an sRGB colour is three integers in 0…255, got {tuple(rgb)!r}")
    r, g, b = (_channel(int(v)) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: Sequence[int], background: Sequence[int]) -> float:
    """WCAG 2 contrast ratio (1 … 21) of two opaque colours; symmetric."""
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def composite(rgb: Sequence[int], alpha: float, ground: Sequence[int] = WHITE) -> RGB:
    """The opaque colour ``rgba(rgb, alpha)`` shows over ``ground`` (alpha clipped to 0…1)."""
    a = min(1.0, max(0.0, float(alpha)))
    return tuple(round(a * c + (1 - a) * g) for c, g in zip(rgb, ground))  # type: ignore[return-value]


def readable_text(background: Sequence[int]) -> RGB:
    """Black or white, whichever contrasts more with ``background``."""
    return BLACK if contrast_ratio(BLACK, background) >= contrast_ratio(WHITE, background) else WHITE


def hex_colour(rgb: Sequence[int]) -> str:
    """``#rrggbb`` of an sRGB colour."""
    return "#{:02x}{:02x}{:02x}".format(*(int(v) for v in rgb))

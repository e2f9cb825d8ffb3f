"""Readable shaded cells: WCAG 2 contrast, computed, and the text colour every shaded cell of the Space gets.

A heat-map cell shaded ``rgba(r, g, b, a)`` lies over whatever the page's ground is — white in light mode, near
black in dark mode — so its text colour cannot be chosen once for both. The Space therefore makes every shade
opaque (:func:`composite` over white: the same cell in both modes) and gives it the one of black and white text
that contrasts more (:func:`readable_text`). For any opaque colour that choice reaches at least 4.58:1 (the
worst case is a luminance of about 0.18, where both give (1.05)/(0.23)), above WCAG AA's 4.5:1 for body text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

RGB = tuple[int, int, int]
WHITE: RGB = (255, 255, 255)
BLACK: RGB = (0, 0, 0)
#: WCAG 2 level AA, normal text
AA_CONTRAST = 4.5
#: The Dataframe's "best in column" mark (light green) and the drill-down's ground-truth header (pale yellow).
BEST_CELL: RGB = (0xC7, 0xE9, 0xC0)
GROUND_TRUTH_HEADER: RGB = (0xFF, 0xE0, 0x8A)
GROUND_TRUTH_TEXT: RGB = (0x1A, 0x1A, 0x1A)  # the page's CSS sets it in both modes (page_assets.CSS)


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
    return "#{:02x}{:02x}{:02x}".format(*(int(v) for v in rgb))


def shaded_style(rgb: Sequence[int], alpha: float = 1.0) -> str:
    """The inline style of a cell shaded ``rgba(rgb, alpha)``: opaque (over white) with its readable text colour,
    the same in light and dark mode."""
    background = composite(rgb, alpha)
    return f"background-color: {hex_colour(background)}; color: {hex_colour(readable_text(background))}"


_RGBA = re.compile(r"background(?:-color)?\s*:\s*rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*([0-9.]+)\s*)?\)")


def readable_shading(markup: str) -> str:
    """``markup`` with every inline ``background[-color]: rgb[a](…)`` replaced by :func:`shaded_style` (the heat
    maps of the drill-down and the Spanish tab are drawn with translucent shades)."""
    def replace(match: re.Match) -> str:
        r, g, b, alpha = match.groups()
        return shaded_style((int(r), int(g), int(b)), float(alpha) if alpha is not None else 1.0)

    return _RGBA.sub(replace, markup)


def shaded_cells(markup: str) -> list[tuple[RGB, RGB]]:
    """(text, background) of every opaque shaded cell of ``markup`` (styled by :func:`readable_shading` or
    :func:`leaderboard_space.colours.cell_style`): what a test checks."""
    found = re.findall(r"background(?:-color)?: #([0-9a-f]{6}); color: #([0-9a-f]{6})", markup)
    as_rgb = lambda h: tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))
    return [(as_rgb(text), as_rgb(background)) for background, text in found]

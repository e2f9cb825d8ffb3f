"""Readable shaded cells in the Space: its fixed colours, and shading markup made opaque with readable text.

The contrast arithmetic (WCAG 2 luminance and ratio, opaque compositing, the black-or-white text choice) has one
home, :mod:`gecobench.contrast`, which the notebook heat map shares; it is re-exported here for the Space's
modules. This module adds the Space's own colours and the helpers that rewrite and read its markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gecobench.contrast import (
    AA_CONTRAST,
    BLACK,
    RGB,
    WHITE,
    composite,
    contrast_ratio,
    hex_colour,
    readable_text,
    relative_luminance,
)

__all__ = ["AA_CONTRAST", "BEST_CELL", "BLACK", "GROUND_TRUTH_HEADER", "GROUND_TRUTH_TEXT", "RGB", "WHITE",
           "composite", "contrast_ratio", "hex_colour", "readable_shading", "readable_text", "relative_luminance",
           "shaded_cells", "shaded_style"]

#: The Dataframe's "best in column" mark (light green) and the drill-down's ground-truth header (pale yellow).
BEST_CELL: RGB = (0xC7, 0xE9, 0xC0)
GROUND_TRUTH_HEADER: RGB = (0xFF, 0xE0, 0x8A)
GROUND_TRUTH_TEXT: RGB = (0x1A, 0x1A, 0x1A)  # the page's CSS sets it in both modes (page_assets.CSS)


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

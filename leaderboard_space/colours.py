"""Shaded cells with readable text: a colour scale blended on white, the text black or white by WCAG contrast.

Every shaded table cell of the Space (drill-down shares, Spanish bias) gets a solid background *and* an explicit
text colour from here, so it reads the same in light and dark mode, at ≥ 4.5:1 (WCAG AA) on every shade. The
contrast arithmetic has one home, :mod:`leaderboard_space.contrast`; this module names the scale's operations.
"""

from __future__ import annotations

from collections.abc import Sequence

from leaderboard_space.contrast import BLACK, WHITE, composite, contrast_ratio, hex_colour, readable_text

__all__ = ["BLACK", "GREY", "WHITE", "blend", "cell_style", "contrast_ratio", "css", "text_colour"]

GREY = (224, 224, 224)  # a category that is shown but not counted

#: black or white, whichever contrasts more with a background
text_colour = readable_text
css = hex_colour


def blend(colour: Sequence[int], fraction: float, base: Sequence[int] = WHITE) -> tuple[int, int, int]:
    """``colour`` at ``fraction`` (0 … 1, clipped) over ``base``: a solid colour, not a transparent one (a
    transparent shade would change with the page's theme)."""
    return composite(colour, fraction, base)


def cell_style(background: Sequence[int]) -> str:
    """``background`` and its readable text colour as an inline style."""
    return f"background: {css(background)}; color: {css(text_colour(background))}"

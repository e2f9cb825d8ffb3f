"""The word-attribution heat map: each word's share of a sentence's attribution mass, as an HTML table.

One row per explainer (and gender variant), the ground-truth words framed, every cell shaded on one colour scale
with readable text (:mod:`gecobench.contrast`). Pure functions, no Gradio: the notebook view of a result
(:class:`gecobench.api.SentenceView`) and the leaderboard Space's per-sentence drill-down draw the same table.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gecobench.contrast import composite, hex_colour, readable_text

__all__ = ["attribution_shares", "heatmap_html", "share_colours"]


def attribution_shares(attributions: Sequence[Any]) -> list[float | None]:
    """Each word's share of the sentence's absolute attribution mass (Σ = 1 over the defined words); None for an
    undefined score, all None when the sentence has no mass (nothing to share out)."""
    magnitudes = [abs(float(a)) if isinstance(a, (int, float)) and np.isfinite(a) else None for a in attributions]
    total = sum(m for m in magnitudes if m is not None)
    if not total > 0:
        return [None] * len(magnitudes)
    return [None if m is None else m / total for m in magnitudes]


# the colour scale of the shares: white (no mass) to a dark red (the largest share on the page)
_SCALE_LOW, _SCALE_HIGH = (255, 255, 255), (165, 15, 21)


def share_colours(fraction: float) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(background, text) of a cell at ``fraction`` (0 … 1) of the colour scale; the text is black or white,
    whichever contrasts more (at least 4.5:1 on every background of the scale)."""
    background = composite(_SCALE_HIGH, fraction, _SCALE_LOW)
    return background, readable_text(background)


def heatmap_html(rows: Sequence[Mapping[str, Any]], empty_text: str = "No sentence variant chosen (see the note "
                 "above the list).") -> str:
    """An HTML table, one row per explainer and gender variant (the variants of an explainer side by side, in
    adjacent rows): the explainer, the variant, the sentence's MA first, then each word with its share of the
    sentence's attribution mass, shaded on one colour scale for the whole table (legend below); ground-truth words
    underlined and framed (not by colour alone). Scrolls sideways for long sentences, the name cells stay."""
    if not rows:
        return f"<p>{html.escape(empty_text)}</p>"
    top = max((s for r in rows for s in r["shares"] if s is not None), default=0.0) or 1.0
    width = max(len(r["words"]) for r in rows)
    body = []
    for row in rows:
        ma = row["mass_accuracy"]
        cells = []
        for word, truth, share, raw in zip(row["words"], row["ground_truth"], row["shares"], row["attributions"]):
            background, text = share_colours(share / top if share is not None else 0.0)
            share_text = "–" if share is None else f"{100 * share:.0f}%"
            raw_text = "–" if not isinstance(raw, (int, float)) else f"{raw:.3g}"
            cells.append(
                f'<td class="{"gt" if truth else "w"}" style="background: {hex_colour(background)}; color: {hex_colour(text)}" '
                f'title="share {share_text}, raw score {raw_text}{", ground truth" if truth else ""}">'
                f'{html.escape(str(word))}<br><small>{share_text}</small></td>')
        cells += ["<td></td>"] * (width - len(row["words"]))
        chosen = " chosen" if row["chosen"] else ""
        body.append(f'<tr class="variant{chosen}"><th class="explainer">{html.escape(row["explainer"])}</th>'
                    f'<th class="group">{html.escape(row["variant"])}</th>'
                    f'<td class="ma">{f"{ma:.3f}" if ma is not None else "–"}</td>{"".join(cells)}</tr>')
    stops = ", ".join(f"{hex_colour(share_colours(f)[0])} {100 * f:.0f}%" for f in (0.0, 0.5, 1.0))
    return (
        '<div class="drill-scroll" style="overflow-x: auto; max-width: 100%">'
        '<style>.drill td, .drill th {padding: 4px 6px; border: 1px solid #ddd; font-size: 14px; text-align: center;'
        ' white-space: nowrap} .drill td.gt {text-decoration: underline; font-weight: bold; outline: 2px solid #000;'
        ' outline-offset: -3px}'
        ' .drill th.explainer {text-align: left; position: sticky; left: 0; z-index: 1;'
        ' background: var(--background-fill-primary, #fff)} .drill td.ma {font-weight: bold}'
        ' .drill tr.chosen th.group {text-decoration: underline}</style>'
        '<table class="drill"><thead><tr><th class="explainer">Explainer</th><th>Variant</th><th>MA</th>'
        f'<th colspan="{width}">Words: share of the sentence\'s attribution mass</th></tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
        f'<p><span style="display: inline-block; width: 160px; height: 12px; border: 1px solid #888; '
        f'background: linear-gradient(to right, {stops})"></span> 0% … {100 * top:.0f}% of a sentence\'s '
        'attribution mass (one scale for the table). Framed, underlined words: the ground truth (the gendered '
        'words). MA: the share of the sentence\'s attribution mass on the ground-truth words. Each explainer\'s '
        'female, male (and non-binary) variants are in adjacent rows; hover a word for its raw score.</p>'
    )

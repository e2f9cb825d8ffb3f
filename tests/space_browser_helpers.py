"""What the Space's browser tests share (tests/test_space_browser.py, tests/test_space_page_browser.py): the
marks that skip them without Chromium, the running Space and its page (from the maintainers' driver,
``scripts/maintainer/_space_browser.py``, also used for the docs' screenshots), and the page steps — open a page
and wait for its first view, open a tab, pick a dropdown option, read a table, check for error badges.

Every wait is for a condition in the page; the only fixed pauses are the driver's (after a tab switch, for
plots to paint), as before these helpers were shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from _space_browser import CHROMIUM, chromium_page, running_space, wait_until_idle

__all__ = ["BROWSER_MARKS", "CHROMIUM", "RANKING_DRAWN", "URL_WRITTEN", "DRILL_DRAWN", "chromium_page", "choose",
           "no_error_badges", "open_details", "open_page", "open_tab", "running_space", "scroll_fully_right",
           "table_rows", "wait_until_idle"]

#: the marks of every browser test module: ``browser``, and skipped where the system's Chromium is missing
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)"),
]

#: the ranking has drawn: its notes have arrived and its body has rows
RANKING_DRAWN = ("() => document.querySelector('#ranking-notes')?.innerText.includes('Downloads')"
                 " && document.querySelectorAll('#ranking-table .virtual-row').length > 0")
#: the view is in the query string: the last step of a first view's chain
URL_WRITTEN = "() => new URLSearchParams(location.search).has('regime')"
#: the drill-down has drawn (a page opened on its tab: the hidden Ranking tab is not drawn)
DRILL_DRAWN = "() => document.querySelector('#drill-heat table .explainer')"


def open_page(page, url: str, drawn: str = RANKING_DRAWN) -> None:
    """Go to ``url`` and wait until ``drawn`` holds and the first view's chain has written the URL."""
    page.goto(url, timeout=60_000)
    page.wait_for_function(drawn, timeout=120_000)
    page.wait_for_function(URL_WRITTEN, timeout=60_000)


def no_error_badges(page) -> None:
    """Gradio marks a failed event with an 'Error' status on the component and a toast; neither may appear."""
    badges = page.locator(".error:visible, .toast-body.error:visible, [data-testid='toast-body']:visible")
    assert badges.count() == 0, badges.first.inner_text()


def open_tab(page, name: str) -> None:
    """Click the tab ``name`` and wait until no event is pending."""
    page.get_by_role("tab", name=name, exact=True).click()
    page.wait_for_timeout(300)
    wait_until_idle(page)


def open_details(page) -> None:
    """Open the header's accordion (results shown, sentences scored, details) unless it is open."""
    if not page.locator("#source").is_visible():
        page.locator("#details").get_by_text("Results shown, sentences scored").first.click()
        page.locator("#source").wait_for(state="visible", timeout=10_000)


def choose(page, elem_id: str, option: str) -> None:
    """Pick ``option`` in the Gradio dropdown ``#elem_id``."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(300)


def table_rows(page, elem_id: str) -> list[list[str]]:
    """Body rows of a Gradio dataframe (a virtual table: rows are ``[role=row]`` elements with grid cells)."""
    return page.eval_on_selector_all(
        f"#{elem_id} [role=row]",
        "rows => rows.map(r => Array.from(r.querySelectorAll('[role=gridcell]')).map(c => c.innerText.trim()))"
        ".filter(cells => cells.length > 0)")


def scroll_fully_right(page, viewport: str) -> None:
    """Scroll the element ``viewport`` (a selector) fully sideways and wait until it is there."""
    page.evaluate("v => { const e = document.querySelector(v); e.scrollLeft = e.scrollWidth; }", viewport)
    page.wait_for_function(
        "v => { const e = document.querySelector(v); return e.scrollLeft > 0"
        " && e.scrollLeft + e.clientWidth >= e.scrollWidth - 1; }", arg=viewport, timeout=10_000)

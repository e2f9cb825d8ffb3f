"""The Space's first screen in headless Chromium at 1024×768 on the committed reference results: the ranking's top
ten rows in the first viewport, name columns that stay in view when a table is scrolled sideways, a URL that
restores its view in a new page, a definition on every header, readable shaded cells in dark mode.

Every wait is for the state asserted (a condition in the page), never a fixed sleep."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from space_browser_helpers import (
    BROWSER_MARKS,
    DRILL_DRAWN,
    RANKING_DRAWN,
    chromium_page,
    open_page,
    running_space,
    scroll_fully_right,
)

pytestmark = [
    *BROWSER_MARKS,
    pytest.mark.skipif(not (REPO_ROOT / "reference" / "store" / "explainer_score").is_dir(),
                       reason="the committed reference store is missing"),
]
WIDTH, HEIGHT = 1024, 768


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    root = tmp_path_factory.mktemp("page")
    with running_space(str(root / "results"), str(root / "requests"),
                       reference=str(REPO_ROOT / "reference" / "store")) as url:
        yield url


@pytest.fixture
def page(space):
    with chromium_page(WIDTH, HEIGHT) as page:
        yield page


def _ranking_rows(page) -> list[dict]:
    """Each body row's text and the box of its name cell (the second) and its Rank cell, in page coordinates."""
    return page.eval_on_selector_all(
        "#ranking-table .virtual-row",
        "rows => rows.map(r => { const cells = r.querySelectorAll('[role=gridcell]');"
        " const box = c => { const b = c.getBoundingClientRect(); return {left: b.left, right: b.right, top: b.top,"
        " bottom: b.bottom}; };"
        " return {rank: cells[0].innerText.trim(), name: cells[1].innerText.trim(), rankBox: box(cells[0]),"
        " nameBox: box(cells[1])}; })")


def test_the_top_ten_ranking_rows_are_in_the_first_viewport(space, page):
    open_page(page, space)
    assert page.evaluate("() => window.scrollY") == 0
    rows = sorted(_ranking_rows(page), key=lambda r: r["rankBox"]["top"])
    assert len(rows) >= 10
    # the real explainers ranked 1, 2, …; the baselines after them, ranked apart (no rank: "–")
    ranks = [r["rank"] for r in rows[:10]]
    ranked = [rank for rank in ranks if rank.strip() not in ("", "–")]
    assert ranked == [str(i) for i in range(1, len(ranked) + 1)] and len(ranked) >= 8, ranks
    assert all(rank.strip() in ("", "–") for rank in ranks[len(ranked):]), ranks
    for row in rows[:10]:
        assert 0 <= row["nameBox"]["top"] and row["nameBox"]["bottom"] <= HEIGHT, row
    # the default model has a value in every column: no column of the ranking is "–" in every row
    notes = page.locator("#ranking-notes").inner_text()
    assert "is empty for this model" not in notes
    regime = page.locator("#rank-regime input").input_value()
    assert regime not in ("OLA", "ZS"), regime


def test_a_model_with_an_empty_column_says_why(space, page):
    open_page(page, space + "?regime=OLA")
    page.wait_for_function("() => document.querySelector('#ranking-notes')?.innerText.includes('is empty')",
                           timeout=60_000)
    notes = page.locator("#ranking-notes").inner_text()
    assert "log RMA is empty for this model" in notes and "from scratch" in notes


def test_the_name_cells_stay_in_view_after_scrolling_the_ranking_fully_sideways(space, page):
    open_page(page, space)
    viewport = "#ranking-table .virtual-table-viewport"
    before = {r["name"]: r["rank"] for r in _ranking_rows(page)}  # by name: baselines share the rank "–"
    scroll_fully_right(page, viewport)
    frame = page.locator(viewport).bounding_box()
    # the sticky offsets are applied in the next frame: wait until the name cells sit inside the viewport
    page.wait_for_function(
        "v => { const f = document.querySelector(v).getBoundingClientRect();"
        " return Array.from(document.querySelectorAll('#ranking-table .virtual-row')).every(r => {"
        " const b = r.querySelectorAll('[role=gridcell]')[1].getBoundingClientRect();"
        " return b.left >= f.left - 1 && b.right <= f.right + 1; }); }", arg=viewport, timeout=10_000)
    rows = _ranking_rows(page)
    assert len(rows) == len(before) and {r["name"]: r["rank"] for r in rows} == before
    for row in rows:
        for box in (row["rankBox"], row["nameBox"]):
            assert box["left"] >= frame["x"] - 1 and box["right"] <= frame["x"] + frame["width"] + 1, row
        # and nothing is drawn over the name: the cell at its centre is the name cell itself
        x = (row["nameBox"]["left"] + row["nameBox"]["right"]) / 2
        y = (row["nameBox"]["top"] + row["nameBox"]["bottom"]) / 2
        if 0 <= y <= HEIGHT:
            hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('[role=gridcell]')?.innerText",
                                [x, y])
            assert hit is not None and hit.strip() == row["name"], (row, hit)


def test_the_drill_down_explainer_column_stays_in_view(space, page):
    open_page(page, space + "?tab=drilldown", DRILL_DRAWN)
    page.locator("#drill-heat table").wait_for(timeout=60_000)
    scroll_fully_right(page, "#drill-heat .drill-scroll")
    frame = page.locator("#drill-heat .drill-scroll").bounding_box()
    # the explainer's name is pinned (the variant column beside it scrolls with the words)
    boxes = page.eval_on_selector_all("#drill-heat tbody th.explainer", "cells => cells.map(c => { const b = "
                                      "c.getBoundingClientRect(); return [b.left, b.right]; })")
    assert boxes
    for left, right in boxes:
        assert left >= frame["x"] - 1 and right <= frame["x"] + frame["width"] + 1


def _open_column_chooser(page) -> None:
    """Open the closed accordion below the ranking that holds the column chooser."""
    page.locator("#rank-columns-box").get_by_text("Columns shown").first.click()
    page.locator("#rank-columns input[type=checkbox]").first.wait_for(state="visible", timeout=30_000)


def _ticked_columns(page) -> list[str]:
    return page.eval_on_selector_all("#rank-columns input[type=checkbox]",
                                     "boxes => boxes.filter(b => b.checked).map(b => b.name)")


def _ranking_headers(page) -> list[str]:
    return page.eval_on_selector_all("#ranking-table thead th",
                                     "cells => cells.map(c => (c.querySelector('.header') || c).innerText.trim())")


COLUMNS_IN_URL = "v => new URLSearchParams(location.search).get('columns') === v"


def test_a_url_copied_from_one_view_restores_that_view_in_a_new_page(space, page):
    from leaderboard_space.page_assets import columns_to_query
    from leaderboard_space.ranking import COLUMN_GROUPS, DEFAULT_COLUMN_GROUPS

    open_page(page, space + "?config=nonbinary_subject&regime=CEf")
    assert "columns" not in page.evaluate("() => location.search")  # the default columns: not in the URL
    # the ranking's columns: provenance on, properties off (the chooser's own order is kept in the URL)
    chosen = [group for group in COLUMN_GROUPS if group != "Properties"]
    assert chosen != DEFAULT_COLUMN_GROUPS
    _open_column_chooser(page)
    page.get_by_role("checkbox", name="Provenance", exact=True).check()
    page.wait_for_function(COLUMNS_IN_URL, arg=columns_to_query(COLUMN_GROUPS), timeout=60_000)
    page.get_by_role("checkbox", name="Properties", exact=True).uncheck()
    page.wait_for_function(COLUMNS_IN_URL, arg=columns_to_query(chosen), timeout=60_000)
    assert columns_to_query(chosen) == "faithfulness,gaps,provenance"  # the page script writes the Python rule's
    page.get_by_role("tab", name="Sentence drill-down", exact=True).click()
    page.locator("#drill-heat table").wait_for(state="visible", timeout=120_000)
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === 'drilldown'"
                           " && new URLSearchParams(location.search).get('sentence')", timeout=60_000)
    wanted = {"config": "nonbinary_subject", "regime": "CEf"}
    shown = {"config": page.locator("#rank-config input").input_value(),
             "regime": page.locator("#rank-regime input").input_value()}
    assert shown == wanted
    copied = page.url
    assert f"columns={columns_to_query(chosen)}" in copied, copied
    sentence = page.locator("#drill-sentence input").input_value()
    context = page.context.browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})  # nothing shared
    try:
        fresh = context.new_page()
        fresh.goto(copied, timeout=60_000)
        fresh.wait_for_function(
            "s => document.querySelector('#drill-sentence input')?.value === s"
            " && document.querySelector('#tab-drilldown-button')?.getAttribute('aria-selected') === 'true'",
            arg=sentence, timeout=120_000)
        assert fresh.locator("#rank-config input").input_value() == wanted["config"]
        assert fresh.locator("#rank-regime input").input_value() == wanted["regime"]
        fresh.locator("#drill-heat table").wait_for(state="visible", timeout=120_000)
        # the ranking behind it shows the copied columns: provenance's, none of the properties'
        fresh.get_by_role("tab", name="Ranking", exact=True).click()
        fresh.wait_for_function(RANKING_DRAWN, timeout=120_000)
        headers = _ranking_headers(fresh)
        assert {"Record", "Protocol", "log RMA", "Gap m−nb"} <= set(headers), headers
        assert not set(COLUMN_GROUPS["Properties"]) & set(headers), headers
        _open_column_chooser(fresh)
        assert _ticked_columns(fresh) == chosen
    finally:
        context.close()


def _header_definitions(page, selector: str) -> dict[str, str | None]:
    return dict(page.eval_on_selector_all(
        f"{selector} thead th",
        "cells => cells.map(c => [(c.querySelector('.header') || c).innerText.trim(), c.dataset.definition || null])"))


def test_every_header_has_a_definition(space, page):
    open_page(page, space)
    page.wait_for_function("() => document.querySelector('#ranking-table thead th[data-definition]')",
                           timeout=10_000)
    headers = _header_definitions(page, "#ranking-table")
    # the default column groups (leaderboard_space.ranking.DEFAULT_COLUMN_GROUPS) hide provenance; every column's
    # definition, hidden or not, is checked without a browser (tests/test_space_page.py)
    assert len(headers) > 20
    assert not [h for h, d in headers.items() if not d], headers
    title = page.locator("#ranking-table thead th").nth(0).get_attribute("title")
    assert title.startswith("Rank — ")
    page.get_by_role("tab", name="All models", exact=True).click()
    page.wait_for_function("() => document.querySelector('#explainer-table thead th[data-definition]')"
                           " && document.querySelectorAll('#explainer-table .virtual-row').length > 0",
                           timeout=60_000)
    headers = _header_definitions(page, "#explainer-table")
    assert {"MA", "vs best", "Differs by"} <= set(headers)
    assert not [h for h, d in headers.items() if not d], headers


def test_shaded_cells_are_readable_in_dark_mode(space, page):
    """Computed in the page: each shaded cell's text against its background, WCAG 2 contrast ≥ 4.5."""
    open_page(page, space + "?__theme=dark&tab=drilldown", DRILL_DRAWN)
    page.locator("#drill-heat table").wait_for(timeout=60_000)
    assert page.evaluate("() => document.body.classList.contains('dark')")
    ratios = page.eval_on_selector_all(
        "#drill-heat td[style*='background'], #drill-heat th.gt",
        """cells => cells.map(c => {
             const rgb = s => s.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
             const lum = v => { const [r, g, b] = v.map(x => x / 255).map(x => x <= 0.04045 ? x / 12.92
                                 : Math.pow((x + 0.055) / 1.055, 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
             const style = getComputedStyle(c);
             const bg = style.backgroundColor.startsWith('rgba(0, 0, 0, 0)') ? 'rgb(255,255,255)' : style.backgroundColor;
             const [a, b] = [lum(rgb(style.color)), lum(rgb(bg))].sort((x, y) => y - x);
             return (a + 0.05) / (b + 0.05); })""")
    assert ratios and min(ratios) >= 4.5, min(ratios)


def test_every_visible_input_on_the_ranking_tab_has_its_label_as_accessible_name(space, page):
    """Each visible input/select/textarea of the Ranking tab is found by its role and its visible label (the
    block's label, or a search box's placeholder words): what a screen reader announces is what is shown."""
    open_page(page, space)
    page.wait_for_function("() => document.querySelector('#ranking-table input.search-input[aria-label]')",
                           timeout=10_000)
    # the column chooser sits in a closed accordion below the table: open it so its options are checked too
    _open_column_chooser(page)
    # the checkbox group itself is named by its visible label (Gradio draws it as a fieldset without a legend)
    visible = page.locator("#rank-columns [data-testid=block-info]").inner_text().strip()
    assert visible == "Columns shown"
    page.wait_for_function("() => document.querySelector('#rank-columns')?.hasAttribute('aria-labelledby')",
                           timeout=10_000)
    group = page.get_by_role("group", name=visible, exact=True)
    assert group.and_(page.locator("#rank-columns")).count() == 1 and group.count() == 1
    controls = page.evaluate(
        """() => Array.from(document.querySelectorAll('#tab-ranking input, #tab-ranking select, #tab-ranking textarea'))
             .filter(e => e.offsetParent !== null && e.type !== 'hidden')
             .map((e, i) => { e.dataset.a11yProbe = String(i);
               const block = e.closest('.block');
               const info = block && block.querySelector('[data-testid=block-info]');
               const own = (e.type === 'checkbox' || e.type === 'radio') && e.labels && e.labels.length;
               const label = own ? e.labels[0].innerText.trim() : info ? info.innerText.trim()
                 : (e.getAttribute('placeholder') || '').replace(/(\\.\\.\\.|\\u2026)$/, '').trim();
               return {probe: String(i), label, type: e.type, tag: e.tagName}; })""")
    assert len(controls) >= 6, controls  # config, base, regime, seed, view, the table's filter
    labels = [c["label"] for c in controls]
    assert {"GECO config", "Base model", "Model regime", "Model seed", "View", "Filter", "Gaps"} <= set(labels), labels
    for control in controls:
        assert control["label"], control
        # a checkbox or radio option is named by its own label (a group's options: "Columns shown" → Gaps, ...)
        role = control["type"] if control["type"] in ("checkbox", "radio") else "combobox" if page.locator(
            f"[data-a11y-probe='{control['probe']}']").get_attribute("role") == "combobox" \
            or control["tag"] == "SELECT" else "textbox"
        named = page.get_by_role(role, name=control["label"], exact=True)
        probe = page.locator(f"[data-a11y-probe='{control['probe']}']")
        assert named.and_(probe).count() == 1, (control, role)


def _ranking_ma(page) -> list[float]:
    """The MA cells of the drawn ranking rows, top to bottom."""
    rows = page.eval_on_selector_all(
        "#ranking-table .virtual-row",
        "rows => rows.map(r => [r.getBoundingClientRect().top, r.querySelectorAll('[role=gridcell]')[2].innerText])")
    return [float(text) for _, text in sorted(rows)]


def test_clicking_the_ma_header_sorts_the_ranking_by_ma(space, page):
    open_page(page, space)
    header = page.locator("#ranking-table thead th").nth(2)
    assert header.locator(".header").inner_text().strip() == "MA"
    first = _ranking_ma(page)
    assert len(first) >= 5 and len(set(first)) > 1
    is_sorted = ("desc => { const v = Array.from(document.querySelectorAll('#ranking-table .virtual-row'))"
                 ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
                 ".map(r => parseFloat(r.querySelectorAll('[role=gridcell]')[2].innerText));"
                 " return v.length > 1 && v.every((x, i) => i === 0 || (desc ? v[i - 1] >= x : v[i - 1] <= x))"
                 " && v[0] !== v[v.length - 1]; }")
    header.locator(".header").click()
    page.wait_for_function("() => document.querySelector('#ranking-table')?.dataset.sortDirection === 'desc'",
                           timeout=10_000)
    page.wait_for_function(is_sorted, arg=True, timeout=10_000)
    descending = _ranking_ma(page)
    assert descending == sorted(descending, reverse=True)
    header.locator(".header").click()  # the second click turns the order round
    page.wait_for_function(is_sorted, arg=False, timeout=10_000)
    ascending = _ranking_ma(page)
    assert ascending == sorted(ascending) and ascending[0] <= min(first)


def test_the_all_models_explainer_column_stays_in_view_after_a_full_sideways_scroll(space, page):
    open_page(page, space)
    page.get_by_role("tab", name="All models", exact=True).click()
    rows = "#explainer-table .virtual-row"
    page.wait_for_function(f"() => document.querySelectorAll('{rows}').length > 0", timeout=60_000)
    viewport = "#explainer-table .virtual-table-viewport"
    names = page.eval_on_selector_all(rows, "rows => rows.map(r => r.querySelector('[role=gridcell]').innerText.trim())")
    assert names and all(names), names
    scroll_fully_right(page, viewport)
    page.wait_for_function(
        "([v, rows]) => { const f = document.querySelector(v).getBoundingClientRect();"
        " return Array.from(document.querySelectorAll(rows)).every(r => {"
        " const b = r.querySelector('[role=gridcell]').getBoundingClientRect();"
        " return b.left >= f.left - 1 && b.right <= f.right + 1; }); }", arg=[viewport, rows], timeout=10_000)
    frame = page.locator(viewport).bounding_box()
    cells = page.eval_on_selector_all(
        rows, "rows => rows.map(r => { const c = r.querySelector('[role=gridcell]'); const b = c.getBoundingClientRect();"
              " return [c.innerText.trim(), b.left, b.right, b.top, b.bottom]; })")
    assert [c[0] for c in cells] == names
    for name, left, right, top, bottom in cells:
        assert left >= frame["x"] - 1 and right <= frame["x"] + frame["width"] + 1, name
        if 0 <= top and bottom <= HEIGHT:  # nothing drawn over the name (the second column scrolls under it)
            hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('[role=gridcell]')?.innerText",
                                [(left + right) / 2, (top + bottom) / 2])
            assert hit is not None and hit.strip() == name, (name, hit)

"""What the Space's page carries besides its components: the style sheet and a small script.

Gradio 6 takes ``css`` and ``head`` at ``launch()``, not in ``gr.Blocks``: :func:`launch_options` gives both, and
every launcher (``app.main``, ``scripts/maintainer/_space_browser.running_space``) passes them.

* **Pinned name columns.** Gradio's Dataframe (6.x) draws a virtual table (``.virtual-table-viewport`` scrolls,
  header and body are separate ``<table>``\\ s in it) and its ``pinned_columns`` does not keep cells in view when
  the viewport scrolls sideways. Tables with the class ``pin-names`` get ``position: sticky`` on their first two
  cells of every row; the second cell's ``left`` is the first cell's width, measured by the script (column widths
  follow the data); with the class ``pin-one`` too only the first cell (All models: Explainer). The drill-down's
  explainer column and the Spanish table's model column are pinned the same way.
* **Definitions on the headers.** The script sets each header cell's ``title`` to its definition from
  :mod:`leaderboard_space.glossary` (a header without one keeps its name as title).
* **Accessible names.** Gradio 6 gives its Dropdown inputs an ``aria-label`` equal to the label, but the
  Dataframe's search box has only a placeholder ("Filter...") and a ``title`` that says something else; the script
  gives it the placeholder's words as its accessible name, so what is read out is what is shown.
* **Header-click sorting.** Gradio 6's Dataframe sorts only from the header's menu (⋮ → Sort ascending/descending);
  in tables with the class ``click-sort`` a click on a header cell chooses that menu item: the first click on a
  column sorts it descending (every "higher is better" column's best first), the next click ascending, and so on.
  The sorting itself stays Gradio's (the table's ``sort`` state), the script only presses its buttons.
* **Accessible group names.** Gradio 6 draws a CheckboxGroup or Radio as a ``<fieldset>`` (a group) whose label is
  a ``<span>``, not a ``<legend>``, so the group has no accessible name; the script points the fieldset's
  ``aria-labelledby`` at that label, so the group is announced by the words shown above it ("Columns shown").
* **The view in the URL.** :data:`URL_JS` is the client function the app's events run to write the view into the
  query string (``history.replaceState``); the page load reads it back (``app.view_from_url``). The ranking's
  chosen column groups go in as ``columns=gaps,provenance`` (:func:`columns_to_query`, the same rule in the
  script), and only when they differ from the default; :func:`columns_from_query` reads them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from leaderboard_space.glossary import all_definitions
from leaderboard_space.ranking import COLUMN_GROUPS, DEFAULT_COLUMN_GROUPS

#: the query-string keys of a view, in the order of the components the app passes to :data:`URL_JS`
URL_KEYS: tuple[str, ...] = ("source", "filter", "config", "base", "regime", "seed", "view", "search", "sentence",
                             "columns")
#: ``columns=`` of a view whose column chooser has every group unticked (an empty value would read as "absent")
NO_COLUMNS = "none"


def column_token(group: str) -> str:
    """A column group's word in the URL: its name in lower case ("Provenance" → ``provenance``)."""
    return group.lower().replace(" ", "_")


def columns_to_query(groups: Iterable[str]) -> str | None:
    """The ``columns=`` value of the chosen column groups (comma-separated words in the chooser's order), or None
    when they are the default: a URL names the columns only when they differ from a first visit's."""
    chosen = set(groups)
    ordered = [group for group in COLUMN_GROUPS if group in chosen]
    if ordered == [group for group in COLUMN_GROUPS if group in DEFAULT_COLUMN_GROUPS]:
        return None
    return ",".join(column_token(group) for group in ordered) if ordered else NO_COLUMNS


def columns_from_query(value: str | None) -> list[str] | None:
    """The column groups a ``columns=`` value names, in the chooser's order; None (the default columns) when it is
    absent or names no known group. Unknown words are dropped (a URL from a page with other groups still opens);
    commas, spaces or plus signs separate the words, in any case."""
    if value is None:
        return None
    words = {word for word in value.replace("+", ",").replace(" ", ",").lower().split(",") if word}
    if words == {NO_COLUMNS}:
        return []
    chosen = [group for group in COLUMN_GROUPS if column_token(group) in words]
    return chosen or None

CSS = """
#masthead {gap: 0.75rem; align-items: baseline; flex-wrap: nowrap}
#masthead > * {min-width: 0 !important}
#page-title-block {flex: 0 0 auto !important; width: auto !important}
#page-title {font-size: 1.35rem; font-weight: 700; margin: 0; white-space: nowrap}
#provenance {flex: 1 1 auto !important}
#provenance p {margin: 0; font-size: 0.85rem; line-height: 1.3}
#details {padding-top: 0.25rem; padding-bottom: 0.25rem}
#rank-controls {gap: 0.5rem}
#rank-controls > * {min-width: 120px !important}
#ranking-table .header-row {min-height: 0}

/* name columns that stay in view (see the module docstring): header cells are <th> of the header table, body
   cells <div role=gridcell> of absolutely placed <div role=row> rows */
.pin-names thead tr > th:nth-child(-n+2), .pin-names .virtual-row > [role=gridcell]:nth-child(-n+2) {
  position: sticky !important; z-index: 3; background: var(--table-even-background-fill, var(--background-fill-primary));
}
.pin-names .virtual-row.row-odd > [role=gridcell]:nth-child(-n+2) {
  background: var(--table-odd-background-fill, var(--background-fill-primary));
}
.pin-names thead tr > th:nth-child(-n+2) {z-index: 4}
.pin-names thead tr > th:nth-child(1), .pin-names .virtual-row > [role=gridcell]:nth-child(1) {left: 0}
.pin-names thead tr > th:nth-child(2), .pin-names .virtual-row > [role=gridcell]:nth-child(2) {
  left: var(--pin-left-2, 0px); box-shadow: 2px 0 0 var(--border-color-primary);
}
/* pin-one: the name column only (All models: its second column, Kind, is no name) */
.pin-names.pin-one thead tr > th:nth-child(2), .pin-names.pin-one .virtual-row > [role=gridcell]:nth-child(2) {
  position: static !important; box-shadow: none;
}
.pin-names.pin-one thead tr > th:nth-child(1), .pin-names.pin-one .virtual-row > [role=gridcell]:nth-child(1) {
  box-shadow: 2px 0 0 var(--border-color-primary);
}
#drill-heat .drill th.explainer, #drill-heat .drill td.ma {
  position: sticky; z-index: 2; background: var(--background-fill-primary);
}
#drill-heat .drill th.explainer {left: 0}
#drill-heat .drill td.ma, #drill-heat .drill thead th:last-child {position: sticky; right: 0; z-index: 2;
  background: var(--background-fill-primary)}
#bias-heat .gecobench-heat tr > th:first-child {position: sticky; left: 0; z-index: 2;
  background: var(--background-fill-primary)}

/* shaded cells carry their own readable text colour (leaderboard_space.contrast); the ground-truth words of
   the drill-down's header are dark on their pale yellow in dark mode too */
#drill-heat .drill th.gt {color: #1a1a1a !important}
"""

_SCRIPT = """
<script>
(() => {
  const DEFINITIONS = __DEFINITIONS__;
  function headerText(cell) {
    const span = cell.querySelector('.header') || cell;
    return (span.innerText || span.textContent || '').replace(/[\\u2191\\u2193\\u22ee]/g, '').trim();
  }
  function defineHeaders(root) {
    root.querySelectorAll('th').forEach(cell => {
      const text = headerText(cell);
      const definition = DEFINITIONS[text];
      if (definition && cell.dataset.defined !== text) {
        cell.title = text + ' — ' + definition;
        cell.dataset.defined = text;
        cell.dataset.definition = definition;
      }
    });
  }
  function pinOffsets(root) {
    root.querySelectorAll('.pin-names').forEach(block => {
      const first = block.querySelector('thead tr > th:nth-child(1)') || block.querySelector('.virtual-row > [role=gridcell]');
      if (!first) return;
      const width = first.getBoundingClientRect().width + 'px';
      if (block.style.getPropertyValue('--pin-left-2') !== width) block.style.setProperty('--pin-left-2', width);
    });
  }
  function nameSearchBoxes(root) {
    root.querySelectorAll('input.search-input:not([aria-label])').forEach(box => {
      const words = (box.getAttribute('placeholder') || '').replace(/(\\.\\.\\.|\\u2026)$/, '').trim();
      if (words) box.setAttribute('aria-label', words);
    });
  }
  function nameGroups(root) {
    root.querySelectorAll('fieldset.block:not([aria-labelledby]):not([aria-label])').forEach(group => {
      const label = group.querySelector(':scope > [data-testid=block-info], :scope > * > [data-testid=block-info]');
      if (!label || !(label.textContent || '').trim()) return;
      if (!label.id) label.id = (group.id || ('group-' + (++groupCount))) + '-label';
      group.setAttribute('aria-labelledby', label.id);
    });
  }
  let groupCount = 0;
  function menuItem(text) {
    return Array.from(document.querySelectorAll('button, [role=menuitem]'))
      .find(item => item.offsetParent !== null && (item.innerText || '').trim() === text);
  }
  document.addEventListener('click', event => {
    const cell = event.target.closest ? event.target.closest('.click-sort thead th') : null;
    if (!cell || event.target.closest('button')) return;
    const menuButton = cell.querySelector('button.cell-menu-button');
    const block = cell.closest('.click-sort');
    if (!menuButton || !block) return;
    const column = cell.getAttribute('data-heading') || String(cell.cellIndex);
    const wanted = (block.dataset.sortColumn === column && block.dataset.sortDirection === 'desc') ? 'asc' : 'desc';
    // after Gradio's own handling of this click (it stops the event and closes open menus): open the header's
    // menu, then press its sort item once the menu is drawn
    setTimeout(() => {
      menuButton.click();
      requestAnimationFrame(() => {
        const item = menuItem(wanted === 'desc' ? 'Sort descending' : 'Sort ascending');
        if (!item) return;
        item.click();
        block.dataset.sortColumn = column;
        block.dataset.sortDirection = wanted;
      });
    }, 0);
  }, true);  // capture: the header cell stops the click's propagation
  let pending = false;
  function update() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false; defineHeaders(document); pinOffsets(document); nameSearchBoxes(document);
      nameGroups(document);
    });
  }
  new MutationObserver(update).observe(document.documentElement, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', update);
})();
</script>
"""

#: The client half of "the view in the URL": given the view's values (in :data:`URL_KEYS` order), the open tab
#: from the page, write them to the query string without a reload. Returns nothing (a js-only event).
URL_JS = """
(...values) => {
  const keys = __KEYS__;
  const columns = __COLUMNS__;
  // the chosen column groups as page_assets.columns_to_query writes them: nothing when they are the default
  const columnsValue = chosen => {
    const picked = columns.order.filter(group => (chosen || []).includes(group));
    if (picked.join('\\n') === columns.order.filter(g => columns.defaults.includes(g)).join('\\n')) return null;
    return picked.length ? picked.map(group => columns.tokens[group]).join(',') : columns.none;
  };
  const params = new URLSearchParams();
  const tab = document.querySelector('#tabs button[role=tab][aria-selected=true]');
  const tabId = tab && tab.id ? tab.id.replace(/^tab-/, '').replace(/-button$/, '') : '';
  if (tabId) params.set('tab', tabId);
  keys.forEach((key, i) => {
    const value = key === 'columns' ? columnsValue(values[i]) : values[i];
    if (value !== null && value !== undefined && value !== '' && !(Array.isArray(value))) params.set(key, value);
  });
  // commas are plain characters of a query (RFC 3986): unescaped, "columns=gaps,provenance" stays readable
  const query = params.toString().replace(/%2C/gi, ',');
  history.replaceState(history.state, '', query ? ('?' + query) : window.location.pathname);
  return [];
}
""".replace("__KEYS__", json.dumps(list(URL_KEYS))).replace("__COLUMNS__", json.dumps({
    "order": list(COLUMN_GROUPS), "defaults": list(DEFAULT_COLUMN_GROUPS),
    "tokens": {group: column_token(group) for group in COLUMN_GROUPS}, "none": NO_COLUMNS}))


def head_html() -> str:
    """The ``<head>`` addition: the tooltip and pinned-column script, with the glossary's definitions."""
    return _SCRIPT.replace("__DEFINITIONS__", json.dumps(all_definitions(), ensure_ascii=False))


def launch_options() -> dict[str, str]:
    """The keyword arguments every ``demo.launch`` of the Space passes: the style sheet and the head script."""
    return {"css": CSS, "head": head_html()}

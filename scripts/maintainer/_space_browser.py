"""Drive the running Space in headless Chromium (playwright): used by the browser tests (through
``tests/space_browser_helpers.py``) and by ``scripts/maintainer/screenshot_space.py``. Never downloads a browser:
it uses the system's Chromium. A maintainers' helper, not part of the package."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("GECOBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def free_port() -> int:
    """A free TCP port on localhost."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fill_sample_store(root: str | Path, n_explainer_records: int | None = None) -> int:
    """Write synthetic records (see :mod:`_sample_records`) into a local store; return the count."""
    from _sample_records import sample_records

    from gecobench.store import LocalStore

    store = LocalStore(root)
    records = sample_records(n_explainer_records)
    for record in records:
        if not store.exists(record["record_type"], record["record_id"]):
            store.append(record)
    return len(records)


@contextmanager
def running_space(results: str, requests: str | None = None, reference: str | None = None,
                  show_reference: bool = True) -> Iterator[str]:
    """Launch the Space in this process on a free port; yield its URL; close it afterwards. ``reference`` and
    ``show_reference`` as in :func:`leaderboard_space.app.build_app` (tests of one store hide the reference)."""
    from leaderboard_space.app import build_app
    from leaderboard_space.page_assets import launch_options

    demo = build_app(results, requests, reference_location=reference, show_reference=show_reference)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@contextmanager
def chromium_page(width: int = 1400, height: int = 1000):
    """A playwright page in the system's headless Chromium."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            browser.close()


def table_text(page) -> str:
    """The visible text of the Explainers table."""
    return page.locator("#explainer-table").inner_text()


def wait_for_table(page, contains: str = "MA", timeout_ms: int = 60_000) -> None:
    """Wait until the Explainers table's text contains ``contains`` (default: its MA header has arrived)."""
    page.wait_for_function(
        "needle => { const t = document.querySelector('#explainer-table'); return t && t.innerText.includes(needle); }",
        arg=contains, timeout=timeout_ms,
    )


def wait_until_idle(page, timeout_ms: int = 60_000) -> None:
    """Wait until no Gradio event is pending (no progress overlay), then a moment for plots to paint."""
    page.wait_for_function(
        "() => !Array.from(document.querySelectorAll('.eta-bar, .progress-text, .meta-text, .meta-text-center'))"
        ".some(e => e.offsetParent !== null)",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(500)


TAB_NAMES = ("Ranking", "Plots", "Sentence drill-down", "All models", "Dataset", "Spanish model bias", "Submit",
             "About")


def wait_for_ranking(page, timeout_ms: int = 60_000) -> None:
    """Wait until the Ranking tab has drawn its first view (its notes arrive with the table)."""
    page.wait_for_function(
        "() => { const n = document.querySelector('#ranking-notes'); return n && n.innerText.trim().length > 0; }",
        timeout=timeout_ms)


def screenshot_tabs(url: str, out_dir: str | Path, tabs: tuple[str, ...] = TAB_NAMES, prefix: str = "space",
                    timeout_ms: int = 60_000) -> list[Path]:
    """Open ``url`` and save a full-page PNG of each tab as ``<out_dir>/<prefix>-<tab>.png``; return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with chromium_page() as page:
        page.goto(url, timeout=timeout_ms)
        wait_for_ranking(page, timeout_ms)
        wait_until_idle(page, timeout_ms)
        for tab in tabs:
            page.get_by_role("tab", name=tab, exact=True).click()
            page.wait_for_timeout(500)
            wait_until_idle(page, timeout_ms)
            path = out_dir / f"{prefix}-{tab.split()[0].lower()}.png"
            page.screenshot(path=str(path), full_page=True)
            written.append(path)
    return written


def screenshot(url: str, path: str | Path, timeout_ms: int = 60_000) -> Path:
    """Open ``url``, wait for the Ranking tab's first view, save a full-page PNG to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with chromium_page() as page:
        page.goto(url, timeout=timeout_ms)
        wait_for_ranking(page, timeout_ms)
        wait_until_idle(page, timeout_ms)
        page.screenshot(path=str(path), full_page=True)
    return path


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "TAB_NAMES", "chromium_page", "fill_sample_store", "free_port", "running_space",
           "screenshot", "screenshot_tabs", "table_text", "wait_for_ranking", "wait_for_table", "wait_until_idle"]

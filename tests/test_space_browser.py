"""The leaderboard in a real browser (headless Chromium via playwright): load, switch tabs, filter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from leaderboard_space.screenshot import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)"),
]


def test_tabs_filter_and_screenshot(tmp_path):
    from leaderboard_space.screenshot import (
        chromium_page,
        fill_sample_store,
        running_space,
        table_text,
        wait_for_table,
        wait_until_idle,
    )

    results = tmp_path / "results"
    fill_sample_store(results, n_explainer_records=80)
    artifacts = REPO_ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    with running_space(str(results), str(tmp_path / "requests")) as url, chromium_page() as page:
        page.goto(url, timeout=60_000)
        wait_for_table(page, "[baseline]")
        wait_until_idle(page)
        before = table_text(page)
        assert "integrated_gradients" in before and "saliency" in before
        assert "records" in page.locator("#status").inner_text()

        page.get_by_role("tab", name="About").click()
        page.get_by_text("How to cite").wait_for(timeout=20_000)
        page.get_by_role("tab", name="Spanish model bias").click()
        page.locator("#bias-heat table").wait_for(timeout=30_000)
        assert "male − female" in page.locator("#bias-heat").inner_text()
        page.get_by_role("tab", name="Explainers").click()

        page.locator("#search textarea, #search input").first.fill("saliency")
        page.locator("#search textarea, #search input").first.press("Enter")
        page.wait_for_function(
            "() => { const t = document.querySelector('#explainer-table').innerText;"
            " return t.includes('saliency') && !t.includes('integrated_gradients'); }",
            timeout=60_000,
        )
        wait_until_idle(page)
        after = table_text(page)
        assert after != before
        assert "[baseline]" not in after
        shot = page.screenshot(path=str(tmp_path / "space-filtered.png"), full_page=True)
        (artifacts / "space-filtered.png").write_bytes(shot)
    assert (tmp_path / "space-filtered.png").stat().st_size > 10_000

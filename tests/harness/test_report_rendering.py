"""The HTML reports rendered by a real browser (headless Chromium): the pictures are not blank.

Skips, saying why, where Chromium is not installed (Debian: ``apt-get install chromium``);
the DOM checks in test_report_pages.py run everywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.reporting.screenshots import capture, find_chromium
from tests.harness.test_report_pages import built  # noqa: F401 - the fixture the pages are built by
from tests.support.png import read_png

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium not installed (Debian: apt-get install chromium); the DOM checks still ran",
)

@pytest.mark.parametrize("page", ["index.html", "qwen3_4b/index.html"])
def test_page_renders_to_a_picture_with_content(page: str, built: Path, tmp_path: Path):  # noqa: F811
    pixels = read_png(capture(built / page, tmp_path / "page.png", height=900))[:, :, :3].astype(int)
    assert pixels.shape[:2] == (900, 1280)
    assert (pixels[5, 5] == 255).all()  # the page's white background, so the ink below is the page's own
    ink = (pixels < 200).any(axis=2)
    assert 0.01 < ink.mean() < 0.6, f"{page}: {ink.mean():.1%} of the picture is ink"
    rows_with_ink = ink.any(axis=1).mean()
    assert rows_with_ink > 0.3, f"{page}: only {rows_with_ink:.0%} of the rows show anything"
    colours = {tuple(c) for c in pixels[::4, ::4].reshape(-1, 3)}
    assert len(colours) > 50  # text, cell colours and bars, not one flat fill

"""Pictures of the HTML reports, taken in headless Chromium: the images in docs/ and the rendering test.

``python -m harness.reporting.screenshots`` renders ``reports/index.html``
and the first model's page and writes ``docs/images/report-index.png`` and
``docs/images/report-model.png``. Chromium runs with no network, no profile
and no sync, so a picture shows exactly what the offline page holds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Debian's package installs ``chromium``; other systems name it differently
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
)
WIDTH = 1280


class ScreenshotError(RuntimeError):
    """Chromium is missing or wrote no picture."""


def find_chromium() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def capture(page: Path, png: Path, height: int, width: int = WIDTH, timeout: float = 120) -> Path:
    """Render ``page`` (an HTML file) at ``width``×``height`` into ``png``."""
    browser = find_chromium()
    if browser is None:
        raise ScreenshotError(f"no Chromium found (looked for {', '.join(BROWSERS)}); "
                              "on Debian: apt-get install chromium")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="utp-chromium-") as scratch:
        shot = Path(scratch) / "shot.png"
        command = [browser, *FLAGS, f"--user-data-dir={Path(scratch) / 'profile'}", f"--screenshot={shot}",
                   f"--window-size={width},{height}", page.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        if not shot.is_file() or shot.stat().st_size == 0:
            raise ScreenshotError(f"Chromium wrote no picture of {page} (exit {done.returncode}): "
                                  f"{done.stderr.strip()[-500:]}")
        os.replace(shot, png) if shot.stat().st_dev == png.parent.stat().st_dev else shutil.move(shot, png)
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.reporting.screenshots", description=__doc__)
    parser.add_argument("--reports", default="reports", help="the reports folder (default: %(default)s)")
    parser.add_argument("--out", default="docs/images", help="where the pictures go (default: %(default)s)")
    args = parser.parse_args(argv)
    reports, out = Path(args.reports), Path(args.out)
    models = sorted(reports.glob("*/index.html"))
    if not (reports / "index.html").is_file() or not models:
        print(f"no HTML reports under {reports}: run `utp report` first", file=sys.stderr)
        return 2
    try:
        for page, name, height in ((reports / "index.html", "report-index.png", 1250),
                                   (models[0], "report-model.png", 1400)):
            print(capture(page, out / name, height))
    except (ScreenshotError, subprocess.TimeoutExpired) as exc:
        print(f"screenshots: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Screenshots of the demo for the docs: the fleet page and the Recommendations page at 1280x900,
saved as docs/images/fleet.png and docs/images/recommendations.png.

    .venv/bin/python scripts/screenshots.py [--out docs/images]

Starts the service on the demo fleet in a throw-away SQLite store, logs in as the demo user and
drives Debian's Chromium (/usr/bin/chromium; no browser is downloaded).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from app.demo import DEMO_PASSWORD, DEMO_USER  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.conftest import live_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SIZE = {"width": 1280, "height": 900}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(database_url=f"sqlite:///{Path(tmp) / 'tierwise.db'}",
                            secret_key_file=Path(tmp) / "tierwise.key", demo=True, scheduler_enabled=False,
                            demo_history_hours=36)  # fmt: skip
        with live_server(settings) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport=SIZE)
            page.goto(url + "/login")
            page.get_by_label("User name").fill(DEMO_USER)
            page.get_by_label("Password").fill(DEMO_PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.get_by_role("heading", name="Fleet").wait_for()
            page.screenshot(path=str(args.out / "fleet.png"))
            page.goto(url + "/recommendations?target=demo%3ASQLPROD01")
            page.get_by_role("heading", name="Recommendations").wait_for()
            page.locator("input.pick").nth(0).check()
            page.locator("input.pick").nth(1).check()
            page.screenshot(path=str(args.out / "recommendations.png"))
            browser.close()
    print(f"wrote {args.out / 'fleet.png'} and {args.out / 'recommendations.png'}")


if __name__ == "__main__":
    main()

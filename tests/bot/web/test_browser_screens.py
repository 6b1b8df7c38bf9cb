"""Every page in light and dark, as an analyst on call sees it at 1,366 px, kept under
``var/screenshots/pages/`` (CI's artefacts): the list, a concluded investigation, a
running one, its alert, the cases list, the playbook, the usage, the suppressions and an
eval report. Each page answers 200, shows no broken word in a table cell and no horizontal scroll.
The data is invented (``tests/bot/web/seed.py``) but for the alert, a bundled eval
pack's (see its NOTICE)."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.async_api import Browser

from alerts.catalogue import load_catalogue
from alerts.parse import parse_alert
from store.cases.opening import open_for_run
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from store.triage.alerts import AlertStore
from tests.bot.web.eval_seed import write_run
from tests.bot.web.seed import seed
from tests.bot.web.support import ADMIN, signed_in_site
from tests.bot.web.test_browser import SHOTS, browser, signed_in
from tests.bot.web.test_browser_analyst import broken_words
from tests.bot.web.test_browser_suppressions import _suppressions

__all__ = ["browser"]  # the fixture, shared with test_browser

PACK = Path(__file__).resolve().parents[3] / "evals" / "packs" / "core"


async def test_every_page_light_and_dark(browser: Browser, db: Database, tmp_path: Path) -> None:
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=4, result_size=4000)
    running = await seed(db, channel="C0MINE01", text="live-run", steps=2, running=True)
    await seed(db, channel="C0MINE01", text="10.0.0.9", steps=1, severity="info")
    await seed(db, channel="C0MINE01", text="10.0.0.10", steps=1, severity="critical")
    raw = json.loads((PACK / "aws-cryptomining-dns" / "alert.json").read_text())
    alert = parse_alert(raw, catalogue=load_catalogue(None))
    await AlertStore(db).save(
        alert, investigation_id=shown, slack_channel="C0MINE01", slack_ts="1700000000.000100"
    )
    await PlaybookStore(db).add(PlaybookBullet(id="pb-tor", content="Tor exits are noisy"))
    await _suppressions(db)
    assert await open_for_run(db, shown) is not None  # a case for the cases list
    write_run(tmp_path, "core-gemini-2.5-flash", baseline=True)
    pages = {
        "list": "/web/investigations",
        "cases": "/web/cases",
        "investigation": f"/web/investigations/{shown}",
        "running": f"/web/investigations/{running}",
        "alert": f"/web/alerts/{alert.id}",
        "playbook": "/web/playbook",
        "usage": "/web/usage",
        "suppressions": "/web/suppressions",
        "evals": "/web/evals",
        "eval": "/web/evals/core-gemini-2.5-flash",
    }
    folder = SHOTS / "pages"
    folder.mkdir(parents=True, exist_ok=True)
    async with signed_in_site(db, eval_runs=str(tmp_path)) as site:
        for dark in (False, True):
            page = await signed_in(browser, site, ADMIN, dark=dark)
            for name, path in pages.items():
                response = await page.goto(site.url + path)
                assert response is not None and response.status == 200, path
                assert await broken_words(page) == [], path
                width = await page.evaluate("document.documentElement.scrollWidth")
                assert width <= 1366, path
                mode = "dark" if dark else "light"
                await page.screenshot(path=str(folder / f"{name}-{mode}.png"), full_page=True)

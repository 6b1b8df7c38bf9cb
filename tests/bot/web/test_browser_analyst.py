"""The investigation pages as an analyst on call works from them, in the real headless
Chromium through the acknowledging front: the whole evidence ("Show all"), the cited
row, tables that read at 1,366 px, filters and search that find, a run that is going.
The investigations are invented (``tests/bot/web/seed.py``, labelled so)."""

from __future__ import annotations

from playwright.async_api import Browser

from store.db.engine import Database
from tests.bot.web.seed import CITED, seed
from tests.bot.web.support import signed_in_site
from tests.bot.web.test_browser import SHOTS, browser, signed_in

__all__ = ["browser"]  # the fixture, shared with test_browser


async def test_show_all_brings_the_whole_stored_result(browser: Browser, db: Database) -> None:
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=2, result_size=6000)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        await page.goto(f"{site.url}/web/investigations/{shown}")
        call = page.locator("#call-s1-1")
        note = await call.locator(".cut-note").inner_text()
        assert note.startswith("first ") and " of 6," in note  # "first N of 6,2xx characters"
        assert CITED not in await call.locator(".result").first.inner_text()
        await call.locator("a.all").click()
        whole = call.locator("pre.whole")
        await whole.wait_for()
        assert CITED in await whole.inner_text()  # the last row, the one the finding cites
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / "analyst-show-all.png"))

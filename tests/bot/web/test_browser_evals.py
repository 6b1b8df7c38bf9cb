"""The Evals pages in the real headless Chromium: an admin reads a run's report (scenario
strings rendered inert), anyone else is refused."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser

from store.db.engine import Database
from tests.bot.web.eval_seed import HOSTILE, write_run
from tests.bot.web.support import ADMIN, signed_in_site
from tests.bot.web.test_browser import SHOTS, browser, signed_in

__all__ = ["browser"]  # the fixture, shared with test_browser


async def test_an_admin_reads_an_eval_report(
    browser: Browser, db: Database, tmp_path: Path
) -> None:
    write_run(tmp_path, "core-gemini-2.5-flash", baseline=True)
    async with signed_in_site(db, eval_runs=str(tmp_path)) as site:
        page = await signed_in(browser, site, ADMIN)
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        await page.click("header nav a[href='/web/evals']")
        await page.wait_for_url(f"{site.url}/web/evals")
        await page.click("a[href='/web/evals/core-gemini-2.5-flash']")
        await page.wait_for_selector("table.figures")
        figures = await page.inner_text("table.figures")
        assert "Verdict accuracy\t50.0 % [0.0 %, 100.0 %]" in figures
        assert "False-positive rejection\t-" in figures
        assert "$0.0246 ($0.0123 an attempt)" in figures
        assert "50.0 % → 100.0 %" not in await page.inner_text(".comparison")
        assert "100.0 % → 50.0 %" in await page.inner_text(".comparison")
        assert await page.locator("tr.failed").count() == 1
        body = await page.inner_text("main")
        assert HOSTILE in body  # shown as text
        assert await page.evaluate("window.__pwned === undefined") and not dialogs
        assert await page.locator("img").count() == 0
        assert await page.locator("script").count() == 1  # ours only
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / "eval.png"), full_page=True)


async def test_only_admins_see_eval_reports(browser: Browser, db: Database, tmp_path: Path) -> None:
    write_run(tmp_path, "core-run")
    async with signed_in_site(db, eval_runs=str(tmp_path)) as site:
        page = await signed_in(browser, site, "U0ALICE1")
        assert await page.locator("header nav a[href='/web/evals']").count() == 0
        for path in ("/web/evals", "/web/evals/core-run"):
            response = await page.goto(site.url + path)
            assert response is not None and response.status == 403
            assert "core" not in await page.inner_text("body")
        admin = await signed_in(browser, site, ADMIN)
        response = await admin.goto(f"{site.url}/web/evals/..%2F..%2Fetc")
        assert response is not None and response.status == 404

"""The investigation pages as an analyst on call works from them, in the real headless
Chromium through the acknowledging front: the whole evidence ("Show all"), the cited
row, tables that read at 1,366 px, filters and search that find, a run that is going.
The investigations are invented (``tests/bot/web/seed.py``, labelled so)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from playwright.async_api import Browser, Page
from sqlalchemy import update

from store.db.engine import Database
from store.schema import Investigation, TraceEvent
from tests.bot.web.seed import CITED, seed
from tests.bot.web.support import ADMIN, signed_in_site
from tests.bot.web.test_browser import SHOTS, browser, signed_in
from tests.bot.web.test_browser_suppressions import _suppressions

__all__ = ["browser"]  # the fixture, shared with test_browser


async def test_show_all_brings_the_whole_stored_result(browser: Browser, db: Database) -> None:
    """A cited query's rows as a table (header row, the first rows and the cited one),
    "Show all" brings every row into the page; a result no finding cites is drawn when
    opened: "Show" brings its whole table."""
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=2, result_size=6000)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        await page.goto(f"{site.url}/web/investigations/{shown}")
        call = page.locator("#call-s1-1")  # the first finding cites its last row
        heads = await call.locator("table.rows thead th").all_inner_texts()
        assert heads == ["event_time", "principal", "client_ip", "outcome"]
        note = await call.locator(".cut-note").inner_text()
        total = int(note.split(" of ")[1].split()[0].replace(",", ""))
        assert note.startswith("11 of ") and total > 50  # the first 10 and the cited row
        await call.locator("a.all").click()
        await call.locator(".whole").wait_for()
        assert await call.locator(".whole tbody tr").count() == total
        other = page.locator("#call-s2-1")  # a step no finding cites: not drawn yet
        assert await other.locator("table").count() == 0
        assert "no finding cites them" in await other.locator(".cut-note").inner_text()
        await other.locator("a.all", has_text="Show").click()
        await other.locator(".whole").wait_for()
        heads = await other.locator(".whole thead th").all_inner_texts()
        assert heads == ["event_time", "principal", "client_ip", "outcome"]
        assert await other.locator(".whole tbody tr").count() == total
        assert CITED in await other.locator(".whole").inner_text()  # the last row
        assert await other.locator(".cut").inner_text() == f"all {total:,} rows"
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / "analyst-show-all.png"))


async def test_following_a_finding_shows_the_row_it_cites(browser: Browser, db: Database) -> None:
    """The first finding quotes the last of 90-odd rows; its link scrolls to that row,
    shown (past the first 10) and highlighted."""
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=2, result_size=6000)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        await page.goto(f"{site.url}/web/investigations/{shown}")
        link = page.locator(".findings li").first.locator("a.ref")
        target = str(await link.get_attribute("href"))
        assert target.startswith("#call-s1-1-r")
        await link.click()
        row = page.locator(target)
        assert await row.is_visible() and CITED in await row.inner_text()
        assert await row.get_attribute("class") == "cited"
        assert await row.evaluate("r => r.matches(':target')")
        box = await row.bounding_box()
        assert box is not None and -2 < box["y"] < 860  # scrolled into the viewport
        await page.screenshot(path=str(SHOTS / "analyst-cited-row.png"))


# Every word (a run between spaces and hyphens) in a table cell, measured as rendered: a
# word on one line has one client rect; one broken across lines has two or more. In a
# cell of long text (td.long, td.what) a run longer than 24 characters (a hash, a URL,
# an attacker's blob) may break rather than widen the page; nothing shorter may.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("td, th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest("pre")) { continue; }  // code may break
      const long = node.parentElement.closest("td.long, td.what") !== null;
      for (const m of node.data.matchAll(/[^\\s-]+/g)) {
        if (long && m[0].length > 24) { continue; }
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
        if (lines.size > 1) { broken.push(m[0]); }
      }
    }
  }
  return broken;
}"""


async def broken_words(page: Page) -> list[str]:
    found: list[str] = await page.evaluate(BROKEN_WORDS)
    return found


async def test_no_word_breaks_inside_a_table_cell(browser: Browser, db: Database) -> None:
    """At 1,366 px, light and dark, in every table of the list, an investigation and the
    suppressions (whose "State" and "Lift" broke before)."""
    for i in range(4):
        await seed(db, channel="C0MINE01", text=f"guardduty-finding-{i} concluded", steps=2)
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=4)
    await _suppressions(db)
    async with signed_in_site(db) as site:
        for dark in (False, True):
            page = await signed_in(browser, site, ADMIN, dark=dark)
            for path in (
                "/web/investigations",
                f"/web/investigations/{shown}",
                "/web/suppressions",
                "/web/usage",
            ):
                await page.goto(site.url + path)
                assert await page.locator("td").count() > 0, path
                assert await broken_words(page) == [], path
                width = await page.evaluate("document.documentElement.scrollWidth")
                assert width <= 1366, path


async def test_the_severity_filter_and_search_find(browser: Browser, db: Database) -> None:
    """ "info" (the stored value) finds the info run; an e-mail written only in a
    conclusion's finding is found by the search box; a source typed in capitals is found."""
    info = await seed(db, channel="C0MINE01", text="10.0.0.9", steps=1, severity="info")
    quiet = await seed(db, channel="C0MINE01", text="10.0.0.8", steps=1, who="x.y@example.org")
    await seed(db, channel="C0MINE01", text="10.0.0.7", steps=1)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        first = page.locator("table.list tbody tr").first  # the alert first, its objective beneath
        assert (
            await first.locator("a.run").inner_text() == "Sign-in from a Tor exit node (10.0.0.7)"
        )
        assert (
            await first.locator(".beneath").inner_text()
            == "Decide whether 10.0.0.7 is an intrusion"
        )
        await page.select_option("select[name=severity]", "info")
        async with page.expect_navigation():
            await page.click("form.filters button[type=submit]")
        assert await _listed(page) == [info]
        await page.goto(f"{site.url}/web/investigations")
        await page.fill("input[name=q]", "x.y@example.org")
        async with page.expect_navigation():
            await page.press("input[name=q]", "Enter")
        assert await _listed(page) == [quiet]
        await page.goto(f"{site.url}/web/investigations?source=SCC")
        assert len(await _listed(page)) == 3


async def _listed(page: Page) -> list[str]:
    links = page.locator("table.list tbody tr a.run")
    return [str(h).rsplit("/", 1)[-1] for h in await links.evaluate_all("l => l.map(a => a.href)")]


async def test_a_running_step_is_shown_running(browser: Browser, db: Database) -> None:
    """A run whose last step started and has not finished: the step says "running", the
    timeline draws it open to now, the header says for how long and when it last did
    something; with no event for ten minutes it is marked possibly stale."""
    running = await seed(db, channel="C0MINE01", text="live-run", steps=2, running=True)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        await page.goto(f"{site.url}/web/investigations/{running}")
        assert await page.inner_text("#status") == "running"
        steps = page.locator("article.step h3 .st")
        assert await steps.all_inner_texts() == ["done", "running"]
        assert await page.locator("svg.timeline rect.step-running").count() == 1
        assert "last event just now" in await page.inner_text("#elapsed")
        assert await page.locator("#stale").count() == 0
        await page.screenshot(path=str(SHOTS / "analyst-running.png"))
        gone = datetime.now(UTC) - timedelta(minutes=10)
        async with db.session() as session:  # as if its process died ten minutes ago
            await session.execute(
                update(TraceEvent)
                .where(TraceEvent.investigation_id == running)
                .values(created_at=gone)
            )
            await session.execute(
                update(Investigation).where(Investigation.id == running).values(created_at=gone)
            )
        await page.reload()
        elapsed = await page.inner_text("#elapsed")
        assert elapsed.startswith("10 m") and "last event 10 min ago" in elapsed
        assert await page.inner_text("#stale") == "possibly stale"

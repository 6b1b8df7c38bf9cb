"""The pages in a real headless Chromium (Debian's, driven by Playwright).

Sign-in goes through the fake Slack OpenID provider; screenshots of the list and an
investigation are kept under ``var/screenshots/`` (CI's artefacts).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from tests.bot.web.seed import finish, seed
from tests.bot.web.support import ADMIN, APPROVER, Site, signed_in_site

SHOTS = Path(__file__).resolve().parents[3] / "var" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HOSTILE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    '<a href="javascript:window.__pwned = 3">click</a> <!channel> <@U0ADMIN1> *bold* '
)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        await chromium.close()


async def signed_in(browser: Browser, site: Site, user: str, *, dark: bool = False) -> Page:
    """A page whose context signed in as ``user`` by clicking through the sign-in page."""
    site.openid.user = user
    context: BrowserContext = await browser.new_context(
        viewport={"width": 1366, "height": 860}, color_scheme="dark" if dark else "light"
    )
    page = await context.new_page()
    await page.goto(f"{site.url}/web/investigations")
    assert page.url.startswith(f"{site.url}/web/signin")
    await page.click("#signin")
    await page.wait_for_url(f"{site.url}/web/investigations")
    return page


async def test_list_and_investigation_pages(browser: Browser, db: Database) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        await seed(db, channel="C0MINE01", text=f"10.0.0.{i}", steps=2)
    shown = await seed(db, channel="C0MINE01", text="185.220.101.42", steps=6)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        assert await page.locator("table.list tbody tr").count() == 4
        await page.screenshot(path=str(SHOTS / "list.png"), full_page=True)
        await page.click(f"a[href='/web/investigations/{shown}']")
        await page.wait_for_selector("#verdict")
        assert await page.inner_text("#verdict") == "true positive"
        assert await page.locator("svg.timeline rect").count() >= 6 + 9  # steps + calls
        # an evidence reference leads to the tool call behind it
        await page.click("a.ref[href^='#call-s1-1']")
        assert await page.locator("#call-s1-1").is_visible()
        assert "FROM `proj.audit.signins`" in await page.inner_text("#call-s1-1 pre.sql")
        assert await page.locator(".findings .bad").count() == 1  # the unverified finding
        technique = page.locator(".tech a")
        assert await technique.inner_text() == "T1078.004 Cloud Accounts (Initial Access)"
        assert await technique.get_attribute("href") == (
            "https://attack.mitre.org/techniques/T1078/004/"
        )
        await page.screenshot(path=str(SHOTS / "investigation.png"), full_page=True)
        dark = await signed_in(browser, site, "U0ALICE1", dark=True)
        await dark.goto(f"{site.url}/web/investigations/{shown}")
        background = await dark.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(20, 22, 26)"
        await dark.screenshot(path=str(SHOTS / "investigation-dark.png"))  # the top, as seen


async def test_the_page_follows_a_run_while_it_goes(browser: Browser, db: Database) -> None:
    running = await seed(db, channel="C0MINE01", text="live-run", steps=2, running=True)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        await page.goto(f"{site.url}/web/investigations/{running}")
        assert await page.inner_text("#status") == "running"
        assert await page.locator("#verdict").count() == 0
        await finish(InvestigationStore(db), running, "live-run")
        await page.wait_for_selector("#verdict", timeout=20_000)  # no reload
        assert await page.inner_text("#status") == "concluded"


async def test_a_hostile_alert_is_rendered_inert(browser: Browser, db: Database) -> None:
    huge = "A" * 200_000
    hostile = await seed(db, channel="C0MINE01", text=HOSTILE + huge, steps=1)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        page = await signed_in(browser, site, "U0ALICE1")
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        await page.goto(f"{site.url}/web/investigations/{hostile}")
        await page.wait_for_selector("#verdict")
        assert await page.evaluate("window.__pwned === undefined")
        assert await page.locator("script").count() == 1  # ours only
        assert await page.locator("a[href^='javascript:']").count() == 0
        assert await page.locator("img").count() == 0
        text = await page.inner_text(".summary")
        assert "<script>window.__pwned = 1</script>" in text and "<!channel>" in text
        cells = await page.inner_text("#call-s1-1 table.rows")  # the rows, as text
        assert "<script>window.__pwned = 1</script>" in cells
        trace = await InvestigationStore(db).trace(hostile)
        seq = next(e["seq"] for e in trace if e["payload"].get("ref") == "s1#1")
        call = f"{site.url}/web/investigations/{hostile}/calls/{seq}"
        raw = await page.request.get(call)
        assert raw.headers["content-type"].startswith("text/plain")  # "Show all", unparsed
        whole = await page.request.get(f"{call}?as=table&anchor=x%22%3E%3Cb")  # as drawn
        assert whole.status == 200 and "&lt;script&gt;window.__pwned" in await whole.text()
        assert "<script>" not in await whole.text() and 'id="x--' in await whole.text()
        assert await page.evaluate("window.__pwned === undefined")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1366  # huge strings wrap instead of widening the page
        await page.goto(f"{site.url}/web/investigations")
        assert await page.evaluate("window.__pwned === undefined") and not dialogs


async def test_a_member_of_another_channel_is_refused(browser: Browser, db: Database) -> None:
    theirs = await seed(db, channel="C0THEIR1", text="their-secret", steps=1)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}, "C0THEIR1": {"U0BOB001"}}
        page = await signed_in(browser, site, "U0ALICE1")
        assert "their-secret" not in await page.content()
        response = await page.goto(f"{site.url}/web/investigations/{theirs}")
        assert response is not None and response.status == 404
        assert "their-secret" not in await page.content()


async def test_approve_and_reject_with_csrf(browser: Browser, db: Database) -> None:
    store = PlaybookStore(db)
    first = await store.add(PlaybookBullet(id="pb-first", content="Tor exits are noisy"))
    second = await store.add(PlaybookBullet(id="pb-second", content="VPN egress is benign"))
    async with signed_in_site(db) as site:
        admin = await signed_in(browser, site, ADMIN)  # an admin, not an approver
        await admin.goto(f"{site.url}/web/playbook")
        assert await admin.locator("button.approve").count() == 0
        token = await admin.locator("input[name=csrf]").first.get_attribute("value")
        refused = await admin.request.post(
            f"{site.url}/web/playbook/{first.id}/decide",
            form={"csrf": token or "", "decision": "approve"},
        )
        assert refused.status == 403
        approver = await signed_in(browser, site, APPROVER)
        await approver.goto(f"{site.url}/web/playbook")
        no_token = await approver.request.post(
            f"{site.url}/web/playbook/{first.id}/decide", form={"decision": "approve"}
        )
        assert no_token.status == 403  # CSRF: no token
        foreign = await approver.request.post(  # the admin's token is not the approver's
            f"{site.url}/web/playbook/{first.id}/decide",
            form={"csrf": token or "", "decision": "approve"},
        )
        assert foreign.status == 403
        assert (await store.get(first.id)).status == "proposed"  # type: ignore[union-attr]
        for bullet, button in ((first, "approve"), (second, "reject")):
            async with approver.expect_navigation() as navigated:
                await approver.click(f"#bullet-{bullet.id} button.{button}")
            answer = await navigated.value
            assert answer is not None and answer.status == 200 and answer.url.endswith("/playbook")
        assert (await store.get(first.id)).status == "active"  # type: ignore[union-attr]
        assert (await store.get(second.id)).status == "rejected"  # type: ignore[union-attr]
        assert "Tor exits are noisy" in await approver.inner_text("table.list")

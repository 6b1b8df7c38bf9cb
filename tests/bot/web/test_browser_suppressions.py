"""The Suppressions page in the real headless Chromium: who asked, decided and lifted, with
hit counts; an approver lifts one (the form's CSRF token checked); an admin who is not
an approver sees no Lift; anyone else is refused; a hostile reason is rendered inert.
The suppressions are invented (labelled so), made through ``SuppressionStore`` as the
Slack dialog makes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import aiohttp
from playwright.async_api import Browser

from store.db.engine import Database
from store.triage.policy import PolicyStore
from store.triage.suppressions import Suppression, SuppressionStore
from tests.bot.web.support import ADMIN, APPROVER, signed_in_site
from tests.bot.web.test_browser import HOSTILE, SHOTS, browser, signed_in

__all__ = ["browser"]  # the fixture, shared with test_browser


async def _suppressions(db: Database) -> tuple[Suppression, Suppression]:
    store = SuppressionStore(db)
    week = datetime.now(UTC) + timedelta(days=7)
    active = await store.propose(
        {"match": {"source": "wazuh", "title": "SSH Hardening*"}},
        reason=HOSTILE + "hardening gap tracked in SEC-12",
        expires_at=week,
        proposed_by="U0ALICE1",
        alert_id="alert-1",
    )
    assert await store.decide(active.id, approve=True, by=APPROVER)
    lifted = await store.propose(
        {"match": {"source": "scc", "title": "Port scan*"}},
        reason="scanner drill",
        expires_at=week,
        proposed_by="U0ALICE1",
    )
    assert await store.decide(lifted.id, approve=True, by=APPROVER)
    assert await store.lift(lifted.id, by="cli:root")
    hits = PolicyStore(db)
    for n in range(3):
        await hits.record(f"a{n}", active.rule_id, "slack", "wazuh", "suppressed")
    return active, lifted


async def test_an_approver_lifts_a_suppression(browser: Browser, db: Database) -> None:
    active, lifted = await _suppressions(db)
    async with signed_in_site(db) as site:
        admin = await signed_in(browser, site, ADMIN)  # sees, may not lift
        await admin.goto(f"{site.url}/web/suppressions")
        assert await admin.locator(f"#active #{active.rule_id}").count() == 1
        assert await admin.locator("button:has-text('Lift')").count() == 0
        page = await signed_in(browser, site, APPROVER)
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        await page.goto(f"{site.url}/web/suppressions")
        row = page.locator(f"#active #{active.rule_id}")
        cells = await row.locator("td").all_inner_texts()
        assert cells[1] == "active" and cells[8].startswith("3")  # three hits
        assert HOSTILE in cells[3]  # the reason, as text
        assert f"{APPROVER}" in cells[5] and "U0ALICE1" in cells[4]
        lifted_row = await page.locator(f"#history #{lifted.rule_id} td").all_inner_texts()
        assert lifted_row[1] == "lifted" and "cli:root" in lifted_row[6]
        assert await page.evaluate("window.__pwned === undefined") and not dialogs
        assert await page.locator("img").count() == 0
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / "suppressions.png"), full_page=True)
        async with page.expect_navigation():
            await row.locator("button:has-text('Lift')").click()
        assert await page.locator(f"#history #{active.rule_id}").count() == 1
        assert await page.locator("#active .empty").count() == 1
    now = await SuppressionStore(db).get(active.id)
    assert now is not None and now.status == "lifted" and now.lifted_by == APPROVER


async def test_suppressions_refuse_others_and_forged_lifts(browser: Browser, db: Database) -> None:
    active, _ = await _suppressions(db)
    async with signed_in_site(db) as site:
        page = await signed_in(browser, site, "U0ALICE1")
        assert await page.locator("header nav a[href='/web/suppressions']").count() == 0
        response = await page.goto(f"{site.url}/web/suppressions")
        assert response is not None and response.status == 403
        assert "SEC-12" not in await page.inner_text("body")
        approver = await signed_in(browser, site, APPROVER)
        cookies = await approver.context.cookies()
        jar = {c["name"]: c["value"] for c in cookies}
        async with aiohttp.ClientSession(cookies=jar) as http:
            forged = await http.post(
                f"{site.url}/web/suppressions/{active.id}/lift", data={"csrf": "forged"}
            )
            assert forged.status == 403
            foreign = await http.post(
                f"{site.url}/web/suppressions/{active.id}/lift",
                data={"csrf": "forged"},
                headers={"Origin": "https://evil.example"},
            )
            assert foreign.status == 403
    still = await SuppressionStore(db).get(active.id)
    assert still is not None and still.status == "approved"

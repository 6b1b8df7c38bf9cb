"""Slack names on the pages over HTTP, as a browser gets them through the front: the
investigation's header, *Open in Slack*, votes, case, suppression, the list's channel
column, the alert page, the Suppressions and Playbook pages — each name from the Slack
fake (``users.info``, ``conversations.info``), a hostile one inert, a warm cache asking
Slack nothing, a broken Slack leaving the ids on the pages; in Chromium, the hostile name
shown as text. The names are invented."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import aiohttp
from playwright.async_api import Browser

from alerts.parse import parse_alert
from store.cases import transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from store.playbook.feedback import FeedbackStore
from store.schema import CaseDisposition
from store.triage.alerts import AlertStore
from store.triage.suppressions import SuppressionStore
from tests.bot.web.support import Site, signed_in_site
from tests.bot.web.test_browser import SHOTS, browser, signed_in
from tests.cli.test_cli import ALERTS
from tests.fakes.slack_api import FakeSlackAPI
from tests.store.cases.case_support import a_case

CHANNEL = "C0ALERTS01"
LEAD, ANALYST, EVIL = "U0LEAD0001", "U0ANALYST1", "U0EVIL0001"
__all__ = ["browser"]  # the fixture, shared with test_browser
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


def jane(user: str = LEAD, name: str = "Jane Doe") -> str:
    return f'<span class="name" title="{user}">@{name}</span>'


def named(api: FakeSlackAPI) -> None:
    api.add_user(LEAD, profile={"display_name": "Jane Doe"})
    api.add_user(ANALYST, profile={"display_name": "", "real_name": "Sam Analyst"})
    api.add_user(EVIL, profile={"display_name": HOSTILE + "x" * 5000})
    api.add_channel(CHANNEL, "alerts-prod")


async def a_run_with_everything(db: Database) -> tuple[str, str]:
    """A concluded run in ``CHANNEL`` with its case (resolved by LEAD), its alert posted
    there, a vote by ANALYST and a suppression asked for by EVIL; (run id, alert id)."""
    case = await a_case(db, "run-named", channel=CHANNEL)
    resolution = Resolution(CaseDisposition.TRUE_POSITIVE, False, "confirmed", None)
    assert await transitions.resolve(db, case.id, LEAD, resolution, seen=1, via="slack")
    alert = parse_alert(json.loads((ALERTS / "leveret-guardduty.json").read_text()), "guardduty")
    await AlertStore(db).save(
        alert, investigation_id="run-named", slack_channel=CHANNEL, slack_ts="1700000000.000200"
    )
    await FeedbackStore(db).vote("run-named", ANALYST, "correct", comment="agreed")
    suppressions = SuppressionStore(db)
    asked = await suppressions.propose(
        {"match": {"source": "guardduty"}},
        reason="noisy scanner",
        expires_at=datetime.now(UTC) + timedelta(days=7),
        proposed_by=EVIL,
        alert_id=alert.id,
    )
    assert await suppressions.decide(asked.id, approve=True, by=LEAD)
    assert await suppressions.lift(asked.id, by=ANALYST)
    return "run-named", alert.id


async def text_of(site: Site, path: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(f"{site.url}{path}") as r:
        assert r.status == 200, path
        return await r.text()


def asked(api: FakeSlackAPI) -> list[str]:
    return [m for m in api.methods() if m in ("users.info", "conversations.info")]


async def test_the_pages_show_names_not_ids(db: Database) -> None:
    run, alert = await a_run_with_everything(db)
    await PlaybookStore(db).add(
        PlaybookBullet(
            id="pb-named",
            content="Scanners from the VPN range are benign",
            provenance={"proposed_by": "socbot", "edited_by": LEAD, "review": {"channel": CHANNEL}},
        )
    )
    async with signed_in_site(db, local=True) as site:
        named(site.api)
        page = await text_of(site, f"/web/investigations/{run}")
        listing = await text_of(site, "/web/investigations")
        alert_page = await text_of(site, f"/web/alerts/{alert}")
        suppressions = await text_of(site, "/web/suppressions")
        playbook = await text_of(site, "/web/playbook")
        usage = await text_of(site, "/web/usage")
        calls = asked(site.api)
        again = await text_of(site, f"/web/investigations/{run}")
        assert asked(site.api) == calls  # a warm cache: no call to Slack
    channel = f'<span class="name" title="{CHANNEL}">#alerts-prod</span>'
    assert f"alert in {channel}" in page  # the header: the run's channel
    assert f"Open in Slack</a> <small>{channel}</small>" in page
    assert f"owner {jane()}" in page and f"UTC by {jane()}" in page  # the case
    assert f"{jane(ANALYST, 'Sam Analyst')}: correct" in page  # the vote
    assert f'asked for from this alert by <span class="name" title="{EVIL}">@&lt;script' in page
    assert again == page
    assert channel in listing and channel in alert_page and channel in usage
    assert jane() in suppressions and jane(ANALYST, "Sam Analyst") in suppressions
    assert f"<dd>{jane()}</dd>" in playbook and f"channel: {channel}" in playbook
    assert "<dd>socbot</dd>" in playbook  # not a Slack id: shown as it is, never looked up
    for html in (page, suppressions):
        assert "<script>window.__pwned" not in html and "<img src=x" not in html
        assert "x" * 100 not in html  # the 5,000-character name is cut
    assert sorted(set(calls)) == ["conversations.info", "users.info"]
    looked_up = {c.args.get("user") or c.args.get("channel") for c in site.api.calls}
    assert looked_up == {LEAD, ANALYST, EVIL, CHANNEL}  # each once at most, ids only
    assert len(calls) == len(looked_up)


async def test_a_broken_slack_leaves_the_ids_and_is_asked_once(db: Database) -> None:
    run, _ = await a_run_with_everything(db)
    async with signed_in_site(db, local=True) as site:
        site.api.fail_next("users.info", status=500, times=50)
        site.api.fail_next("conversations.info", error="internal_error", times=50)
        first = await text_of(site, f"/web/investigations/{run}")
        second = await text_of(site, f"/web/investigations/{run}")
        calls = asked(site.api)
    assert f'owner <code class="id">{LEAD}</code>' in first
    assert f'Open in Slack</a> <small><code class="id">{CHANNEL}</code></small>' in first
    assert second == first
    assert sorted(calls) == ["conversations.info"] + ["users.info"] * 3  # once per id


async def test_names_in_the_browser_hostile_one_inert(browser: Browser, db: Database) -> None:
    run, _ = await a_run_with_everything(db)
    async with signed_in_site(db) as site:
        named(site.api)
        site.openid.members = {CHANNEL: {LEAD}}
        page = await signed_in(browser, site, LEAD)
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        await page.goto(f"{site.url}/web/investigations/{run}")
        case = await page.inner_text("#case")
        header = await page.inner_text("section.head")
        assert "owner @Jane Doe" in case and "by @Jane Doe" in case
        assert "alert in #alerts-prod" in header  # the run's channel
        assert await page.inner_text(".head .pivots small") == "#alerts-prod"  # Open in Slack
        assert "asked for from this alert by @<script>window.__pwned=1</script>" in header
        assert await page.get_attribute(".head .pivots .name", "title") == CHANNEL
        assert await page.evaluate("window.__pwned === undefined") and not dialogs
        assert await page.locator("img").count() == 0
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SHOTS / "names.png"), full_page=True)

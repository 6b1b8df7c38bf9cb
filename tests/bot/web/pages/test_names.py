"""Slack ids as names (``bot.web.pages.names``) against the Slack fake through a real
``AsyncWebClient``: names shown, escaped and cut; an unknown id shows the id; a failing or
rate-limited Slack shows the id and is not asked again within its time; a slow Slack holds a
page at most ``wait_s``; the cache is bounded and a warm one asks nothing; nothing is
looked up for a value not shaped like a Slack id. The names are invented."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.client import build_client
from bot.web.pages import names as names_module
from bot.web.pages.names import FAILED_S, KEEP_S, MISSING_S, NAME_CHARS, Names
from config.settings import SlackSettings
from tests.fakes.slack_api import FakeSlackAPI

LEAD = "U0LEAD0001"
ALERTS = "C0ALERTS01"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as api:
        api.add_user(LEAD, profile={"display_name": "Jane Doe", "real_name": "Jane Q. Doe"})
        api.add_channel(ALERTS, "alerts-prod")
        yield api


def names_for(api: FakeSlackAPI, clock: Clock | None = None, **kw: object) -> Names:
    client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)
    return Names(client, clock=clock or Clock(), wait_s=2.0, **kw)  # type: ignore[arg-type]


async def settled(names: Names) -> None:
    """Until no lookup is under way (those a page stopped waiting for included)."""
    for _ in range(500):
        if not names._pending:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("a lookup never ended")


async def shown(names: Names, template: str, *ids: str) -> str:
    """What a page showing ``ids`` (users then channels by prefix) draws."""

    def page() -> str:
        parts = [str(names.channel(i) if i[:1] in "CGD" else names.user(i)) for i in ids]
        return template.join(parts)

    return await names.draw(page)


async def test_names_shown_with_the_id_as_title(fake: FakeSlackAPI) -> None:
    names = names_for(fake)
    page = await shown(names, " | ", LEAD, ALERTS)
    assert page == (
        f'<span class="name" title="{LEAD}">@Jane Doe</span> | '
        f'<span class="name" title="{ALERTS}">#alerts-prod</span>'
    )
    users, channels = fake.calls_to("users.info"), fake.calls_to("conversations.info")
    assert [c.args["user"] for c in users] == [LEAD]
    assert [c.args["channel"] for c in channels] == [ALERTS]
    assert users[0].token == "xoxb-test"


async def test_a_warm_cache_asks_nothing_and_draws_once(fake: FakeSlackAPI) -> None:
    names = names_for(fake)
    await shown(names, " ", LEAD, ALERTS)
    before, drawn = len(fake.calls), []

    def page() -> str:
        drawn.append(1)
        return str(names.user(LEAD)) + str(names.channel(ALERTS))

    assert "@Jane Doe" in await names.draw(page) and "#alerts-prod" in await names.draw(page)
    assert len(fake.calls) == before and len(drawn) == 2  # one draw per page, no call


async def test_display_name_then_real_name_then_handle(fake: FakeSlackAPI) -> None:
    fake.add_user("U0REAL0001", profile={"display_name": "", "real_name": "Real Name"})
    fake.add_user("U0HANDLE01", profile={"display_name": " "}, real_name="", name="handle")
    page = await shown(names_for(fake), " ", "U0REAL0001", "U0HANDLE01")
    assert "@Real Name" in page and "@handle" in page


async def test_hostile_names_are_escaped_cleaned_and_cut(fake: FakeSlackAPI) -> None:
    fake.add_user("U0EVIL0001", profile={"display_name": '<script>alert(1)</script>"x'})
    fake.add_user("U0LONG0001", profile={"display_name": "A" * 5000})
    fake.add_user("U0BIDI0001", profile={"display_name": "admin\u202egnp.exe\n\x00 \u200bx"})
    fake.add_channel("C0EVIL0001", '"><img src=x onerror=alert(1)>')
    names = names_for(fake)
    page = await shown(names, "\n", "U0EVIL0001", "U0LONG0001", "U0BIDI0001", "C0EVIL0001")
    evil, long, bidi, channel = page.split("\n")
    assert evil.endswith(">@&lt;script&gt;alert(1)&lt;/script&gt;&#34;x</span>")
    assert "<script>" not in page and "<img" not in page
    assert channel.endswith(">#&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</span>")
    assert long.endswith(">@" + "A" * (NAME_CHARS - 1) + "…</span>")
    assert bidi.endswith(">@admin gnp.exe x</span>")  # no override, no control characters


async def test_an_unknown_id_shows_the_id_and_is_not_asked_again(fake: FakeSlackAPI) -> None:
    fake.remove_user("U0GONE0001")
    clock = Clock()
    names = names_for(fake, clock)
    for _ in range(3):
        page = await shown(names, " ", "U0GONE0001", "C0NOWHERE1")
        assert page == '<code class="id">U0GONE0001</code> <code class="id">C0NOWHERE1</code>'
        clock.now += FAILED_S  # kept as not found: longer than a failure
    assert sorted(fake.methods()) == ["conversations.info", "users.info"]  # refused once each
    clock.now += MISSING_S + 1
    await shown(names, " ", "U0GONE0001")
    assert fake.methods().count("users.info") == 2  # asked again once the time passed


@pytest.mark.parametrize("failure", [{"status": 500}, {"error": "fatal_error"}])
async def test_a_failing_slack_shows_the_id_and_is_not_asked_on_every_view(
    fake: FakeSlackAPI, failure: dict[str, object]
) -> None:
    fake.fail_next("users.info", times=5, **failure)  # type: ignore[arg-type]
    clock = Clock()
    names = names_for(fake, clock)
    for _ in range(4):
        assert await shown(names, " ", LEAD) == f'<code class="id">{LEAD}</code>'
        clock.now += FAILED_S / 5
    assert len(fake.calls_to("users.info")) == 1  # a 500 is retried by no one here
    fake.clear_failures("users.info")
    clock.now += FAILED_S
    assert "@Jane Doe" in await shown(names, " ", LEAD)
    assert len(fake.calls_to("users.info")) == 2


async def test_a_rate_limit_waits_as_long_as_slack_asks(fake: FakeSlackAPI) -> None:
    fake.fail_next("conversations.info", status=429, retry_after=600)
    clock = Clock()
    names = names_for(fake, clock)
    assert await shown(names, " ", ALERTS) == f'<code class="id">{ALERTS}</code>'
    clock.now += FAILED_S + 1  # past the usual time, within Slack's Retry-After
    assert await shown(names, " ", ALERTS) == f'<code class="id">{ALERTS}</code>'
    assert len(fake.calls_to("conversations.info")) == 1
    clock.now += 600
    assert "#alerts-prod" in await shown(names, " ", ALERTS)


async def test_a_failure_keeps_the_name_shown_before(fake: FakeSlackAPI) -> None:
    clock = Clock()
    names = names_for(fake, clock)
    assert "@Jane Doe" in await shown(names, " ", LEAD)
    clock.now += KEEP_S + 1
    fake.fail_next("users.info", status=500)
    assert "@Jane Doe" in await shown(names, " ", LEAD)  # past its time: shown, asked again
    await settled(names)
    assert len(fake.calls_to("users.info")) == 2
    assert "@Jane Doe" in await shown(names, " ", LEAD)
    await settled(names)
    assert len(fake.calls_to("users.info")) == 2  # the failure is kept FAILED_S
    clock.now += FAILED_S
    assert "@Jane Doe" in await shown(names, " ", LEAD)  # asked again, answered
    await settled(names)
    assert len(fake.calls_to("users.info")) == 3


async def test_a_slow_slack_holds_a_page_at_most_wait_s(fake: FakeSlackAPI) -> None:
    fake.hold("users.info")
    names = Names(
        AsyncWebClient(token="xoxb-test", base_url=fake.base_url), clock=Clock(), wait_s=0.2
    )
    began = time.monotonic()
    assert await shown(names, " ", LEAD) == f'<code class="id">{LEAD}</code>'
    assert time.monotonic() - began < 1.0
    fake.release_held()
    await settled(names)
    assert "@Jane Doe" in await shown(names, " ", LEAD)  # landed for the next view
    assert len(fake.calls_to("users.info")) == 1


async def test_the_apps_retrying_client_does_not_hold_a_page(
    fake: FakeSlackAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``build_client`` waits out a 429's Retry-After (up to 30 s): the lookup gives up
    after ``LOOKUP_S`` and counts as failed."""
    monkeypatch.setattr(names_module, "LOOKUP_S", 0.5)
    fake.fail_next("users.info", status=429, retry_after=20)
    client = build_client(SlackSettings(bot_token="xoxb-test", api_url=fake.base_url))
    clock = Clock()
    names = Names(client, clock=clock, wait_s=0.1)
    began = time.monotonic()
    assert await shown(names, " ", LEAD) == f'<code class="id">{LEAD}</code>'
    assert time.monotonic() - began < 1.0
    await settled(names)  # the lookup's own limit passed: kept as failed
    assert await shown(names, " ", LEAD) == f'<code class="id">{LEAD}</code>'
    assert len(fake.calls_to("users.info")) == 1


async def test_one_lookup_for_an_id_many_pages_want_at_once(fake: FakeSlackAPI) -> None:
    names = names_for(fake)
    pages = await asyncio.gather(*(shown(names, " ", LEAD, ALERTS) for _ in range(10)))
    assert all("@Jane Doe" in p and "#alerts-prod" in p for p in pages)
    assert fake.methods().count("users.info") == 1
    assert fake.methods().count("conversations.info") == 1


async def test_the_cache_is_bounded_least_recently_shown_first(fake: FakeSlackAPI) -> None:
    names = names_for(fake, size=3)
    ids = [f"U0USER{n:04d}" for n in range(5)]
    for user in ids:
        await shown(names, " ", user)
    assert len(names._known) == 3 and list(names._known) == ids[2:]
    await shown(names, " ", ids[2])  # shown again: now the most recent
    await shown(names, " ", ids[0])  # forgotten: asked again, evicting ids[3]
    assert list(names._known) == [ids[4], ids[2], ids[0]]
    assert fake.methods().count("users.info") == 6


@pytest.mark.parametrize(
    "value",
    [
        "socbot",
        "socbot:auto",
        "cli:root",
        "local",
        "u0lower001",
        "U0SHORT",  # too short for a Slack id
        "U0ALICE1<script>",
        "D0DIRECT01",  # a direct message: no name to show
        "T0TEAM0001",
        "C0" + "A" * 40,
        "../U0LEAD0001",
        "",
    ],
)
async def test_no_lookup_for_what_is_not_a_slack_id(fake: FakeSlackAPI, value: str) -> None:
    names = names_for(fake)
    page = await shown(names, "", value) + str(names.channel(value))
    assert fake.calls == []
    assert "<script>" not in page and value.replace("<", "&lt;").replace(">", "&gt;") in page


async def test_without_a_slack_client_every_id_is_shown_as_it_is() -> None:
    names = Names(None)
    assert await names.draw(lambda: str(names.user(LEAD))) == f'<code class="id">{LEAD}</code>'
    assert not names._pending and not names._known

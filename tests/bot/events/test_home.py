"""App Home alone (``bot.events.home``, ``bot.events._home_refresh``): the real
``AsyncWebClient`` against the Slack fake, the real stores on SQLite, no bolt app.

What a Home shows is only what the person's channels hold (Slack's members, fail closed);
a change refreshes only the Homes of recent openers who may see the case, at most ``most``
of them, each at most once per ``home_refresh_s``. The mutation group ``home_auth`` runs
these (``scripts/mutation.py``); the whole app's path is
``tests/bot/scenarios/test_slack_home.py``."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from bot.events._home_refresh import REMEMBERED, Refresher
from bot.events.home import AppHome
from bot.slack.members import ChannelMembers
from store.cases import home_openers, transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import CaseDisposition, CaseRow, WorkKind, WorkRow, WorkState, utcnow
from tests.bot.decisions.click_support import web_client
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_home import published
from tests.slack_support import make_settings
from tests.store.cases.case_support import a_case

SOC, OPS, LOST = "CSOC00001", "COPS00001", "CLOST0001"
ANA, BOB, CAT, OUT = "UANA00001", "UBOB00001", "UCAT00001", "UOUT00001"


async def titled(db: Database, run: str, channel: str, title: str, **kwargs: object) -> CaseRow:
    case = await a_case(db, run, channel=channel, alert_id=f"a-{run}", **kwargs)  # type: ignore[arg-type]
    async with db.session() as session:
        await session.execute(update(CaseRow).where(CaseRow.id == case.id).values(title=title))
    return case


@pytest.fixture
def home(db: Database, fake: FakeSlackAPI, tmp_path: Path) -> AppHome:
    fake.add_members(SOC, [ANA, BOB, CAT])
    fake.add_members(OPS, [OUT])  # LOST: Slack cannot say (channel_not_found)
    settings = make_settings(tmp_path, fake.base_url, alert_channels=[SOC, OPS])
    settings = settings.model_copy(
        update={
            "slack": settings.slack.model_copy(update={"home_refresh_s": 0.0}),
            "web": settings.web.model_copy(update={"base_url": "https://socbot.example"}),
        }
    )
    client = web_client(fake)
    return AppHome(db, settings, ChannelMembers(client), client, most=2)


async def test_a_home_shows_only_the_persons_channels(db: Database, home: AppHome) -> None:
    await titled(db, "r1", SOC, "soc-unowned-high", severity="high")
    await titled(db, "r2", SOC, "soc-unowned-medium", severity="medium")
    mine = await titled(db, "r3", SOC, "soc-mine", severity="low")
    bobs = await titled(db, "r4", SOC, "soc-bobs", severity="critical")
    done = await titled(db, "r5", SOC, "soc-resolved", severity="critical")
    await titled(db, "r6", OPS, "ops-unowned-critical", severity="critical")
    await titled(db, "r7", LOST, "lost-unowned-critical", severity="critical")
    await transitions.take(db, mine.id, ANA, seen=1, via="test")
    await transitions.take(db, bobs.id, BOB, seen=1, via="test")
    benign = Resolution(CaseDisposition.BENIGN)
    await transitions.resolve(db, done.id, ANA, benign, seen=1, via="test")
    view = await home.view(ANA)
    parts: dict[str, list[str]] = {}
    for block in view["blocks"]:
        part = str(block.get("block_id", "")).split("_")[1]
        if block["type"] == "section" and "text" in block:
            parts.setdefault(part, []).append(block["text"]["text"].split("* ")[1].split(" ·")[0])
    assert parts["mine"] == ["soc-mine"]
    assert parts["unowned"] == ["soc-unowned-high"]
    assert sorted(parts["verdicts"]) == sorted(
        ["soc-unowned-high", "soc-unowned-medium", "soc-mine", "soc-bobs", "soc-resolved"]
    )
    assert "ops-" not in str(view) and "lost-" not in str(view)
    assert "agreement *0 %* (0 of 1 decided)" in str(view)  # benign, socbot said true_positive
    theirs = str(await home.view(OUT))
    assert "ops-unowned-critical" in theirs and "soc-" not in theirs and "lost-" not in theirs
    assert "soc-" not in str(await home.view(""))


async def test_the_queue_and_the_week_of_the_persons_channels(db: Database, home: AppHome) -> None:
    """The configured alert channels count even without cases (their queue)."""
    later = (utcnow() + timedelta(hours=1)).replace(tzinfo=None)
    async with db.session() as session:
        for kind, state, channel in (
            (WorkKind.ALERT, WorkState.QUEUED, SOC),
            (WorkKind.MENTION, WorkState.QUEUED, SOC),
            (WorkKind.FOLLOWUP, WorkState.RUNNING, SOC),
            (WorkKind.POLICY_DEFERRED, WorkState.QUEUED, SOC),
            (WorkKind.LEARN, WorkState.QUEUED, SOC),  # not an investigation
            (WorkKind.ALERT, WorkState.DONE, SOC),
            (WorkKind.ALERT, WorkState.QUEUED, OPS),
        ):
            session.add(work_row(kind, state, channel, later))
    assert "*2* waiting · *1* running · *1* held by policy" in str(await home.view(ANA))
    assert "*1* waiting · *0* running · *0* held by policy" in str(await home.view(OUT))
    await titled(db, "r1", SOC, "soc", severity="high")
    agreed = await titled(db, "r2", SOC, "soc2", severity="high")
    await titled(db, "r3", OPS, "ops", severity="high")
    async with db.session() as session:
        await session.execute(update(CaseRow).values(cost_usd=1.25))
    await transitions.resolve(
        db, agreed.id, ANA, Resolution(CaseDisposition.TRUE_POSITIVE), seen=1, via="test"
    )
    shown = str(await home.view(ANA))
    assert "2 cases · agreement *100 %* (1 of 1 decided) · cost $2.50" in shown
    assert "https://socbot.example/web/investigations/r1" in shown


def work_row(kind: str, state: str, channel: str, later: object) -> WorkRow:
    return WorkRow(
        kind=kind,
        state=state,
        priority=1,
        thread=f"t:{kind}:{state}:{channel}",
        channel=channel,
        thread_ts="1700000999.000999",
        request={},
        attempts=0,
        stop_requested=False,
        posted={},
        not_before=later,
        created_at=utcnow(),
    )


async def opened(db: Database, *users: str) -> None:
    """``users`` opened their Homes in this order, a second apart (the last most recent)."""
    start = utcnow() - timedelta(seconds=len(users))
    for n, user in enumerate(users):
        await home_openers.opened(db, user, at=start + timedelta(seconds=n))


async def test_opening_the_home_tab_publishes_it(
    db: Database, home: AppHome, fake: FakeSlackAPI
) -> None:
    acks: list[int] = []

    async def ack() -> None:
        acks.append(1)

    await home.on_opened(ack, {"type": "app_home_opened", "user": ANA, "tab": "messages"})
    await home.on_opened(ack, {"type": "app_home_opened", "user": "<@ANA>", "tab": "home"})
    await home.on_opened(ack, {"type": "app_home_opened", "user": ["UANA00001"], "tab": "home"})
    assert acks == [1, 1, 1] and fake.calls_to("views.publish") == []
    await home.on_opened(ack, {"type": "app_home_opened", "user": ANA, "tab": "home"})
    lately = await home_openers.recent(db, timedelta(hours=1), 10)
    assert list(published(fake)) == [ANA] and lately == [ANA]
    home.refresh.every_s = 3600.0
    await home.on_opened(ack, {"type": "app_home_opened", "user": ANA, "tab": "home"})
    assert len(fake.calls_to("views.publish")) == 1  # published a moment ago


async def test_a_change_refreshes_recent_openers_who_may_see_it(
    db: Database, home: AppHome, fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    case = await titled(db, "r1", SOC, "soc-case", severity="high")
    await opened(db, ANA, OUT, BOB, CAT)
    caplog.set_level(logging.INFO, logger="bot.events.home")
    await home.changed(case)  # CAT, BOB: the two most recent members (most=2); OUT: no
    assert f"case {case.id} changed: 2 Homes to refresh" in caplog.messages
    await fake.wait_for(lambda: len(published(fake)) == 2)
    assert set(published(fake)) == {CAT, BOB}
    lost = await titled(db, "r2", LOST, "lost-case", severity="high")
    nowhere = await titled(db, "r3", SOC, "no-channel", severity="high")
    nowhere.channel = None
    await home.changed(lost)
    await home.changed(nowhere)
    assert home.refresh.due() == {}
    await home.close()


async def test_a_refused_publish_is_only_logged(
    home: AppHome, fake: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail_next("views.publish", error="not_enabled")
    await home.publish(ANA)
    assert fake.calls_to("views.publish")[0].args["user_id"] == ANA
    assert "could not publish UANA00001's Home" in caplog.text


# --- the refresher ----------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refresher(publish: list[str], **kwargs: float) -> tuple[Refresher, Clock, asyncio.Event]:
    clock, done = Clock(), asyncio.Event()

    async def record(user: str) -> None:
        publish.append(user)
        done.set()
        if user == "UFAIL0001":
            raise RuntimeError("the store is down")

    options: dict[str, float] = {"every_s": 10.0, **kwargs}
    return Refresher(record, clock=clock, **options), clock, done  # type: ignore[arg-type]


def test_publish_times_pruned_to_those_that_hold_one_back() -> None:
    refresh, clock, _ = refresher([])
    for n in range(REMEMBERED):
        refresh.published(f"U{n:08d}")
    clock.now += 10.0  # all of them a publish that no longer holds the next back
    refresh.published(ANA)
    assert not refresh.fresh("U00000000") and refresh.fresh(ANA)
    assert len(refresh._last) == 1


def test_fresh_for_every_s_after_a_publish() -> None:
    refresh, clock, _ = refresher([])
    assert not refresh.fresh(ANA)
    refresh.published(ANA)
    clock.now += 9.9
    assert refresh.fresh(ANA) and not refresh.fresh(BOB)
    clock.now += 0.1
    assert not refresh.fresh(ANA)


async def test_soon_bounds_and_coalesces() -> None:
    seen: list[str] = []
    refresh, _, done = refresher(seen, most=2, every_s=0.0)
    assert refresh.soon([ANA, BOB, CAT]) == [ANA, BOB]
    assert refresh.fresh(ANA) and refresh.soon([ANA, CAT]) == [CAT]
    due = refresh.due()
    assert sorted(due) == sorted([ANA, BOB, CAT]) and all(s < 0.5 for s in due.values())
    while len(seen) < 3:
        done.clear()
        await done.wait()
    assert sorted(seen) == sorted([ANA, BOB, CAT]) and refresh.due() == {}


async def test_a_recent_publish_holds_the_next_back_until_close() -> None:
    seen: list[str] = []
    refresh, clock, done = refresher(seen, every_s=3600.0)
    refresh.published(ANA)
    clock.now += 600  # published 10 minutes ago: due 50 minutes from now
    assert refresh.soon([ANA, "UFAIL0001"]) == [ANA, "UFAIL0001"]
    assert 2990 < refresh.due()[ANA] <= 3000
    await done.wait()  # the never-published one goes at once; its error is only logged
    assert seen == ["UFAIL0001"] and list(refresh.due()) == [ANA]
    await refresh.close()
    assert seen == ["UFAIL0001"] and refresh.due() == {}


async def test_a_note_comes_first_and_no_web_url_no_link(
    db: Database, home: AppHome, fake: FakeSlackAPI, tmp_path: Path
) -> None:
    await titled(db, "r1", SOC, "soc", severity="high")
    view = await home.view(ANA, "Only members of this channel can decide on its cases.")
    assert view["blocks"][0]["text"]["text"].startswith("⚠️ Only members of this channel")
    bare = make_settings(tmp_path, fake.base_url, alert_channels=[SOC])
    client = web_client(fake)
    plain = str(await AppHome(db, bare, ChannelMembers(client), client).view(ANA))
    assert "soc" in plain and "url" not in plain and "<" not in plain.replace("&lt;", "")


async def test_queue_moves_refresh_the_channels_openers_in_one_task(
    db: Database, home: AppHome, fake: FakeSlackAPI
) -> None:
    """A held alert (the gate's watchers) and rows queued, started, ended (the worker's):
    recent openers who may see the channel, each once however many moves; nobody else."""
    home.moved(SOC)  # nobody opened a Home: nothing to do, Slack not asked
    assert home._draining is not None
    await home._draining
    assert fake.calls_to("conversations.members") == [] and home.refresh.due() == {}
    await opened(db, ANA, OUT)
    for user in (ANA, OUT):
        home.refresh.published(user)  # a moment ago: the next is due in an hour
    home.refresh.every_s = 3600.0
    for channel in (SOC, SOC, "", LOST, SOC):
        home.moved(channel)
    task = home._draining
    assert task is not None
    await task
    assert list(home.refresh.due()) == [ANA]  # OUT is no member of SOC; LOST: Slack fails
    assert len(fake.calls_to("conversations.members")) == 2  # SOC once (cached), LOST
    home.moved(SOC)
    assert home._draining is not task and home._draining is not None
    await home._draining
    assert list(home.refresh.due()) == [ANA]  # coalesced into the publish already due
    home.moved(OPS)
    await home.close()
    assert home.refresh.due() == {} and fake.calls_to("views.publish") == []


async def test_the_persons_own_cases_count_beyond_the_alert_channels(
    db: Database, home: AppHome, fake: FakeSlackAPI
) -> None:
    """A case ANA took in a channel outside the alert channels (a mention's): shown while
    she is a member of it, and its channel's other cases with it; never once she is not."""
    fake.add_members("CMENTION1", [ANA])
    theirs = await titled(db, "r1", "CMENTION1", "mention-case", severity="high")
    await titled(db, "r2", "CMENTION1", "mention-other", severity="critical")
    await transitions.take(db, theirs.id, ANA, seen=1, via="test")
    shown = str(await home.view(ANA))
    assert "mention-case" in shown and "mention-other" in shown
    assert "mention-" not in str(await home.view(BOB))  # owns nothing there, not a member
    fake.add_members("CMENTION2", [BOB])
    elsewhere = await titled(db, "r3", "CMENTION2", "left-case", severity="high")
    await transitions.take(db, elsewhere.id, ANA, seen=1, via="test")
    assert "left-case" not in str(await home.view(ANA))  # ANA is no member of CMENTION2


async def test_a_change_on_one_replica_refreshes_homes_opened_on_another(
    db: Database, home: AppHome, fake: FakeSlackAPI, tmp_path: Path
) -> None:
    """Who opened their Home is in the database: replica B tells a change, and ANA, who
    opened hers through replica A, gets hers published again; OUT (no member) does not."""

    async def ack() -> None:
        return None

    for user in (ANA, OUT):
        await home.on_opened(ack, {"type": "app_home_opened", "user": user, "tab": "home"})
    assert sorted(published(fake)) == sorted([ANA, OUT])
    client = web_client(fake)
    other = AppHome(db, home.settings, ChannelMembers(client), client)
    case = await titled(db, "r1", SOC, "soc-case", severity="high")
    await other.changed(case)
    assert list(other.refresh.due()) == [ANA]
    await fake.wait_for(lambda: len(fake.calls_to("views.publish")) == 3)
    assert fake.calls_to("views.publish")[-1].args["user_id"] == ANA
    await other.close()
    await home.close()


async def test_a_home_opened_while_the_store_fails_is_still_published(
    home: AppHome,
    fake: FakeSlackAPI,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def down(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the store is down")

    async def ack() -> None:
        return None

    monkeypatch.setattr(home_openers, "opened", down)
    await home.on_opened(ack, {"type": "app_home_opened", "user": ANA, "tab": "home"})
    assert list(published(fake)) == [ANA]
    assert f"could not record that {ANA} opened their Home" in caplog.messages

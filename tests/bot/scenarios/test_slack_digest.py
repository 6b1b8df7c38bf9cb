"""The weekly digest through the real app and the Slack fake: two replicas on PostgreSQL
post last week's report once; a restart does not post it again; the next week's is due
from Monday 00:00 UTC, not a second before. The fake refuses invalid Block Kit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from bot.decisions.case_digest import CaseDigests
from config.cases_settings import CaseSettings
from config.settings import Settings
from store.cases import transitions
from store.cases.digests import last_week
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import CaseDisposition, CaseRow, WorkRow, WorkState, utcnow
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, make_settings, settle_until
from tests.store.cases.case_support import a_case

DIGEST = "CDIGEST01"


def digests(fake: FakeSlackAPI) -> list[str]:
    return [m.text for m in fake.messages if m.channel == DIGEST]


def digests_ts(fake: FakeSlackAPI) -> str:
    """The latest digest's ts."""
    return [m.ts for m in fake.messages if m.channel == DIGEST][-1]


def settings_for(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    base = make_settings(tmp_path, fake.base_url)
    return base.model_copy(
        update={
            "cases": CaseSettings(digest_channel=DIGEST, remind_every_s=3600),
            "web": base.web.model_copy(update={"base_url": "https://socbot.example.com"}),
        }
    )


async def last_weeks_cases(db: Database) -> None:
    """Two cases opened last week, one resolved against socbot, one with it; one this week."""
    _, since, _ = last_week(utcnow())
    for n, (verdict, disposition) in enumerate(
        [("true_positive", CaseDisposition.FALSE_POSITIVE), ("benign", CaseDisposition.BENIGN)]
    ):
        case = await a_case(db, f"run-{n}", alert_id=f"a-{n}", verdict=verdict)
        await transitions.resolve(db, case.id, "U1", Resolution(disposition), seen=1, via="cli")
        async with db.session() as session:
            await session.execute(
                update(CaseRow)
                .where(CaseRow.id == case.id)
                .values(created_at=since + timedelta(days=2, hours=n))
            )
    await a_case(db, "run-now", alert_id="a-now")


def digest_of(h: SlackHarness) -> CaseDigests:
    assert h.bot is not None and h.bot.digest is not None
    return h.bot.digest


async def test_the_digest_is_posted_once_per_week_across_replicas(
    pg_db: Database, tmp_path: Path, fake: FakeSlackAPI
) -> None:
    settings = settings_for(tmp_path, fake)
    await last_weeks_cases(pg_db)
    checked = fake.checked
    one = SlackHarness(fake, settings, RecordingInvestigate(fake), db=pg_db)
    two = SlackHarness(fake, settings, RecordingInvestigate(fake), db=pg_db)
    async with one, two:  # both schedules look at start-up
        again = [await digest_of(h).queue_due() for h in (one, two)]
        assert again == [None, None]  # the week is taken
        await fake.wait_for(lambda: len(digests(fake)) >= 1)
        for h in (one, two):
            await h.settle()
    (text,) = digests(fake)
    week, _, _ = last_week(utcnow())
    assert text == f"Weekly case digest {week}: 2 cases, agreement 50.0% (1/2; 95 % 9.4% to 90.5%)"
    assert fake.checked > checked  # the blocks passed the fake's Block Kit check
    (message,) = [m for m in fake.messages if m.channel == DIGEST]
    body = str(message.extra["blocks"])
    assert "*Field TP recall* — (none)" in body  # the analysts called none a true positive
    assert "*FP rejection* 50.0% (1/2; 95 % 9.4% to 90.5%)" in body
    assert "<https://socbot.example.com/web/investigations/run-0|case 1>" in body
    assert "socbot True positive, analyst False positive" in body

    async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=pg_db) as three:
        await three.settle()  # a restart: its schedule looked, found the week taken
        assert await digest_of(three).queue_due() is None
    assert len(digests(fake)) == 1


async def test_the_week_boundary(db: Database, tmp_path: Path, fake: FakeSlackAPI) -> None:
    settings = settings_for(tmp_path, fake)
    await a_case(db, "run-now", alert_id="a-now")  # opened this week
    async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
        await fake.wait_for(lambda: len(digests(fake)) == 1)  # last week's, at start-up
        assert digests(fake)[0].startswith(f"Weekly case digest {last_week(utcnow())[0]}: 0 cases")
        digest = digest_of(h)
        monday = last_week(utcnow())[2] + timedelta(days=7)  # next Monday 00:00 UTC
        digest.clock = lambda: monday - timedelta(microseconds=1)  # Sunday 23:59:59.999999
        assert await digest.queue_due() is None
        digest.clock = lambda: monday
        this_week = last_week(monday)[0]
        assert await digest.queue_due() == this_week
        assert await digest.queue_due() is None
        await fake.wait_for(lambda: len(digests(fake)) == 2)
        await h.settle()
        assert digests(fake)[1].startswith(f"Weekly case digest {this_week}: 1 cases")


def test_last_week_spans_monday_to_monday_utc() -> None:
    sunday = datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC)
    assert last_week(sunday) == (
        "2026-W47",
        datetime(2026, 11, 16, tzinfo=UTC),
        datetime(2026, 11, 23, tzinfo=UTC),
    )
    monday = datetime(2026, 11, 30, tzinfo=UTC)
    assert last_week(monday)[0] == "2026-W48"
    new_year = datetime(2027, 1, 4, 9, tzinfo=UTC)  # the ISO year of 2026's last week
    assert last_week(new_year)[0] == "2026-W53"
    naive = datetime(2026, 11, 30, 5)  # SQLite's naive UTC
    assert last_week(naive)[0] == "2026-W48"


async def test_a_digest_is_neither_lost_nor_posted_twice(
    db: Database, tmp_path: Path, fake: FakeSlackAPI
) -> None:
    """Slack refuses the digest once: the row tries again and posts it. An attempt after
    one that died mid-post finds the post by its token and adopts it; after one that died
    before posting, it posts."""
    settings = settings_for(tmp_path, fake)
    settings = settings.model_copy(
        update={"work": settings.work.model_copy(update={"retry_backoff_s": 0.05})}
    )
    fake.fail_next("chat.postMessage", error="channel_not_found")
    async with SlackHarness(fake, settings, RecordingInvestigate(fake), db=db) as h:
        await fake.wait_for(lambda: len(digests(fake)) == 1)
        await h.settle()
        tries = [c for c in fake.calls_to("chat.postMessage") if c.args["channel"] == DIGEST]
        assert len(tries) == 2  # the refusal, then the post
        async with db.session() as session:
            row = await session.scalar(select(WorkRow).where(WorkRow.kind == "case_digest"))
        assert row is not None and row.state == WorkState.DONE
        token, ts = row.posted["digest_post"], row.posted["digest_ts"]
        assert fake.messages[-1].extra["metadata"]["event_payload"]["post"] == token

        for died_after_posting, posts in ((True, 1), (False, 2)):
            posted = {"digest_post": token if died_after_posting else "0123456789abcdef"}
            async with db.session() as session:  # its replica died: the row taken over
                await session.execute(
                    update(WorkRow)
                    .where(WorkRow.id == row.id)
                    .values(state=WorkState.QUEUED, owner=None, lease_until=None, posted=posted)
                )
            h.app.coordinator.nudge()
            await settle_until(h, lambda: _done(db, row.id), rounds=50)
            assert len(digests(fake)) == posts
            async with db.session() as session:
                again = await session.get(WorkRow, row.id)
            assert again is not None
            assert again.posted["digest_ts"] == (ts if died_after_posting else digests_ts(fake))


async def _done(db: Database, work_id: int) -> bool:
    async with db.session() as session:
        row = await session.get(WorkRow, work_id)
        return row is not None and row.state == WorkState.DONE

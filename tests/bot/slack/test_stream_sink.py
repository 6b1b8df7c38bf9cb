"""``SlackStream`` alone against the Slack fake: a run whose work row was taken over while its
stream started closes that stream at once, saying where the run went, and sends nothing more."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.status import StatusView
from bot.slack.pacer import Pacer
from bot.slack.post_once import ThreadSearch
from bot.slack.progress import SlackProgress
from bot.slack.stream_gate import StreamGate
from bot.slack.streaming import HANDED_ON, SlackStream
from bot.work.contracts import RowLost
from core.events import Started, StepStarted
from store.db.engine import Database
from store.slack import SlackStore
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackAPI


async def test_a_run_handed_on_closes_its_stream(fake: FakeSlackAPI, db: Database) -> None:
    fake.streams.allow()
    web = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)

    async def taken_over(_ts: str) -> None:
        raise RowLost("work 1 is run by another replica now")

    async def no_checklist() -> SlackProgress:
        raise AssertionError("a handed-on run posts no checklist")

    sink = SlackStream(
        web,
        channel="CSOC00001",
        thread_ts="1700000100.000100",
        pacer=Pacer(rate_per_s=100),
        view=StatusView(),
        gate=StreamGate(ThreadSearch(web), SlackStore(db), "auto"),
        recipient=(TEAM_ID, BOT_USER_ID),
        fallback=no_checklist,
        on_started=taken_over,
        update_interval=0.01,
    )
    await sink.emit(Started(investigation_id="i1", kind="alert", conversation_id="c1"))
    await fake.wait_for(lambda: bool(fake.calls_to("chat.stopStream")))
    await sink.emit(StepStarted(investigation_id="i1", step_id="s1", description="more"))
    await sink.close()
    [stream] = fake.streams.streams.values()
    assert stream.stopped and HANDED_ON in stream.text
    assert fake.methods().count("chat.stopStream") == 1
    assert "chat.appendStream" not in fake.methods()

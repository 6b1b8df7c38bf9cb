"""One SQLite file, many writers: the app under a burst of mentions while terminal runs
(``socbot investigate``, each with its own engine and connections, as separate
processes would have) write to the same file. Every conclusion is posted, every
terminal run is recorded, and nothing says "database is locked"."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from sqlalchemy import func, select

from agent.engine import Request
from alerts.parse import Alert
from bot.slack.pacer import Pacer
from cli.common import new_conversation_id
from cli.runtime import open_runtime
from cli.terminal.investigate import _read_alert, investigation_record, remember_alert
from cli.terminal.progress import TerminalProgress
from config.settings import Settings
from store.db.engine import Database
from store.queue.types import PRUNE_KIND
from store.schema import Investigation, WorkRow
from store.triage.alerts import AlertStore
from tests.bot.scenarios.test_slack_flows import ALERTS, alert_model, running_bot
from tests.fakes.model import ScriptedModel, json_response, text_response
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import SlackHarness, load, make_settings

MENTIONS = 40
TERMINAL_RUNS = 4
CHANNELS = ("CSOC00001", "CSOC00002", "CSOC00003", "CSOC00004")


def mention_thread(n: int) -> tuple[str, str]:
    return CHANNELS[n % len(CHANNELS)], f"1700003000.{n:06d}"


def mention(n: int) -> dict[str, Any]:
    event = load("app_mention.json")
    event["event_id"] = f"Ev0BURST{n:03d}"
    channel, ts = mention_thread(n)
    event["event"].update(channel=channel, ts=ts, event_ts=ts, user=f"UANALYST{n:03d}")
    event["event"].pop("client_msg_id", None)
    return event


def chat_model() -> ScriptedModel:
    return ScriptedModel(
        {
            "classifier": lambda _r: json_response({"needs_plan": False, "reason": "a lookup"}),
            "direct": lambda _r: text_response("185.220.101.42 is a Tor exit node."),
        }
    )


def serving(fake: FakeSlackAPI, settings: Settings) -> AbstractAsyncContextManager[SlackHarness]:
    """The real runtime and Slack app, Slack's edit budget not in the way."""
    return running_bot(
        fake, settings, chat_model(), pacer=Pacer(rate_per_s=200, updates_per_min=60_000)
    )


async def terminal_run(settings: Settings, alert: Alert) -> str:
    """What ``socbot investigate`` does, with its own runtime (engine, database, pool)."""
    async with open_runtime(settings, backend=ScriptedModel(alert_model())) as rt:
        with TerminalProgress(Console(quiet=True)) as progress:
            outcome = await rt.engine.run(
                Request(conversation_id=new_conversation_id(), text="investigate", alert=alert),
                progress,
            )
        await investigation_record(rt.investigations, outcome, 1.0)
        await remember_alert(AlertStore(rt.db), alert, outcome)
    assert outcome.status == "concluded", outcome.error
    return outcome.investigation_id


async def test_a_burst_of_mentions_and_terminal_runs_share_one_sqlite_file(
    fake: FakeSlackAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    settings = make_settings(tmp_path, fake.base_url, max_concurrent_investigations=8).model_copy(
        deep=True
    )
    settings.work.max_queued_per_channel = MENTIONS
    settings.work.max_running_per_channel = 8
    alert = _read_alert(str(ALERTS / "leveret-scc.json"))
    async with serving(fake, settings) as h:

        async def deliver(n: int) -> None:
            status, _body = await h.event(mention(n))
            assert status == 200

        runs = [
            asyncio.create_task(terminal_run(settings, alert.model_copy(update={"id": f"t{i}"})))
            for i in range(TERMINAL_RUNS)
        ]
        await asyncio.gather(*(deliver(n) for n in range(MENTIONS)))
        investigations = await asyncio.gather(*runs)
        for _ in range(3):
            await h.settle()
        rows = await _rows(h.db)
    answers = [
        (c.args["channel"], c.args.get("thread_ts"))
        for c in fake.calls_to("chat.postMessage")
        if "Tor exit node" in str(c.args.get("text"))
    ]
    assert sorted(answers) == sorted({mention_thread(n) for n in range(MENTIONS)})  # one each
    assert rows == {"done": MENTIONS}
    check = Database(settings.database_url)
    try:
        async with check.session() as session:
            stored = await session.scalar(
                select(func.count()).where(Investigation.id.in_(investigations))
            )
        assert stored == TERMINAL_RUNS
        for i in range(TERMINAL_RUNS):
            saved = await AlertStore(check).get(f"t{i}")
            assert saved is not None and saved.verdict == "true_positive"
    finally:
        await check.close()
    locked = [r.getMessage() for r in caplog.records if "locked" in r.getMessage().lower()]
    assert locked == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def _rows(db: Database) -> dict[str, int]:
    async with db.session() as session:
        found = await session.execute(  # the work of the threads, not the replica's pruning
            select(WorkRow.state, func.count())
            .where(WorkRow.kind != PRUNE_KIND)
            .group_by(WorkRow.state)
        )
        return {state: int(n) for state, n in found}

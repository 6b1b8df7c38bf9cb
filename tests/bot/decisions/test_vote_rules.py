"""Who may vote on a verdict (``bot.decisions.votes.FeedbackActions.on_vote``), on the
handler alone: the real ``AsyncWebClient`` against the Slack fake, the real
``FeedbackStore`` and ``Notifier`` (its durable queue) on SQLite, no bolt app. Each
rule with its exact outcome — the vote stored, the learning asked for, the webhook
event queued, what the voter was told — for a vote on socbot's conclusion in its
thread (taken) and on anything else (refused, nothing stored), so that the mutation
group ``slack_auth`` (``scripts/mutation.py``) runs in seconds per mutant. The whole
app's paths are ``test_slack_feedback.py``'s; the 👎 dialog's answer is
``test_verdict_rules.py``'s. Clicks start from the recorded ``block_actions`` delivery."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from sqlalchemy import select

from bot.decisions.votes import REFUSED, FeedbackActions, verdict_modal
from bot.notify.notifier import Notifier
from config.notify_settings import NotifySettings, WebhookSettings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.feedback import FeedbackStore
from store.queue.work import WorkQueue
from store.schema import Feedback, WorkRow
from tests.bot.decisions.click_support import TRIGGER, Acks, click, told, web_client
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import FakeSlackAPI

SOC, THREAD = "CSOC00001", "1700000100.000100"  # the recorded click's channel and thread
ANALYST = "UANALYST1"  # the recorded click's user
INV = "inv-0001"
THANKS = "Thanks, your vote ({}) is {}."


class Learnt:
    """The ``learn`` callback: the investigations learning was asked for, in order."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    async def __call__(self, investigation_id: str) -> None:
        self.ids.append(investigation_id)


async def run(db: Database, inv: str = INV, thread: str = THREAD, **end: Any) -> None:
    """An investigation socbot ran in ``thread`` of #soc, concluded unless ``end`` says."""
    store = InvestigationStore(db)
    await store.create(inv, f"slack:{SOC}:{thread}", "alert", "GuardDuty finding")
    if end.get("status") != "running":
        finished = {"status": "concluded", "verdict": "true_positive", **end}
        await store.finish(
            inv, mode="alert", objective=None, record={}, usage={}, error=None, **finished
        )


def actions(db: Database) -> tuple[FeedbackActions, Learnt]:
    hook = WebhookSettings(
        name="cases", url="https://cases.example/hook", secret="s", events=["feedback"]
    )
    notifier = Notifier(NotifySettings(webhooks=[hook]), WorkQueue(db))
    learnt = Learnt()
    return FeedbackActions(FeedbackStore(db), learnt, notifier), learnt


async def votes(db: Database) -> list[tuple[str, str, str, str | None, str | None, str]]:
    async with db.session() as session:
        rows = await session.scalars(select(Feedback).order_by(Feedback.id))
        return [(r.investigation_id, r.user, r.value, r.verdict, r.comment, r.source) for r in rows]


async def sent(db: Database) -> list[dict[str, Any]]:
    """The data of every ``feedback`` event queued for the webhooks."""
    async with db.session() as session:
        rows = await session.scalars(select(WorkRow).where(WorkRow.kind == "notify"))
        bodies = [json.loads(json.loads(r.request["text"])["body"]) for r in rows]
    assert {b["event"] for b in bodies} <= {"feedback"}
    return [b["data"] for b in bodies]


async def vote(
    slack: FeedbackActions,
    fake: FakeSlackAPI,
    action_id: str,
    value: str | None = INV,
    **where: Any,
) -> Acks:
    acks = Acks()
    body = click(action_id, value, **where)
    await slack.on_vote(acks, body, body["actions"][0], web_client(fake))
    return acks


async def test_a_thumbs_up_is_stored_sent_learnt_and_thanked_once(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await run(db)
    slack, learnt = actions(db)
    with caplog.at_level(logging.INFO, logger="bot.decisions.votes"):
        acks = await vote(slack, fake, "feedback_correct")
        again = await vote(slack, fake, "feedback_correct")
    assert acks.calls == again.calls == [{}]
    assert await votes(db) == [(INV, ANALYST, "correct", None, None, "button")]
    assert learnt.ids == [INV]  # the same opinion is learnt, and sent, once
    assert await sent(db) == [{"investigation_id": INV, "user": ANALYST, "correct": True}]
    thanks = [THANKS.format("correct", w) for w in ("recorded", "unchanged")]
    assert told(fake) == [(SOC, ANALYST, text, THREAD) for text in thanks]
    assert caplog.messages == [f"vote on {INV} from {ANALYST} ({v})" for v in ("new", "same")]
    assert fake.calls_to("views.open") == []


async def test_a_thumbs_down_asks_why_and_learns_when_answered(
    fake: FakeSlackAPI, db: Database
) -> None:
    await run(db)
    slack, learnt = actions(db)
    acks = await vote(slack, fake, "feedback_incorrect")
    await vote(slack, fake, "feedback_incorrect")  # clicked again: asked again, sent once
    assert acks.calls == [{}]
    assert await votes(db) == [(INV, ANALYST, "incorrect", None, None, "button")]
    assert await sent(db) == [{"investigation_id": INV, "user": ANALYST, "correct": False}]
    opened = fake.calls_to("views.open")
    assert [c.args["trigger_id"] for c in opened] == [TRIGGER, TRIGGER]
    assert opened[0].args["view"] == verdict_modal(INV, SOC, THREAD)
    assert learnt.ids == [] and told(fake) == []  # the dialog's answer learns and thanks


async def test_a_thumbs_down_without_a_dialog_is_learnt_and_thanked(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """No trigger to open the dialog with, or Slack refusing it: the vote still counts."""
    await run(db)
    slack, learnt = actions(db)
    await vote(slack, fake, "feedback_correct", trigger_id=None)
    await vote(slack, fake, "feedback_incorrect", trigger_id=None)
    assert fake.calls_to("views.open") == []  # no trigger: not even tried
    fake.fail_next("views.open", error="expired_trigger_id")
    with caplog.at_level(logging.WARNING, logger="bot.decisions.votes"):
        await vote(slack, fake, "feedback_incorrect")
    [warned] = caplog.messages
    assert warned.startswith("could not open the feedback dialog: ")
    assert "expired_trigger_id" in warned
    assert learnt.ids == [INV, INV]
    assert [vote["correct"] for vote in await sent(db)] == [True, False]  # not the same again
    said = [("correct", "recorded"), ("incorrect", "changed"), ("incorrect", "unchanged")]
    assert told(fake) == [(SOC, ANALYST, THANKS.format(*s), THREAD) for s in said]
    assert await votes(db) == [(INV, ANALYST, "incorrect", None, None, "button")]


async def test_a_vote_on_a_conclusion_at_the_thread_root(fake: FakeSlackAPI, db: Database) -> None:
    root = "1700000400.000400"  # the recorded message's own ts: it starts the thread
    await run(db, thread=root)
    slack, learnt = actions(db)
    await vote(slack, fake, "feedback_correct", thread_ts=None)
    assert await votes(db) == [(INV, ANALYST, "correct", None, None, "button")]
    assert told(fake) == [(SOC, ANALYST, THANKS.format("correct", "recorded"), root)]
    assert learnt.ids == [INV]


@pytest.mark.parametrize(
    ("case", "value", "where"),
    [
        ("unknown id", "inv-9999", {}),
        ("no id", None, {}),
        ("another thread", INV, {"thread_ts": "1700000999.000999"}),
        ("another channel", INV, {"channel": "CSOC00002"}),
    ],
)
async def test_a_vote_on_anything_but_socbots_conclusion_here_is_refused(
    fake: FakeSlackAPI,
    db: Database,
    caplog: pytest.LogCaptureFixture,
    case: str,
    value: str | None,
    where: dict[str, str],
) -> None:
    await run(db)
    slack, learnt = actions(db)
    with caplog.at_level(logging.INFO, logger="bot.decisions.votes"):
        acks = await vote(slack, fake, "feedback_incorrect", value, **where)
    assert acks.calls == [{}]
    channel, thread = where.get("channel", SOC), where.get("thread_ts", THREAD)
    assert told(fake) == [(channel, ANALYST, REFUSED, thread)]
    assert caplog.messages == [f"vote by {ANALYST} on {value or ''!r} refused: not socbot's here"]
    assert await votes(db) == [] and await sent(db) == [] and learnt.ids == []
    assert fake.calls_to("views.open") == []


@pytest.mark.parametrize(
    "end", [{"status": "running"}, {"status": "failed"}, {"verdict": None}], ids=str
)
async def test_no_vote_on_a_run_without_a_conclusion(
    fake: FakeSlackAPI, db: Database, end: dict[str, Any]
) -> None:
    await run(db, **end)
    slack, learnt = actions(db)
    await vote(slack, fake, "feedback_correct")
    assert told(fake) == [(SOC, ANALYST, REFUSED, THREAD)]
    assert await votes(db) == [] and learnt.ids == []


async def test_a_click_by_nobody_or_nowhere_stores_nothing(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await run(db)
    slack, learnt = actions(db)
    with caplog.at_level(logging.INFO, logger="bot.decisions.votes"):
        await vote(slack, fake, "feedback_correct", user=None)  # silently: nobody to tell
        assert caplog.messages == []
        await vote(slack, fake, "feedback_correct", channel=None)
        await vote(slack, fake, "feedback_correct", message=None)
    assert caplog.messages == [f"vote by {ANALYST} on {INV!r} refused: not socbot's here"] * 2
    assert told(fake) == [(SOC, ANALYST, REFUSED, None)]  # no thread; nowhere: no one told
    assert await votes(db) == [] and learnt.ids == [] and fake.methods() == ["chat.postEphemeral"]


async def test_without_learning_or_webhooks_a_vote_is_still_stored(
    fake: FakeSlackAPI, db: Database
) -> None:
    await run(db)
    slack = FeedbackActions(FeedbackStore(db))
    await vote(slack, fake, "feedback_correct")
    await vote(slack, fake, "feedback_incorrect", trigger_id=None)
    assert await votes(db) == [(INV, ANALYST, "incorrect", None, None, "button")]
    assert await sent(db) == []

"""The 👎 dialog's answer (``bot.decisions.votes.FeedbackActions.on_verdict``) on the handler
alone, like ``test_vote_rules.py``: the right verdict and reason stored on socbot's
conclusion in its thread, learnt once and thanked; an unreadable dialog, one about
anything else, or by nobody, stores nothing. Part of the mutation group ``slack_auth``
(``scripts/mutation.py``). The dialog is Slack's documented shape, invented values."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from bot.decisions.votes import REASON_CHARS, FeedbackActions
from store.db.engine import Database
from tests.bot.decisions.click_support import Acks, told, web_client
from tests.bot.decisions.test_vote_rules import ANALYST, INV, SOC, THREAD, actions, run, sent, votes
from tests.bot.scenarios.test_slack_feedback import submission, verdict_values
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import FakeSlackAPI


def answer(verdict: str, reason: str | None, user: str = ANALYST, **meta: str) -> dict[str, Any]:
    where = json.dumps({"investigation_id": INV, "channel": SOC, "thread_ts": THREAD, **meta})
    return submission("feedback_verdict", where, verdict_values(verdict, reason), user)


async def verdict(slack: FeedbackActions, fake: FakeSlackAPI, body: dict[str, Any]) -> Acks:
    acks = Acks()
    await slack.on_verdict(acks, body, body["view"], web_client(fake))
    return acks


async def test_the_dialogs_verdict_is_stored_learnt_and_thanked(
    fake: FakeSlackAPI, db: Database
) -> None:
    await run(db)
    slack, learnt = actions(db)
    acks = await verdict(slack, fake, answer("benign", "our scanner"))
    await verdict(slack, fake, answer("benign", "our scanner"))  # sent twice: learnt once
    assert acks.calls == [{}]
    assert await votes(db) == [(INV, ANALYST, "incorrect", "benign", "our scanner", "modal")]
    assert learnt.ids == [INV]
    assert told(fake) == [(SOC, ANALYST, "Thanks: recorded, the verdict is Benign.", THREAD)] * 2
    assert await sent(db) == []  # the click sent the event; the dialog refines the vote


@pytest.mark.parametrize(
    ("reason", "stored"),
    [("x" * (REASON_CHARS + 1), "x" * REASON_CHARS), ("", None), (None, None)],
    ids=["too long", "empty", "none"],
)
async def test_the_reason_is_clipped_or_left_out(
    fake: FakeSlackAPI, db: Database, reason: str | None, stored: str | None
) -> None:
    await run(db)
    slack, learnt = actions(db)
    await verdict(slack, fake, answer("false_positive", reason))
    assert await votes(db) == [(INV, ANALYST, "incorrect", "false_positive", stored, "modal")]
    assert learnt.ids == [INV]
    no_reason = answer("true_positive", None)
    del no_reason["view"]["state"]["values"]["reason"]  # an optional field left out
    await verdict(slack, fake, no_reason)
    assert (await votes(db))[0][3:5] == ("true_positive", None)
    assert learnt.ids == [INV, INV]  # a changed verdict is learnt again


def unreadable() -> list[dict[str, Any]]:
    bad_meta = answer("benign", None)
    bad_meta["view"]["private_metadata"] = "{"
    no_state = answer("benign", None)
    del no_state["view"]["state"]
    no_verdict = answer("benign", None)
    no_verdict["view"]["state"]["values"]["verdict"]["verdict"]["selected_option"] = None
    meta_list = answer("benign", None)
    meta_list["view"]["private_metadata"] = json.dumps([INV, SOC, THREAD])
    odd_reason = answer("benign", None)
    odd_reason["view"]["state"]["values"]["reason"] = "our scanner"
    return [bad_meta, no_state, no_verdict, meta_list, odd_reason]


async def test_an_unreadable_dialog_stores_nothing(
    fake: FakeSlackAPI, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await run(db)
    slack, learnt = actions(db)
    with caplog.at_level(logging.INFO, logger="bot.decisions.votes"):
        for body in unreadable():
            assert (await verdict(slack, fake, body)).calls == [{}]
    assert caplog.messages == [f"unreadable feedback dialog from {ANALYST}"] * 5
    assert await votes(db) == [] and learnt.ids == [] and fake.calls == []


@pytest.mark.parametrize(
    ("case", "body", "logged"),
    [
        ("not a verdict", answer("malicious", None), []),
        ("nobody", {**answer("benign", None), "user": None}, []),
        ("another thread", answer("benign", None, thread_ts="1700000999.000999"), True),
        ("another channel", answer("benign", None, channel="CSOC00002"), True),
        ("another run", answer("benign", None, investigation_id="inv-9999"), True),
        ("no run", answer("benign", None, investigation_id=""), True),
    ],
)
async def test_a_dialog_about_anything_else_stores_nothing(
    fake: FakeSlackAPI,
    db: Database,
    caplog: pytest.LogCaptureFixture,
    case: str,
    body: dict[str, Any],
    logged: bool | list[str],
) -> None:
    await run(db)
    slack, learnt = actions(db)
    with caplog.at_level(logging.INFO, logger="bot.decisions.votes"):
        assert (await verdict(slack, fake, body)).calls == [{}]
    if logged is True:
        inv = json.loads(body["view"]["private_metadata"])["investigation_id"]
        logged = [f"dialog vote by {ANALYST} on {inv!r} refused"]
    assert caplog.messages == logged
    assert await votes(db) == [] and learnt.ids == [] and fake.calls == []

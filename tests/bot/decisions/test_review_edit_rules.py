"""The playbook edit dialog's submission
(``bot.decisions.playbook_review.SlackReview.on_edited``) on the handler alone, like
``test_review_rules.py``: the approver's edit stored, approved and shown; anyone else's, a
bad one or a malformed one kept out (the dialog stays open, nothing stored); an edit the
store refuses told. Part of the mutation group ``slack_auth`` (``scripts/mutation.py``). The
submission is Slack's documented shape with invented values
(``test_slack_feedback.submission``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import update

from bot.decisions.playbook_review import NOT_ALLOWED, decided_blocks
from store.db.engine import Database
from store.playbook.rules import content_problem, scope_problem
from store.schema import Bullet
from tests.bot.decisions.click_support import Acks, told, web_client
from tests.bot.decisions.test_review_rules import (
    ANALYST,
    EDITED,
    LEAD,
    REVIEW,
    SOC,
    TEXT,
    TS,
    proposal,
    reviewer,
    unchanged,
)
from tests.bot.scenarios.test_slack_feedback import submission
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.fakes.slack_api import FakeSlackAPI
from tests.playbook_support import bullet


def dialog(
    bullet_id: str, content: str, scope: str | None, user: str = LEAD, **meta: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The edit dialog sent by ``user``; ``meta`` overrides where it says it was opened."""
    where = json.dumps({"id": bullet_id, "channel": REVIEW, "ts": TS, **meta})
    values: dict[str, Any] = {
        "content": {"content": {"type": "plain_text_input", "value": content}}
    }
    if scope is not None:
        values["scope"] = {"scope": {"type": "plain_text_input", "value": scope}}
    body = submission("playbook_edit", where, values, user)
    return body, body["view"]


async def test_the_approvers_edit_is_stored_approved_and_shown(
    fake: FakeSlackAPI, db: Database
) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    acks = Acks()
    body, view = dialog(first.id, EDITED, "source:guardduty")
    await slack.on_edited(acks, body, view, web_client(fake))
    after = await store.get(first.id)
    assert after is not None
    assert (after.status, after.content, after.scope) == ("active", EDITED, "source:guardduty")
    assert (after.provenance["edited_by"], after.provenance["approved_by"]) == (LEAD, LEAD)
    assert acks.calls == [{}] and told(fake) == []
    [updated] = fake.calls_to("chat.update")
    what = "edited and approved"
    assert (updated.args["channel"], updated.args["ts"], updated.args["text"]) == (
        REVIEW,
        TS,
        f"Playbook proposal {first.id}: {what}",
    )
    assert updated.args["blocks"] == decided_blocks(after, LEAD, what)


@pytest.mark.parametrize(
    ("user", "meta", "approvers"),
    [
        (ANALYST, {}, [LEAD]),  # not an approver
        (LEAD, {"channel": SOC}, [LEAD]),  # the dialog says it came from elsewhere
        (LEAD, {}, []),  # nobody
    ],
)
async def test_a_dialog_from_anyone_else_stays_open_and_changes_nothing(
    fake: FakeSlackAPI, db: Database, user: str, meta: dict[str, str], approvers: list[str]
) -> None:
    store, slack = reviewer(fake, db, approvers)
    first = await proposal(store)
    acks = Acks()
    body, view = dialog(first.id, EDITED, "source:guardduty", user, **meta)
    await slack.on_edited(acks, body, view, web_client(fake))
    assert acks.calls == [{"response_action": "errors", "errors": {"content": NOT_ALLOWED}}]
    await unchanged(store, first.id)
    assert fake.calls == []


async def test_a_bad_or_malformed_dialog_changes_nothing(fake: FakeSlackAPI, db: Database) -> None:
    store, slack = reviewer(fake, db, [LEAD])
    first = await proposal(store)
    empty, malformed = Acks(), Acks()
    body, view = dialog(first.id, "  ", None)
    await slack.on_edited(empty, body, view, web_client(fake))
    assert empty.calls == [
        {"response_action": "errors", "errors": {"content": content_problem("")}}
    ]
    await slack.on_edited(malformed, body, {**view, "private_metadata": "{"}, web_client(fake))
    assert malformed.calls == [{}]  # closed: there is nothing it could change
    await unchanged(store, first.id)
    assert fake.calls == []


async def test_an_edit_the_store_refuses_is_told(fake: FakeSlackAPI, db: Database) -> None:
    """Decided meanwhile (another approver, another replica), or stored by an older socbot
    with a scope today's rules refuse (the dialog of an older socbot has no scope field):
    the approver is told why, the message stays."""
    store, slack = reviewer(fake, db, [LEAD])
    done = await store.add(bullet(TEXT))
    old = await proposal(store, "Old scope rules")
    async with db.session() as session:
        await session.execute(update(Bullet).where(Bullet.id == old.id).values(scope="team:red"))
    for bullet_id in (done.id, old.id):
        acks = Acks()
        body, view = dialog(bullet_id, EDITED, None)
        await slack.on_edited(acks, body, view, web_client(fake))
        assert acks.calls == [{}]
    assert told(fake) == [
        (REVIEW, LEAD, f"bullet '{done.id}' is active, not proposed", None),
        (REVIEW, LEAD, scope_problem("team:red"), None),
    ]
    assert fake.calls_to("chat.update") == []
    after = await store.get(old.id)
    assert after is not None and (after.status, after.content) == ("proposed", "Old scope rules")

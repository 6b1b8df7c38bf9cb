"""The playbook edit dialog's submission is checked like every other way into the
playbook (``store.playbook.rules``): through the real bolt app with signed requests, a
bad field is answered with bolt's ``response_action: errors`` (one line under the field,
naming what is allowed) and nothing in the store changes; an approver's good edit
changes the bullet; a non-approver's submission is refused whatever it holds.
Payloads as in ``test_playbook_authority.py`` (``view_submission`` in Slack's documented
shape, invented values).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.decisions._playbook_dialog import MAX_SCOPE
from bot.decisions.playbook_review import NOT_ALLOWED
from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from store.playbook.rules import SCOPES, content_problem, scope_problem
from tests.bot.scenarios.test_playbook_authority import (
    EDITED,
    TEXT,
    click,
    proposed,
    review_settings,
    unchanged,
)
from tests.bot.scenarios.test_slack_feedback import ANALYST, LEAD, REVIEW, posted_ts, submission
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness

TS = "1700000500.000100"
EMPTY = "content is empty: write the instruction or fact (one or two sentences)"


def values(content: str, scope: str | None = None) -> dict[str, Any]:
    """The dialog's state as Slack sends it (``scope`` None: a dialog without the field)."""
    state: dict[str, Any] = {"content": {"content": {"type": "plain_text_input", "value": content}}}
    if scope is not None:
        state["scope"] = {"scope": {"type": "plain_text_input", "value": scope}}
    return state


async def submitted_edit(
    tmp_path: Path, fake: FakeSlackAPI, db: Database, content: str, scope: str | None, user: str
) -> tuple[PlaybookStore, PlaybookBullet, int, str]:
    """A proposal, and ``user``'s dialog for it sent with ``content`` and ``scope``
    through the whole app: the store, the proposal, the answer's status and body."""
    settings = review_settings(tmp_path, fake, [LEAD])
    store, review, proposal = await proposed(db, settings)
    meta = json.dumps({"id": proposal.id, "channel": REVIEW, "ts": TS})
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        status, body = await h.action(
            submission("playbook_edit", meta, values(content, scope), user)
        )
        await h.settle()
    return store, proposal, status, body


# (case, content, scope, the field in error, its one line)
INVALID = [
    ("empty content", "", "global", "content", EMPTY),
    ("blank content", "  \n\t ", "global", "content", EMPTY),
    ("blank content, no scope field", "   ", None, "content", EMPTY),
    (
        "unknown scope",
        EDITED,
        "galactic",
        "scope",
        f"scope 'galactic' is not allowed; allowed: {SCOPES}",
    ),
    (
        "source: without a value",
        EDITED,
        "source:",
        "scope",
        f"scope 'source:' needs a value after 'source:'; allowed: {SCOPES}",
    ),
    (
        "source: with blanks only",
        EDITED,
        "  source:   ",
        "scope",
        f"scope 'source:' needs a value after 'source:'; allowed: {SCOPES}",
    ),
    (
        "overlong scope",
        EDITED,
        "source:" + "a" * 80,
        "scope",
        f"scope is over {MAX_SCOPE} characters; allowed: {SCOPES}",
    ),
]


@pytest.mark.parametrize(("case", "content", "scope", "field", "line"), INVALID)
async def test_a_bad_field_keeps_the_dialog_open_with_one_line_and_changes_nothing(
    case: str,
    content: str,
    scope: str | None,
    field: str,
    line: str,
    tmp_path: Path,
    fake: FakeSlackAPI,
    db: Database,
) -> None:
    store, proposal, status, body = await submitted_edit(tmp_path, fake, db, content, scope, LEAD)
    assert status == 200
    answer = json.loads(body)
    assert answer["response_action"] == "errors" and list(answer["errors"]) == [field]
    said = answer["errors"][field]
    assert said == line and "\n" not in said
    if field == "scope":
        assert said.endswith(f"allowed: {SCOPES}")  # names the allowed values
        assert scope_problem(scope or "") is not None  # the same rule as the CLI and import
    else:
        assert said == content_problem(content)
    after = await unchanged(store, proposal.id)
    assert after.scope == "global" and "edited_by" not in after.provenance
    assert fake.calls_to("chat.update") == [] and fake.calls_to("chat.postEphemeral") == []


async def test_an_approvers_good_edit_changes_the_text_and_scope_and_approves_it(
    tmp_path: Path, fake: FakeSlackAPI, db: Database
) -> None:
    settings = review_settings(tmp_path, fake, [LEAD])
    store, review, proposal = await proposed(db, settings)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db, review=review) as h:
        await review.post(proposal)
        ts = posted_ts(fake)
        await h.action(click("playbook_edit", proposal.id, ts, LEAD, REVIEW))
        await h.settle()
        (opened,) = fake.calls_to("views.open")
        view = opened.args["view"]
        shown = {b["block_id"]: b["element"]["initial_value"] for b in view["blocks"]}
        assert shown == {"content": TEXT, "scope": "global"}  # the dialog shows both
        status, body = await h.action(
            submission(
                "playbook_edit",
                view["private_metadata"],
                values(f"  {EDITED}\n", " source:guardduty "),
                LEAD,
            )
        )
        await h.settle()
    assert status == 200 and not body.strip()  # an empty ack closes the dialog
    edited = await store.get(proposal.id)
    assert edited is not None
    assert (edited.status, edited.content, edited.scope) == ("active", EDITED, "source:guardduty")
    assert (edited.provenance["edited_by"], edited.provenance["approved_by"]) == (LEAD, LEAD)
    [update] = fake.calls_to("chat.update")
    assert update.args["text"] == f"Playbook proposal {proposal.id}: edited and approved"


@pytest.mark.parametrize(
    ("case", "content", "scope"),
    [
        ("a good edit", EDITED, "source:guardduty"),
        ("a bad scope", EDITED, "galactic"),
        ("blank content", " ", "global"),
    ],
)
async def test_a_non_approvers_submission_is_refused_whatever_it_holds(
    case: str, content: str, scope: str, tmp_path: Path, fake: FakeSlackAPI, db: Database
) -> None:
    store, proposal, status, body = await submitted_edit(
        tmp_path, fake, db, content, scope, ANALYST
    )
    assert status == 200
    assert json.loads(body) == {"response_action": "errors", "errors": {"content": NOT_ALLOWED}}
    after = await unchanged(store, proposal.id)
    assert after.scope == "global" and "edited_by" not in after.provenance
    assert fake.calls_to("chat.update") == []

"""Helpers for driving socbot's Slack handlers alone (no bolt app): a recording ``ack``,
interactivity bodies made from the recorded ``block_actions`` delivery
(``tests/fixtures/slack/block_actions_feedback.json``) with the ids a test needs, and
what socbot told people privately. The handlers talk to the Slack fake through the
real ``AsyncWebClient``."""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import load

TRIGGER = "1234567890.1234567890.abcdef"  # the recorded delivery's trigger_id
REVIEW, SOC = "CREVIEW01", "CSOC00001"
LEAD, ANALYST = "ULEAD0001", "UANALYST1"
REVIEW_TS = "1700000500.000100"  # a review message (playbook proposal, suppression)
# Who may decide in a review channel: (user, channel, approvers, review channel, allowed).
MAY_DECIDE = [
    (LEAD, REVIEW, [LEAD], REVIEW, True),
    (ANALYST, REVIEW, [LEAD], REVIEW, False),  # not an approver
    (LEAD, SOC, [LEAD], REVIEW, False),  # an approver, elsewhere
    (LEAD, REVIEW, [], REVIEW, False),  # no approvers: nobody
    ("", REVIEW, [""], REVIEW, False),  # an approver set from an empty ${VAR}: nobody
    (LEAD, "", [LEAD], "", False),  # a review channel from an empty ${VAR}: nowhere
    (LEAD, REVIEW, [LEAD], None, False),  # no review channel: no decisions in Slack
]


class Acks:
    """bolt's ``ack``: the keyword arguments of every call, in order."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)


def web_client(fake: FakeSlackAPI) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.base_url)


def click(action_id: str, value: str | None, **where: Any) -> dict[str, Any]:
    """A button click: ``user``, ``channel``, ``ts``, ``thread_ts``, ``trigger_id`` set
    what is given (``None`` removes the field); ``value=None`` removes the value."""
    body = load("block_actions_feedback.json")
    action = body["actions"][0]
    action["action_id"] = action_id
    if value is None:
        del action["value"]
    else:
        action["value"] = value
    if "user" in where:
        body["user"] = None if where["user"] is None else {**body["user"], "id": where["user"]}
    if "channel" in where:
        body["channel"] = None if where["channel"] is None else {"id": where["channel"]}
    for key in ("ts", "thread_ts"):
        if key in where:
            body["message"][key] = where[key]
            if where[key] is None:
                del body["message"][key]
    if "message" in where:  # None: no message at all
        body["message"] = where["message"]
    if "trigger_id" in where:
        body["trigger_id"] = where["trigger_id"]
    return body


def told(fake: FakeSlackAPI) -> list[tuple[str, str, str, str | None]]:
    """(channel, user, text, thread_ts) of every ephemeral note socbot sent."""
    return [
        (c.args["channel"], c.args["user"], c.args["text"], c.args.get("thread_ts"))
        for c in fake.calls_to("chat.postEphemeral")
    ]

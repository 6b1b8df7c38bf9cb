"""Hostile bodies to ``/slack/events`` in HTTP mode: a clear 4xx, nothing stored, nothing logged.

Each body is correctly signed with the signing secret (the attacker here is whoever
holds it, or Slack sending something unexpected), POSTed into the real bolt app
behind socbot's aiohttp server. The bodies are invented; the well-formed parts
follow the Events API and interactivity payloads in ``tests/fixtures/slack``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.parse
from typing import Any

import pytest
from sqlalchemy import func, select

from store.schema import AlertRow, SeenEvent
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import (
    SIGNING_SECRET,
    RecordingInvestigate,
    SlackHarness,
    load,
)

MARK = "zq-hostile-slack-marker"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


def mention(**event: Any) -> bytes:
    payload = load("app_mention.json")
    payload["event"] = {**payload["event"], "text": f"<@UBOT0001> {MARK}", **event}
    return json.dumps(payload).encode()


def envelope(**fields: Any) -> bytes:
    return json.dumps({**load("app_mention.json"), **fields}).encode()


def action(**fields: Any) -> bytes:
    payload = {**load("block_actions_feedback.json"), **fields}
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def form(payload: bytes) -> bytes:
    return b"payload=" + urllib.parse.quote_from_bytes(payload).encode()


HOSTILE = [
    # (id, content type, body, status, reason)
    ("not-json", JSON, b'{"type": "event_callback", ' + MARK.encode(), 400, "not valid JSON"),
    ("nested-arrays", JSON, b"[" * 500_000 + b"]" * 500_000, 400, "nested deeper than 64"),
    ("nested-objects", JSON, b'{"a":' * 100_000 + b"1" + b"}" * 100_000, 400, "nested deeper"),
    ("nested-event", JSON, mention(blocks=json.loads("[" * 70 + "]" * 70)), 400, "nested deeper"),
    ("array-top-level", JSON, b"[1, 2]", 400, "non-empty JSON object"),
    ("string-top-level", JSON, json.dumps(MARK).encode(), 400, "non-empty JSON object"),
    ("invalid-utf8", JSON, b'{"type":"' + MARK.encode() + b'\xff"}', 400, "not valid UTF-8"),
    ("duplicate-keys", JSON, b'{"type":"event_callback","type":"block_actions"}', 400, "twice"),
    ("nan", JSON, b'{"type":"event_callback","event_time":NaN}', 400, "NaN"),
    ("empty-body", JSON, b"", 400, "body is empty"),
    ("event-not-object", JSON, envelope(event=MARK), 400, "body.event must be an object"),
    ("event-missing", JSON, envelope(event=None), 400, "body.event is missing"),
    ("authorizations-int", JSON, envelope(authorizations=5), 400, "list of objects"),
    ("authorizations-ints", JSON, envelope(authorizations=[5]), 400, "list of objects"),
    ("enterprise-int", JSON, envelope(enterprise=5), 400, "body.enterprise"),
    ("team-id-object", JSON, envelope(team_id={"id": MARK}), 400, "body.team_id"),
    ("event-id-list", JSON, envelope(event_id=[MARK]), 400, "body.event_id"),
    ("channel-int", JSON, mention(channel=5), 400, "body.event.channel"),
    ("channel-object-id-int", JSON, mention(channel={"id": 5}), 400, "body.event.channel.id"),
    ("user-list", JSON, mention(user=[1]), 400, "body.event.user"),
    ("ts-object", JSON, mention(ts={}), 400, "body.event.ts"),
    ("thread-ts-int", JSON, mention(thread_ts=17), 400, "body.event.thread_ts"),
    ("text-object", JSON, mention(text={"t": MARK}), 400, "body.event.text"),
    ("attachments-int", JSON, mention(attachments=5), 400, "body.event.attachments"),
    ("blocks-string", JSON, mention(blocks=MARK), 400, "body.event.blocks"),
    ("message-string", JSON, mention(message=MARK), 400, "body.event.message"),
    ("form-bad-json", FORM, b"payload=%7Bbad" + MARK.encode(), 400, "payload is not valid JSON"),
    ("form-array", FORM, b"payload=%5B1%5D", 400, "payload must be a non-empty JSON object"),
    ("form-deep", FORM, form(b"[" * 100_000 + b"]" * 100_000), 400, "payload is nested deeper"),
    ("form-no-payload", FORM, b"payloadx=" + MARK.encode(), 400, "without a payload field"),
    ("form-bad-encoding", FORM, b"payload=%ff%fe", 400, "not a valid form encoding"),
    ("form-no-equals", FORM, b"payload&" + MARK.encode(), 400, "not a valid form encoding"),
    ("actions-int", FORM, action(actions=5), 400, "body.actions"),
    ("actions-ints", FORM, action(actions=[5]), 400, "body.actions"),
    ("action-id-int", FORM, action(actions=[{"action_id": 5}]), 400, "action_id"),
    ("user-string", FORM, action(user=MARK), 400, "body.user must be an object"),
    ("user-id-int", FORM, action(user={"id": 5}), 400, "body.user.id"),
    ("team-string", FORM, action(team=MARK), 400, "body.team must be an object"),
    ("channel-list", FORM, action(channel=[MARK]), 400, "body.channel"),
    ("container-int", FORM, action(container=5), 400, "body.container"),
    ("message-ts-int", FORM, action(message={"ts": 5}), 400, "body.message.ts"),
    ("view-string", FORM, action(view=MARK), 400, "body.view"),
    ("text-plain", "text/plain", mention(), 415, "content type must be"),
    ("no-content-type", "", mention(), 415, "content type must be"),
    ("multipart", "multipart/form-data; boundary=x", mention(), 415, "content type must be"),
]


def signed(
    raw: bytes, *, secret: str = SIGNING_SECRET, timestamp: str | None = None
) -> dict[str, str]:
    """Slack's v0 signature, computed as its docs describe, over the raw bytes."""
    ts = timestamp or str(int(time.time()))
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + digest.hexdigest()}


async def stored_rows(h: SlackHarness) -> int:
    async with h.db.session() as session:
        seen = await session.scalar(select(func.count()).select_from(SeenEvent))
        alerts = await session.scalar(select(func.count()).select_from(AlertRow))
    return int(seen or 0) + int(alerts or 0)


async def post(h: SlackHarness, raw: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    response = await h.client.post("/slack/events", data=raw, headers=headers)
    return response.status, await response.json()


@pytest.mark.parametrize(
    ("content_type", "raw", "status", "reason"),
    [h[1:] for h in HOSTILE],
    ids=[h[0] for h in HOSTILE],
)
async def test_signed_malformed_bodies_get_a_clear_4xx_and_leave_no_trace(
    harness: SlackHarness,
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    caplog: pytest.LogCaptureFixture,
    content_type: str,
    raw: bytes,
    status: int,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {"Content-Type": content_type, **signed(raw)} if content_type else signed(raw)
    got, body = await post(harness, raw, headers)
    assert (got, MARK in body["error"]) == (status, False)
    assert reason in body["error"]
    await harness.settle()
    assert await stored_rows(harness) == 0
    assert fake.calls == [] and investigate.calls == []
    assert all(MARK not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Slack-Request-Timestamp": "not-a-number", "X-Slack-Signature": "v0=00"},
        {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": ""},
        {"X-Slack-Request-Timestamp": "1" * 40, "X-Slack-Signature": "v0=00"},
    ],
    ids=["unsigned", "timestamp-not-a-number", "empty-headers", "huge-timestamp"],
)
async def test_unsigned_malformed_bodies_are_401_before_any_parsing(
    harness: SlackHarness, headers: dict[str, str]
) -> None:
    raw = b"[" * 100_000
    got, body = await post(harness, raw, {"Content-Type": JSON, **headers})
    assert got == 401 and body == {"error": "invalid or stale request signature"}
    assert await stored_rows(harness) == 0


@pytest.mark.parametrize(
    ("secret", "age_s"), [("other-secret", 0), (SIGNING_SECRET, 301)], ids=["secret", "stale"]
)
async def test_a_body_signed_with_another_secret_or_too_long_ago_is_401(
    harness: SlackHarness, secret: str, age_s: int
) -> None:
    raw = b"[" * 100_000
    headers = signed(raw, secret=secret, timestamp=str(int(time.time()) - age_s))
    got, _ = await post(harness, raw, {"Content-Type": JSON, **headers})
    assert got == 401


async def test_well_formed_bodies_still_pass_the_checks(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    raw = mention()
    headers = {"Content-Type": f"{JSON}; charset=utf-8", **signed(raw)}
    response = await harness.client.post("/slack/events", data=raw, headers=headers)
    assert response.status == 200
    await harness.settle()
    assert len(investigate.calls) == 1
    raw = action()
    response = await harness.client.post(
        "/slack/events", data=raw, headers={"Content-Type": FORM, **signed(raw)}
    )
    assert response.status == 200


async def test_deep_json_in_a_forwarded_alert_message_is_read_as_text_not_parsed(
    harness: SlackHarness, investigate: RecordingInvestigate
) -> None:
    message = load("bot_message_attachments.json")
    message["event"]["text"] = "```" + '{"a":' + "[" * 20_000 + "]" * 20_000 + "}```"
    raw = json.dumps(message).encode()
    headers = {"Content-Type": JSON, **signed(raw)}
    response = await harness.client.post("/slack/events", data=raw, headers=headers)
    assert response.status == 200
    await harness.settle()
    assert len(investigate.calls) == 1
    alert = investigate.calls[0][2]
    assert alert is not None and alert.title == "UnauthorizedAccess:EC2/TorIPCaller"

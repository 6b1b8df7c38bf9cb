"""``bot.transport._slack_body`` on its own: the signature at the edges of its age and format, the
order of the checks, the exact status and reason of each refusal of the hostile table
(``test_slack_hostile.py`` sends the same bodies through the real server), the body
shapes that pass, and who clicked. Payloads are Slack's samples (tests/fixtures/slack)."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

import pytest

from bot.slack.interaction import clicker
from bot.transport._slack_body import (
    MAX_AGE_S,
    BadSlackRequest,
    check_slack_request,
    envelope_problem,
    signature_valid,
)
from tests.bot.scenarios.test_slack_hostile import (
    FORM,
    HOSTILE,
    JSON,
    MARK,
    action,
    load,
    mention,
    signed,
)
from tests.slack_support import SIGNING_SECRET

NOW = 1_764_000_000


def refusal(raw: bytes, headers: dict[str, str]) -> tuple[int, str]:
    with pytest.raises(BadSlackRequest) as info:
        check_slack_request(raw, headers, SIGNING_SECRET)
    return info.value.status, str(info.value)


@pytest.mark.parametrize(
    ("content_type", "raw", "status", "reason"),
    [h[1:] for h in HOSTILE],
    ids=[h[0] for h in HOSTILE],
)
def test_each_hostile_body_is_refused_with_its_reason(
    content_type: str, raw: bytes, status: int, reason: str
) -> None:
    headers = {"Content-Type": content_type, **signed(raw)} if content_type else signed(raw)
    got_status, got_reason = refusal(raw, headers)
    assert got_status == status and reason in got_reason and MARK not in got_reason


@pytest.mark.parametrize(
    ("age", "valid"),
    [(0, True), (MAX_AGE_S, True), (MAX_AGE_S + 1, False), (-MAX_AGE_S, True), (-301, False)],
)
def test_a_signature_is_valid_for_five_minutes_either_way(age: int, valid: bool) -> None:
    raw = mention()
    headers = signed(raw, timestamp=str(NOW - age))
    assert MAX_AGE_S == 300
    assert signature_valid(raw, headers, SIGNING_SECRET, now=NOW) is valid


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Slack-Request-Timestamp": str(NOW)},  # no signature
        {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": "v0=00"},
        {"X-Slack-Request-Timestamp": "1" * 13, "X-Slack-Signature": "v0=00"},
        {"X-Slack-Request-Timestamp": f" {NOW}", "X-Slack-Signature": "v0=00"},
    ],
    ids=["none", "no-signature", "empty-timestamp", "13-digits", "padded"],
)
def test_a_missing_or_malformed_header_is_invalid(headers: dict[str, str]) -> None:
    assert not signature_valid(b"{}", headers, SIGNING_SECRET, now=NOW)


def test_the_signature_covers_secret_timestamp_and_every_byte() -> None:
    raw = mention()
    good = signed(raw, timestamp=str(NOW))
    assert signature_valid(raw, good, SIGNING_SECRET, now=NOW)
    assert signature_valid(raw, good, SIGNING_SECRET) is False  # NOW is long ago
    assert not signature_valid(raw + b" ", good, SIGNING_SECRET, now=NOW)
    assert not signature_valid(raw, good, SIGNING_SECRET + "x", now=NOW)
    moved = {**good, "X-Slack-Request-Timestamp": str(NOW + 1)}
    assert not signature_valid(raw, moved, SIGNING_SECRET, now=NOW)
    bare = {**good, "X-Slack-Signature": good["X-Slack-Signature"].removeprefix("v0=")}
    assert not signature_valid(raw, bare, SIGNING_SECRET, now=NOW)
    odd = {**good, "X-Slack-Signature": "v0=\u00e9\ud800"}  # not ASCII, not even UTF-8
    assert not signature_valid(raw, odd, SIGNING_SECRET, now=NOW)


def test_the_signature_is_checked_before_anything_is_read() -> None:
    unsigned = {"Content-Type": "text/plain", "X-Slack-Request-Timestamp": str(int(time.time()))}
    assert refusal(b"\xff[[[", unsigned) == (401, "invalid or stale request signature")
    raw = b"\xff"
    assert refusal(raw, {"Content-Type": "text/plain", **signed(raw)}) == (
        415,
        f"content type must be {JSON} or {FORM}",
    )
    assert refusal(raw, {"Content-Type": JSON, **signed(raw)}) == (400, "body is not valid UTF-8")


@pytest.mark.parametrize(
    "content_type",
    [JSON, "Application/JSON; charset=utf-8", f" {JSON} ;charset=utf-8"],
)
def test_a_json_event_passes_whatever_the_content_types_spelling(content_type: str) -> None:
    raw = mention()
    assert (
        check_slack_request(
            raw, {"Content-Type": content_type, **signed(raw)}, "x" * 0 + SIGNING_SECRET
        )
        == raw.decode()
    )


@pytest.mark.parametrize(
    ("content_type", "raw", "reason"),
    [
        (FORM, b"", "body is empty"),
        (JSON, b"", "body is empty"),
        (FORM, b"payload=", "payload is not valid JSON"),  # a blank payload is a payload
        (FORM, b"payload=%ff%fe", "body is not a valid form encoding"),
        (f"{JSON}; charset=utf-8; boundary=x", b"x", "body is not valid JSON"),
    ],
)
def test_the_exact_reasons_of_empty_blank_and_mis_encoded_bodies(
    content_type: str, raw: bytes, reason: str
) -> None:
    assert refusal(raw, {"Content-Type": content_type, **signed(raw)}) == (400, reason)


def test_form_bodies_that_pass() -> None:
    clicked = action()
    assert check_slack_request(clicked, {"Content-Type": FORM, **signed(clicked)}, SIGNING_SECRET)
    command = b"command=%2Fsocbot&text=investigate+185.220.101.42&user_id=U0ALICE1"
    headers = {"Content-Type": FORM, **signed(command)}
    assert check_slack_request(command, headers, SIGNING_SECRET) == command.decode()
    as_json = json.dumps(load("app_mention.json")).encode()  # JSON sent as a form: bolt reads it
    assert check_slack_request(as_json, {"Content-Type": FORM, **signed(as_json)}, SIGNING_SECRET)
    no_payload = b"text=payload+please&user_id=U0ALICE1"  # "payload" only in a value
    headers = {"Content-Type": FORM, **signed(no_payload)}
    assert refusal(no_payload, headers) == (400, "form body without a payload field")


def envelope(**fields: Any) -> dict[str, Any]:
    return {**load("app_mention.json"), **fields}


def clicked(**fields: Any) -> dict[str, Any]:
    return {**load("block_actions_feedback.json"), **fields}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (envelope(), None),
        (clicked(), None),
        (envelope(enterprise="E0ENT001"), None),
        (envelope(enterprise={"id": "E0ENT001"}), None),
        (envelope(enterprise=None), None),
        (envelope(enterprise=5), "body.enterprise must be a string or an object"),
        (envelope(event=None, type="url_verification"), None),
        (envelope(event=None), "body.event is missing"),
        (envelope(event=[]), "body.event must be an object"),
        (envelope(authorizations=None), None),
        (
            envelope(authorizations=[{"team_id": 5}]),
            "body.authorizations[].team_id must be a string",
        ),
        (envelope(authorizations=[5]), "body.authorizations must be a list of objects"),
        (
            envelope(authorizations={"team_id": "T1"}),
            "body.authorizations must be a list of objects",
        ),
        (clicked(actions=[{"text": {"type": "plain_text", "text": "Good"}}]), None),  # a button
        (clicked(actions=[{"action_id": 5}]), "body.actions[].action_id must be a string"),
        (clicked(team={"id": 5}), "body.team.id must be a string"),
        (clicked(team=None), None),
        (clicked(message={"blocks": "x"}), "body.message.blocks must be a list"),
        (clicked(message={"text": {"t": 1}}), "body.message.text must be a string"),
        (clicked(view={"callback_id": 7}), "body.view.callback_id must be a string"),
        (clicked(container="x"), "body.container must be an object"),
        (envelope(blocks={}), "body.blocks must be a list"),
        (envelope(attachments="x"), "body.attachments must be a list"),
        (envelope(api_app_id=5), "body.api_app_id must be a string"),
        (envelope(id=5), "body.id must be a string"),
    ],
)
def test_the_envelope_types(body: dict[str, Any], problem: str | None) -> None:
    assert envelope_problem(body) == problem


def event(**fields: Any) -> dict[str, Any]:
    body = load("app_mention.json")
    return {**body, "event": {**body["event"], **fields}}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (event(channel={"id": "C0SOC001"}), None),
        (event(channel={"id": None}), None),
        (event(channel={"id": 5}), "body.event.channel.id must be a string"),
        (event(user={"id": 5}), "body.event.user.id must be a string"),
        (event(user=5), "body.event.user must be a string or an object"),
        (event(channel=None), None),
        (event(team=5), "body.event.team must be a string"),
        (event(user_team=5), "body.event.user_team must be a string"),
        (event(source_team=[]), "body.event.source_team must be a string"),
        (event(bot_id=5), "body.event.bot_id must be a string"),
        (event(app_id=5), "body.event.app_id must be a string"),
        (event(client_msg_id=5), "body.event.client_msg_id must be a string"),
        (event(files={}), "body.event.files must be a list"),
        (event(files=[]), None),
        (event(message={"ts": 5}), "body.event.message.ts must be a string"),
        (event(previous_message={"user": 5}), None),  # only ids and known strings are typed
        (
            event(previous_message={"user_id": 5}),
            "body.event.previous_message.user_id must be a string",
        ),
        (event(item={"channel": 5}), None),
        (event(edited={"ts": 5}), "body.event.edited.ts must be a string"),
        (event(bot_profile={"app_id": 5}), "body.event.bot_profile.app_id must be a string"),
        (event(view={"id": 5}), "body.event.view.id must be a string"),
        (event(item="x"), "body.event.item must be an object"),
        (event(text={"t": 1}), "body.event.text must be a string"),
    ],
)
def test_the_event_types(body: dict[str, Any], problem: str | None) -> None:
    assert envelope_problem(body) == problem


@pytest.mark.parametrize(
    ("body", "who"),
    [
        ({"user": {"id": "U0ALICE1", "name": "alice"}}, "U0ALICE1"),
        ({"user": {"name": "alice"}}, ""),
        ({"user": {"id": None}}, ""),
        ({"user": None}, ""),
        ({}, ""),
    ],
)
def test_who_clicked(body: dict[str, Any], who: str) -> None:
    assert clicker(body) == who


def test_the_samples_clicker() -> None:
    sample = load("block_actions_feedback.json")
    assert clicker(sample) == sample["user"]["id"] != ""
    form = urllib.parse.urlencode({"payload": json.dumps(sample)}).encode()
    assert check_slack_request(form, {"Content-Type": FORM, **signed(form)}, SIGNING_SECRET)

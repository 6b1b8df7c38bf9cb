"""``POST /alerts``: auth, size, bad JSON, each known alert format, card + thread.

The real server and app (``create_socbot``) on 127.0.0.1, Web API = ``FakeSlackAPI``,
real SQLite; the investigation is a recording stand-in (engine flows:
``test_slack_flows.py``).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.work.worker import ThreadRef
from store.schema import AlertRow
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import (
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    RecordingInvestigate,
    SlackHarness,
    make_settings,
)

ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"
AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}


def alert_file(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ALERTS / name).read_text())
    return data


def eventbridge() -> dict[str, Any]:
    return {
        "version": "0",
        "id": "c8c4daa7-a20c-2f03-0070-b7393dd542ad",
        "detail-type": "GuardDuty Finding",
        "source": "aws.guardduty",
        "account": "783957204773",
        "time": "2023-04-16T06:12:00Z",
        "region": "ap-northeast-1",
        "resources": [],
        "detail": alert_file("leveret-guardduty-finding.json"),
    }


@pytest.fixture
async def harness(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> AsyncIterator[SlackHarness]:
    settings = make_settings(tmp_path, fake.base_url, max_alert_bytes=64 * 1024)
    async with SlackHarness(fake, settings, investigate) as h:
        yield h


async def stored_alerts(h: SlackHarness) -> int:
    async with h.db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(AlertRow)) or 0)


FORMATS = [
    ("guardduty-finding", lambda: alert_file("leveret-guardduty-finding.json"), None, "guardduty"),
    ("guardduty-findings-list", lambda: alert_file("leveret-guardduty.json"), None, "guardduty"),
    ("guardduty-eventbridge", eventbridge, "guardduty", "guardduty"),
    ("scc-notification", lambda: alert_file("leveret-scc.json"), "scc", "scc"),
    ("scc-mini", lambda: alert_file("leveret-scc_mini.json"), None, "scc"),
    (
        "generic",
        lambda: {"title": "Impossible travel for alice", "severity": "high", "src_ip": "8.8.4.4"},
        "generic",
        "generic",
    ),
    ("unknown-shape", lambda: {"foo": {"bar": 1}}, "mysiem", "mysiem"),
]


@pytest.mark.parametrize(
    ("make", "hint", "source"), [f[1:] for f in FORMATS], ids=[f[0] for f in FORMATS]
)
async def test_each_format_is_stored_carded_and_investigated_in_the_card_thread(
    harness: SlackHarness,
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    make: Any,
    hint: str | None,
    source: str,
) -> None:
    url = "/alerts" + (f"?source={hint}" if hint else "")
    response = await harness.client.post(url, json=make(), headers=AUTH)
    assert response.status == 202
    alert_id = (await response.json())["alert_id"]
    await harness.settle()

    card = fake.calls_to("chat.postMessage")[0].args
    assert card["channel"] == WEBHOOK_CHANNEL and "thread_ts" not in card
    assert (card["unfurl_links"], card["unfurl_media"]) == (False, False)
    assert "link_names" not in card
    stored = await harness.app.alerts.get(alert_id)
    assert stored is not None and stored.source == source
    card_ts = stored.slack_ts
    assert stored.slack_channel == WEBHOOK_CHANNEL and card_ts
    thread, _, alert = investigate.calls[0]
    assert thread == ThreadRef(WEBHOOK_CHANNEL, card_ts)
    assert alert is not None and alert.id == alert_id
    assert await harness.app.store.is_known_thread(WEBHOOK_CHANNEL, card_ts)


def deep(levels: int) -> str:
    return '{"a":' + "[" * levels + "]" * levels + "}"


# Envelopes whose content is JSON in a string: the nesting inside counts too.
DEEP_ENVELOPES = [
    (
        "pubsub-deep-data",
        {
            "message": {"data": base64.b64encode(deep(20_000).encode()).decode()},
            "subscription": "projects/p/subscriptions/s",
        },
    ),
    (
        "sns-deep-message",
        {"Type": "Notification", "TopicArn": "arn:aws:sns:x", "Message": deep(20_000)},
    ),
]


@pytest.mark.parametrize("data", [d[1] for d in DEEP_ENVELOPES], ids=[d[0] for d in DEEP_ENVELOPES])
async def test_deep_json_inside_an_envelope_is_not_unwrapped_and_never_crashes(
    harness: SlackHarness, data: dict[str, Any]
) -> None:
    response = await harness.client.post("/alerts", json=data, headers=AUTH)
    assert response.status == 202  # kept as the envelope itself, its content as raw data
    await harness.settle()
    assert await stored_alerts(harness) == 1


REJECTIONS = [
    ("no-token", {}, b"{}", 401),
    ("wrong-token", {"Authorization": "Bearer nope"}, b"{}", 401),
    ("basic-scheme", {"Authorization": f"Basic {WEBHOOK_TOKEN}"}, b"{}", 401),
    ("not-json", AUTH, b"this is not json", 400),
    ("json-array", AUTH, b"[1, 2]", 400),
    ("empty-object", AUTH, b"{}", 400),
    ("too-large", AUTH, json.dumps({"title": "x" * 70_000}).encode(), 413),
]
# Hostile bodies: each a class of input that crashed a parser or a store somewhere.
MARK = "zq-hostile-marker"
HOSTILE = [
    ("nested-arrays", b"[" * 30_000 + b"]" * 30_000, "nested deeper than 64 levels"),
    ("nested-objects", b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "nested deeper than 64 levels"),
    ("nested-in-alert", b'{"title":"x","d":' + b"[" * 65 + b"]" * 65 + b"}", "deeper than 64"),
    ("unclosed-deep", b'{"t":' + b"[" * 60_000, "nested deeper"),
    ("brackets-in-strings-are-text", b'{"t":"' + b"[" * 60_000 + b'",', "not valid JSON"),
    ("invalid-utf8", b'{"title":"' + MARK.encode() + b'\xff\xfe"}', "not valid UTF-8"),
    ("latin1", ('{"title":"caf\u00e9 ' + MARK + '"}').encode("latin-1"), "not valid UTF-8"),
    ("utf8-bom", ("\ufeff" + json.dumps({"title": MARK})).encode(), "not valid JSON"),
    ("lone-surrogate", b'{"title":"\\ud800' + MARK.encode() + b'"}', "unpaired surrogate"),
    ("nul-character", b'{"title":"a\\u0000' + MARK.encode() + b'"}', "NUL character"),
    ("duplicate-keys", b'{"severity":"low","severity":"critical"}', "same key twice"),
    ("nan", b'{"title":"x","score":NaN}', "NaN and Infinity"),
    ("infinity", b'{"title":"x","score":-Infinity}', "NaN and Infinity"),
    ("float-overflow", b'{"title":"x","score":1e999}', "out of range"),
    ("huge-integer", b'{"title":"x","n":' + b"9" * 5_000 + b"}", "longer than 100 digits"),
    ("string-top-level", json.dumps(MARK).encode(), "non-empty JSON object"),
    ("number-top-level", b"12345", "non-empty JSON object"),
    ("null-top-level", b"null", "non-empty JSON object"),
    ("truncated", b'{"title": "' + MARK.encode(), "not valid JSON"),
    ("trailing-garbage", b'{"title":"x"} {"title":"y"}', "not valid JSON"),
    ("empty-body", b"", "not valid JSON"),
]


@pytest.mark.parametrize(
    ("headers", "body", "status"), [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS]
)
async def test_rejected_requests_store_nothing(
    harness: SlackHarness,
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    headers: dict[str, str],
    body: bytes,
    status: int,
) -> None:
    response = await harness.client.post(
        "/alerts", data=body, headers={"Content-Type": "application/json", **headers}
    )
    assert response.status == status
    assert (await response.json())["error"]  # a reason, always
    if status == 401:
        assert response.headers["WWW-Authenticate"] == "Bearer"
    await harness.settle()
    assert await stored_alerts(harness) == 0
    assert fake.calls == [] and investigate.calls == []


@pytest.mark.parametrize(("body", "reason"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
async def test_hostile_bodies_get_a_clear_400_store_nothing_and_log_nothing_of_the_body(
    harness: SlackHarness,
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    caplog: pytest.LogCaptureFixture,
    body: bytes,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    response = await harness.client.post(
        "/alerts", data=body, headers={"Content-Type": "application/json", **AUTH}
    )
    assert response.status == 400
    error = (await response.json())["error"]
    assert reason in error and MARK not in error
    await harness.settle()
    assert await stored_alerts(harness) == 0
    assert fake.calls == [] and investigate.calls == []
    assert all(MARK not in r.getMessage() for r in caplog.records)


async def test_nesting_up_to_the_limit_is_accepted(harness: SlackHarness) -> None:
    body = b'{"title":"deep","d":' + b"[" * 63 + b"1" + b"]" * 63 + b"}"
    response = await harness.client.post("/alerts", data=body, headers=AUTH)
    assert response.status == 202
    await harness.settle()
    assert await stored_alerts(harness) == 1


async def test_bad_source_hint_is_400(harness: SlackHarness) -> None:
    response = await harness.client.post(
        "/alerts?source=../../etc", json={"title": "x"}, headers=AUTH
    )
    assert response.status == 400
    assert await stored_alerts(harness) == 0


@pytest.mark.parametrize(
    ("slack", "variable"),
    [
        ({"webhook_token": None}, "SOCBOT_WEBHOOK_TOKEN"),
        ({"webhook_channel": None}, "webhook_channel"),
    ],
    ids=["no-token-configured", "no-channel-configured"],
)
async def test_webhook_disabled_until_configured(
    fake: FakeSlackAPI,
    investigate: RecordingInvestigate,
    tmp_path: Path,
    slack: dict[str, Any],
    variable: str,
) -> None:
    async with SlackHarness(
        fake, make_settings(tmp_path, fake.base_url, **slack), investigate
    ) as h:
        response = await h.client.post("/alerts", json={"title": "x"}, headers=AUTH)
        assert response.status == 503
        assert variable in (await response.json())["error"]
        assert await stored_alerts(h) == 0

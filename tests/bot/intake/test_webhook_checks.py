"""``POST /alerts``'s input checks one by one, on the handler alone (a real aiohttp
server on 127.0.0.1, the real parser; no Slack): the exact status and reason of each
refusal, the bearer scheme, the size limit at its last byte with and without a
Content-Length, the source hint, and what happens after a 202. The whole path (store,
card, thread) is ``tests/bot/scenarios/test_alert_webhook.py``'s. Tokens and alerts are
invented for the tests."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from alerts.parse import Alert, parse_alert
from bot.intake.alerts_endpoint import AlertWebhook
from config.service_settings import SlackSettings

TOKEN = "webhook-token-for-tests"
LIMIT = 200
AUTH = {"Authorization": f"Bearer {TOKEN}"}
UNAUTHORIZED = {"error": "missing or wrong bearer token"}
TOO_LARGE = {"error": f"alert body is larger than {LIMIT} bytes"}
BAD_SOURCE = {"error": "source must be a short word such as guardduty, scc or generic"}


@dataclass
class Received:
    accepted: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)
    dispatched: list[Alert] = field(default_factory=list)
    fail_dispatch: bool = False
    refuse: BaseException | None = None
    gate: asyncio.Event | None = None  # set: dispatching waits for it

    async def accept(self, data: dict[str, Any], hint: str | None) -> Alert:
        if self.refuse is not None:
            raise self.refuse
        self.accepted.append((data, hint))
        return parse_alert(data, hint)

    async def dispatch(self, alert: Alert) -> None:
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_dispatch:
            raise RuntimeError("Slack is down")
        self.dispatched.append(alert)


Post = Callable[..., Awaitable[tuple[int, Any, Any]]]


async def served(
    settings: SlackSettings, got: Received
) -> tuple[TestClient[Any, Any], AlertWebhook]:
    hook = AlertWebhook(settings, got.accept, got.dispatch)
    app = web.Application()
    app.router.add_post("/alerts", hook.handle)
    client: TestClient[Any, Any] = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    return client, hook


@pytest.fixture
def got() -> Received:
    return Received()


@pytest.fixture
async def post(got: Received) -> AsyncIterator[Post]:
    settings = SlackSettings(
        webhook_token=TOKEN, webhook_channel="C0ALERTS1", max_alert_bytes=LIMIT
    )
    client, hook = await served(settings, got)

    async def send(path: str = "/alerts", **kwargs: Any) -> tuple[int, Any, Any]:
        response = await client.post(path, **kwargs)
        body = await response.json()
        await hook.drain()
        return response.status, body, response.headers

    try:
        yield send
    finally:
        await client.close()


def body_of(size: int) -> bytes:
    """A JSON alert of exactly ``size`` bytes."""
    head = b'{"title":"Impossible travel","pad":"'
    return head + b"x" * (size - len(head) - 2) + b'"}'


@pytest.mark.parametrize(
    ("authorization", "ok"),
    [
        (f"Bearer {TOKEN}", True),
        (f"bearer {TOKEN}", True),  # the scheme is case-insensitive (RFC 9110)
        (f"BEARER  {TOKEN} ", True),
        (None, False),
        (TOKEN, False),  # no scheme
        (f"Basic {TOKEN}", False),
        (f"Bearer {TOKEN}x", False),
        (f"Bearer {TOKEN[:-1]}", False),
        ("Bearer ", False),
    ],
)
async def test_the_bearer_token(
    post: Post, got: Received, authorization: str | None, ok: bool
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    status, body, answer = await post(json={"title": "x"}, headers=headers)
    if ok:
        assert status == 202 and len(got.accepted) == 1
        return
    assert (status, body, answer["WWW-Authenticate"]) == (401, UNAUTHORIZED, "Bearer")
    assert got.accepted == []


async def test_the_token_is_checked_before_anything_else(post: Post, got: Received) -> None:
    status, body, _ = await post("/alerts?source=../x", data=b"{", headers={})
    assert (status, body) == (401, UNAUTHORIZED)
    status, body, _ = await post(data=body_of(LIMIT + 1), headers={})
    assert (status, body) == (401, UNAUTHORIZED)


@pytest.mark.parametrize(
    ("hint", "passed"),
    [("guardduty", "guardduty"), ("GuardDuty", "guardduty"), ("a" + "b" * 31, "a" + "b" * 31)],
)
async def test_a_source_hint_is_passed_lower_cased(
    post: Post, got: Received, hint: str, passed: str
) -> None:
    status, _, _ = await post(f"/alerts?source={hint}", json={"title": "x"}, headers=AUTH)
    assert status == 202 and got.accepted == [({"title": "x"}, passed)]


@pytest.mark.parametrize("hint", ["", "../../etc", "1scc", "a" + "b" * 32, "scc x", "scc%0a"])
async def test_a_source_hint_that_is_not_a_word_is_400(
    post: Post, got: Received, hint: str
) -> None:
    status, body, _ = await post(f"/alerts?source={hint}", json={"title": "x"}, headers=AUTH)
    assert (status, body) == (400, BAD_SOURCE) and got.accepted == []


async def test_no_hint_is_none(post: Post, got: Received) -> None:
    status, _, _ = await post(json={"title": "x"}, headers=AUTH)
    assert status == 202 and got.accepted == [({"title": "x"}, None)]


async def chunks(data: bytes) -> AsyncIterator[bytes]:
    """The body in two pieces, the second sent once the server has read the first."""
    yield data[:50]
    await asyncio.sleep(0.2)
    yield data[50:]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_the_size_limit_at_its_last_byte(post: Post, got: Received, chunked: bool) -> None:
    for size, expected in ((LIMIT, 202), (LIMIT + 1, 413)):
        data = body_of(size)
        assert len(data) == size
        status, body, _ = await post(data=chunks(data) if chunked else data, headers=AUTH)
        assert status == expected
        if expected == 413:
            assert body == TOO_LARGE
    assert len(got.accepted) == 1


async def test_bad_json_is_400_with_the_reason_and_logged_without_the_body(
    post: Post, got: Received, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.intake.alerts_endpoint")
    status, body, _ = await post(data=b'{"title":"secret-value","title":"x"}', headers=AUTH)
    assert status == 400 and "same key twice" in body["error"]
    assert [r.getMessage() for r in caplog.records] == [f"alert refused: {body['error']}"]
    assert got.accepted == []


@pytest.mark.parametrize(
    ("refusal", "error"),
    [
        (ValueError("no title"), "alert not understood: no title"),
        (RecursionError(), "alert not understood: nested too deeply"),
    ],
)
async def test_an_alert_the_parser_cannot_use_is_400(
    post: Post, got: Received, refusal: BaseException, error: str
) -> None:
    got.refuse = refusal
    status, body, _ = await post(json={"title": "x"}, headers=AUTH)
    assert (status, body) == (400, {"error": error}) and got.dispatched == []


async def test_an_accepted_alert_is_answered_then_dispatched(
    post: Post, got: Received, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.intake.alerts_endpoint")
    status, body, _ = await post("/alerts?source=generic", json={"title": "x"}, headers=AUTH)
    assert status == 202 and list(body) == ["alert_id"]
    assert [a.id for a in got.dispatched] == [body["alert_id"]]
    assert caplog.records[-1].getMessage() == (
        f"alert {body['alert_id']} accepted from webhook (source generic)"
    )
    got.fail_dispatch = True
    status, body, _ = await post(json={"title": "y"}, headers=AUTH)
    assert status == 202
    failed = caplog.records[-1]
    assert failed.getMessage() == f"could not post or start alert {body['alert_id']}"
    assert failed.exc_info is not None and str(failed.exc_info[1]) == "Slack is down"
    got.fail_dispatch = False
    status, _, _ = await post(json={"title": "z"}, headers=AUTH)  # still serving
    assert status == 202 and len(got.dispatched) == 2


async def test_the_answer_does_not_wait_for_the_dispatch_and_drain_does(got: Received) -> None:
    got.gate = asyncio.Event()
    settings = SlackSettings(webhook_token=TOKEN, webhook_channel="C0ALERTS1")
    client, hook = await served(settings, got)
    try:
        response = await client.post("/alerts", json={"title": "x"}, headers=AUTH)
        assert response.status == 202 and got.dispatched == []
        draining = asyncio.create_task(hook.drain())
        await asyncio.sleep(0.05)
        assert not draining.done()  # the dispatch is still waiting
        got.gate.set()
        await asyncio.wait_for(draining, 10)
        assert [a.id for a in got.dispatched] == [(await response.json())["alert_id"]]
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        (
            {"webhook_channel": "C0ALERTS1"},
            "the alert webhook is disabled: set SOCBOT_WEBHOOK_TOKEN to enable it",
        ),
        (
            {"webhook_token": "", "webhook_channel": "C0ALERTS1"},
            "the alert webhook is disabled: set SOCBOT_WEBHOOK_TOKEN to enable it",
        ),
        (
            {"webhook_token": TOKEN},
            "the alert webhook is disabled: set slack.webhook_channel to enable it",
        ),
        (
            {"webhook_token": TOKEN, "webhook_channel": ""},
            "the alert webhook is disabled: set slack.webhook_channel to enable it",
        ),
    ],
)
async def test_disabled_until_token_and_channel_are_set(
    got: Received, settings: dict[str, Any], error: str
) -> None:
    client, _ = await served(SlackSettings(**settings), got)
    try:
        response = await client.post("/alerts", json={"title": "x"}, headers=AUTH)
        assert (response.status, await response.json()) == (503, {"error": error})
    finally:
        await client.close()
    assert got.accepted == []


def test_a_body_of_the_limit_is_valid_json() -> None:
    assert json.loads(body_of(LIMIT))["title"] == "Impossible travel"

"""The ack front (``bot.transport.ack_front``): Slack events are acked from the front's own thread
while the main loop is busy, then reach the app; everything else is the app's answer.

A real aiohttp app on the main loop (loopback), the real front in its thread, requests
signed with the signing secret as Slack signs them; the main loop is made busy with
CPU work (a busy loop on it), as investigations make it under load.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import httpx
import pytest
from aiohttp import web

from bench.bench_slack import SIGNING_SECRET, signed
from bot.transport.ack_front import AckFront
from bot.transport.server import bound_port, start_site

EVENT = {"type": "event_callback", "event_id": "Ev0FRONT01", "event": {"type": "app_mention"}}


@dataclass
class App:
    """The app on the main loop: records what reached it."""

    seen: list[str] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def web(self) -> web.Application:
        app = web.Application()

        async def events(request: web.Request) -> web.Response:
            body = await request.text()
            self.seen.append(body)
            self.arrived.set()
            if "view_submission" in body:  # a dialog's errors: the answer matters
                return web.json_response({"response_action": "errors"})
            return web.Response(status=200)

        async def health(_request: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        async def signed_in(request: web.Request) -> web.Response:
            # as the sign-in callback answers: a redirect setting one cookie, clearing another
            response = web.Response(status=302, headers={"Location": "/web/investigations"})
            response.set_cookie("socbot_session", "s3ss10n", httponly=True, secure=True)
            response.del_cookie("socbot_signin", path="/web/auth/")
            self.seen.append(request.headers.get("Cookie", ""))
            return response

        async def stream(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(b"data: first\n\n")
            await self.release.wait()  # the rest only once the client has had the first
            await response.write(b"data: last\n\n")
            return response

        app.router.add_post("/slack/events", events)
        app.router.add_get("/healthz", health)
        app.router.add_get("/web/auth/callback", signed_in)
        app.router.add_get("/web/stream", stream)
        return app


@pytest.fixture
async def served() -> AsyncIterator[tuple[App, str]]:
    app = App()
    runner = await start_site(app.web(), "127.0.0.1", 0)
    front = AckFront(
        signing_secret=SIGNING_SECRET,
        backend=f"http://127.0.0.1:{bound_port(runner)}",
        body_limit=1024 * 1024,
    )
    port = await asyncio.to_thread(front.start, "127.0.0.1", 0)
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        await asyncio.to_thread(front.stop)
        await runner.cleanup()


def post(url: str, body: str, headers: dict[str, str]) -> tuple[int, float, str]:
    started = time.monotonic()
    answer = httpx.post(url, content=body, headers=headers, timeout=30)
    return answer.status_code, time.monotonic() - started, answer.text


async def test_an_event_is_acked_while_the_main_loop_is_busy(served: tuple[App, str]) -> None:
    app, url = served
    body = json.dumps(EVENT)
    result: list[tuple[int, float, str]] = []
    client = threading.Thread(
        target=lambda: result.append(post(f"{url}/slack/events", body, signed(body)))
    )
    client.start()
    busy_until = time.monotonic() + 2.0  # the main loop does CPU work for 2 s, as an
    while time.monotonic() < busy_until:  # investigation's prompt rendering and parsing do
        sum(range(10_000))
    client.join(30)
    [(status, seconds, _)] = result
    assert status == 200
    assert seconds < 1.5  # acked while the main loop could not answer at all
    await asyncio.wait_for(app.arrived.wait(), 30)  # then handed to the app
    assert app.seen == [body]


async def test_refused_requests_never_reach_the_app(served: tuple[App, str]) -> None:
    app, url = served
    body = json.dumps(EVENT)
    forged = {**signed(body), "X-Slack-Signature": "v0=" + "0" * 64}
    status, _, _ = await asyncio.to_thread(post, f"{url}/slack/events", body, forged)
    assert status == 401
    assert app.seen == []


async def test_interactivity_and_other_routes_get_the_apps_answer(served: tuple[App, str]) -> None:
    app, url = served
    form = "payload=" + json.dumps({"type": "view_submission"})
    headers = {**signed(form), "Content-Type": "application/x-www-form-urlencoded"}
    status, _, text = await asyncio.to_thread(post, f"{url}/slack/events", form, headers)
    assert (status, json.loads(text)) == (200, {"response_action": "errors"})
    assert len(app.seen) == 1
    async with httpx.AsyncClient() as client:
        health = await client.get(f"{url}/healthz")
    assert health.json() == {"ok": True}


async def test_redirects_and_every_cookie_reach_the_browser_untouched(
    served: tuple[App, str],
) -> None:
    """The front never follows the app's redirect (Slack's authorize page, the guard's
    sign-in page are the browser's to visit) and drops none of several ``Set-Cookie``."""
    _app, url = served
    async with httpx.AsyncClient(follow_redirects=False) as client:
        answer = await client.get(f"{url}/web/auth/callback?code=c&state=s")
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/web/investigations"
    cookies = answer.headers.get_list("Set-Cookie")
    assert len(cookies) == 2
    assert any(c.startswith("socbot_session=s3ss10n") and "HttpOnly" in c for c in cookies)
    assert any(c.startswith("socbot_signin=") and "Max-Age=0" in c for c in cookies)


async def test_the_front_keeps_no_cookie_of_its_own(served: tuple[App, str]) -> None:
    """A session cookie one browser was given never rides on another browser's request."""
    app, url = served
    browsers = [aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) for _ in range(2)]
    async with browsers[0] as first, browsers[1] as second:
        for browser, cookie in ((first, {}), (second, {}), (first, {"Cookie": "mine=1"})):
            async with browser.get(
                f"{url}/web/auth/callback", headers=cookie, allow_redirects=False
            ) as answer:
                assert answer.status == 302
    assert app.seen == ["", "", "mine=1"]


async def test_a_stream_is_passed_on_as_it_comes(served: tuple[App, str]) -> None:
    """Server-sent events reach the browser while the app is still writing them."""
    app, url = served
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", f"{url}/web/stream") as answer,
    ):
        assert answer.headers["Content-Type"] == "text/event-stream"
        pieces = answer.aiter_bytes()
        first = await asyncio.wait_for(anext(pieces), 10)  # before the app is let go on
        assert first == b"data: first\n\n"
        app.release.set()
        rest = b"".join([piece async for piece in pieces])
    assert rest == b"data: last\n\n"

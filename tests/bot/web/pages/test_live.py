"""Live updates as server-sent events (bot/web/pages/live.py), over plain HTTP: a stream follows a
run until it ends, carries the pages' security headers, and ends when the server stops
instead of holding its shutdown."""

from __future__ import annotations

import json
import time
from typing import Any

import aiohttp

from bot.web.pages.live import STREAM_S
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from tests.bot.web.seed import finish, seed
from tests.bot.web.support import signed_in_site


async def _event(response: aiohttp.ClientResponse) -> dict[str, Any]:
    """The next ``data:`` event of the stream."""
    while line := await response.content.readline():
        if line.startswith(b"data: "):
            found: dict[str, Any] = json.loads(line[6:])
            return found
    raise AssertionError("the stream ended")


async def test_a_stream_follows_a_run_until_it_ends(db: Database) -> None:
    running = await seed(db, channel="C0MINE01", text="live-run", steps=2, running=True)
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as http:
        async with http.get(f"{site.url}/web/api/investigations/{running}/events") as r:
            assert r.status == 200
            assert r.headers["Content-Type"] == "text/event-stream"
            assert r.headers["Cache-Control"] == "no-store"
            assert "default-src 'none'" in r.headers["Content-Security-Policy"]
            first = await _event(r)
            assert first["status"] == "running" and first["events"] > 0
            await finish(InvestigationStore(db), running, "live-run")  # a write: it wakes
            seen = [await _event(r)]
            while seen[-1]["status"] == "running":
                seen.append(await _event(r))
            assert seen[-1]["status"] == "concluded"
            assert seen[-1]["events"] > first["events"]
            assert (await r.content.read()).strip() == b""  # the stream ended with the run
        async with http.get(f"{site.url}/web/api/investigations/{'0' * 32}/events") as r:
            assert r.status == 404


async def test_a_stream_ends_when_the_server_stops(db: Database) -> None:
    running = await seed(db, channel="C0MINE01", text="live-run", steps=1, running=True)
    async with aiohttp.ClientSession() as http:
        async with signed_in_site(db, local=True) as site:
            response = await http.get(f"{site.url}/web/api/investigations/{running}/events")
            assert (await _event(response))["status"] == "running"
            stopping = time.monotonic()
        assert time.monotonic() - stopping < STREAM_S / 2  # not held until aiohttp gives up
        assert (await response.content.read()).strip() == b""
        response.release()

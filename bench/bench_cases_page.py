"""bench_cases_page: the web cases list over 100,000 cases, on SQLite and PostgreSQL.

    python3 -m uv run python -m bench.bench_cases_page [--cases 100000] [--requests 60]

For each database ``cases`` invented cases and their runs are inserted in bulk
(``tests/store/cases/listed_rows.py``), spread over 90 days and 20 channels: 70 %
resolved, 18 % open without an owner, 12 % acknowledged by one of 15 analysts; severity
critical 5 %, high 20 %, medium 35 %, low 30 %, info 8 %, none 2 %. The page runs on a
loopback port as ``socbot web`` serves it (its local user, an admin: every case) and each
view, order and a deep page (the cursor of the case half-way down the most-severe-first
walk of all open cases) is fetched over HTTP ``requests`` times after two warm-ups; p50
and p95 are the whole request as the client sees it; ``cpu_p50_ms`` is this process's
CPU per request (client, server and database thread), which load does not inflate. A
member's lists (the cases of 5 of the 20 channels: open, theirs, unowned, resolved newest
first; and a member who owns none) are timed as the query alone (the local user is an
admin), like ``bench_web``'s member list. Target: p95 ≤ 150 ms for every one. Results:
``var/bench/bench_cases_page.json``, with the 1-minute load average (2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from random import Random
from typing import Any

import aiohttp
from aiohttp import web
from sqlalchemy import text

from bench.bench_web import summary
from bench.common import RESULTS, on_each_database
from bench.loopback import free_port
from bot.transport.server import start_site
from bot.web.guard import create_web, install
from config.settings import Settings
from store.cases import browse
from store.db.engine import Database
from store.investigations.browse import Visibility
from store.schema import CaseStatus
from tests.store.cases.listed_rows import Spec, store

CHANNELS = [f"C{n:07d}" for n in range(20)]
ANALYSTS = [f"U{n:08d}" for n in range(15)]
LEVELS = (("critical", 5), ("high", 20), ("medium", 35), ("low", 30), ("info", 8), (None, 2))
MINUTES = 90 * 24 * 60
MEMBER = Visibility(channels=frozenset(CHANNELS[:5]), terminal=False)


def population(n: int, seed: int = 32) -> list[Spec]:
    rng = Random(seed)
    words, weights = [w for w, _ in LEVELS], [p for _, p in LEVELS]
    out = []
    for k in range(1, n + 1):
        draw = rng.random()
        status = (
            CaseStatus.RESOLVED
            if draw < 0.7
            else CaseStatus.OPEN
            if draw < 0.88
            else CaseStatus.ACKNOWLEDGED
        )
        owner = None if status == CaseStatus.OPEN else rng.choice(ANALYSTS)
        out.append(
            Spec(
                k,
                channel=rng.choice(CHANNELS),
                severity=rng.choices(words, weights)[0],
                status=status,
                owner=owner,
                disposition="benign" if status == CaseStatus.RESOLVED else None,
                title=f"Odd login on host-{k}",
                host=f"host-{k}",
                minutes=rng.uniform(0, MINUTES),
            )
        )
    return out


async def deep_cursor(db: Database, cases: int) -> str | None:
    """The cursor half-way down the most-severe-first walk of all open cases."""
    found = await browse.page(db, Visibility(None, True), me="-", size=max(cases * 3 // 20, 1))
    return found.next_cursor


async def timed(call: Callable[[], Awaitable[object]], requests: int) -> dict[str, float]:
    """Wall p50/p95 of ``requests`` calls after two warm-ups, and this process's CPU p50
    (client, server and database thread: what load does not inflate)."""
    walls, cpus = [], []
    for attempt in range(requests + 2):
        wall, cpu = time.perf_counter(), time.process_time()
        await call()
        if attempt >= 2:
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    return {**summary(walls), "cpu_p50_ms": summary(cpus)["p50_ms"]}


async def fetch(session: aiohttp.ClientSession, url: str) -> None:
    async with session.get(url) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")


async def measure(url: str, cases: int, requests: int) -> dict[str, Any]:
    db = Database(url)
    await db.create()
    began = time.perf_counter()
    await store(db, population(cases))
    if not db.is_sqlite:  # what autovacuum does after a bulk load
        async with db.engine.begin() as conn:
            await conn.execute(text("ANALYZE cases, investigations"))
    out: dict[str, Any] = {"cases": cases, "fill_s": round(time.perf_counter() - began, 1)}
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    deep = await deep_cursor(db, cases)
    paths = {
        "open_by_severity": "/web/cases",
        "open_oldest": "/web/cases?order=oldest",
        "open_newest": "/web/cases?order=newest",
        "unowned_by_severity": "/web/cases?view=unowned",
        "resolved_by_severity": "/web/cases?view=resolved",
        "resolved_newest": "/web/cases?view=resolved&order=newest",
        "mine_local_none": "/web/cases?view=mine",  # the local user owns nothing
        "open_deep_page": f"/web/cases?after={deep}" if deep else "/web/cases",
    }
    pages = create_web(Settings(database_url=url), db, None, local=True)
    app = web.Application()
    install(app, pages)
    runner = await start_site(app, "127.0.0.1", free_port())
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            for name, path in paths.items():
                out[name] = await timed(partial(fetch, session, base + path), requests)
        members: dict[str, dict[str, Any]] = {
            "member_open_query": {"me": ANALYSTS[0]},
            "member_mine_query": {"me": ANALYSTS[0], "view": "mine"},
            "member_unowned_query": {"me": ANALYSTS[0], "view": "unowned"},
            "member_resolved_newest_query": {
                "me": ANALYSTS[0],
                "view": "resolved",
                "order": "newest",
            },
            "member_mine_none_query": {"me": "U0NOBODY", "view": "mine"},
        }
        for name, asked in members.items():
            out[name] = await timed(partial(browse.page, db, MEMBER, **asked), requests)
    finally:
        await runner.cleanup()
        await db.close()
    out["load_average_1m_after"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    result = on_each_database(
        "bench_cases_page", lambda url: measure(url, args.cases, args.requests), args.only
    )
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_cases_page.json").write_text(json.dumps(result, indent=2) + "\n")
    ok = all(v["p95_ms"] <= 150 for r in result.values() for v in r.values() if isinstance(v, dict))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

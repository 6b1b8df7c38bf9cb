"""bench_web: how fast the investigation pages answer, on SQLite and PostgreSQL.

    python3 -m uv run python -m bench.bench_web [--rows 100000] [--requests 60]

For each database: ``rows`` investigations (invented, over 90 days and 20 channels, a
conclusion and an alert source in each record, one alert with its indicators each) are
inserted in bulk, plus one investigation of 50 steps written the way the engine writes
it (``tests/bot/web/seed.py``), each of its 75 tool results stored at 16,000 characters.
The pages run on a loopback port as ``socbot web`` serves them (one local user: every
row visible; the heap frozen once started), and each case is fetched over HTTP
``requests`` times after two warm-ups; p50 and p95 are the whole request as the client
sees it (``cpu_``: the CPU this process spent on it, which a busy machine does not
inflate). A member's list (the rows of 5 channels out of 20) is timed as the query
alone, since the local user is an admin. A finished run's page is drawn once per
revision (``bot.web.pages.drawn``), so ``investigation_50_steps_drawn`` also times it
drawn afresh on every request (an event appended before each, untimed). Slack names
(the 20 channels, the 50-step run's 10 voters) come from the Slack fake through a real
client, as the pages look them up (``bot.web.pages.names``): each id once, on the
warm-ups; ``slack_name_lookups`` counts the calls. Targets: the 50-step page ≤ 100 ms
p95 (both cases), the list (and each search) ≤ 150 ms p95. Results:
``var/bench/bench_web.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import aiohttp
from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import insert, select, text

from bench.common import RESULTS, on_each_database
from bench.loopback import free_port
from bot.transport.server import freeze_heap, start_site
from bot.web.guard import create_web, install
from config.settings import Settings
from store.db.engine import Database
from store.investigations.browse import BrowseStore, Filters, Visibility, encode_cursor
from store.investigations.runs import InvestigationStore
from store.playbook.feedback import FeedbackStore
from store.schema import AlertRow, Investigation
from store.schema.search import digest_of
from tests.bot.web.seed import seed
from tests.fakes.slack_api import FakeSlackAPI

VERDICTS = ("true_positive", "false_positive", "benign", "inconclusive")
SEVERITIES = ("critical", "high", "medium", "low")
SOURCES = ("guardduty", "scc", "crowdstrike", "splunk", "wazuh")
BATCH = 5000
GREW = {"mode": "planned", "reason": "bench"}  # an event the page draws nothing for
RESULT_SIZE = 16_000  # each of the 50-step page's 75 stored tool results (the trace keeps 64 KiB)
VOTERS = 10  # people who voted on the 50-step run: their names are on its page


def channel_id(n: int) -> str:
    """One of the 20 channels, shaped like a Slack id (the pages look up its name)."""
    return f"C0BENCH{n:02d}"


def _row(n: int, start: datetime) -> dict[str, Any]:
    channel = channel_id(n % 20)
    verdict = VERDICTS[n % 4]
    summary = f"Sign-ins for user{n}@example.com from a new country; MFA passed."
    record = {
        "conclusion": {
            "verdict": verdict,
            "severity": SEVERITIES[n % 4],
            "confidence": "medium",
            "summary": summary,
            "key_findings": [{"finding": f"user{n}@example.com signed in", "evidence": "1 row"}],
        },
        "alert": {
            "source": SOURCES[n % 5],
            "title": f"Unusual sign-in to host-{n}",
            "entities": [{"kind": "host", "value": f"host-{n}"}, {"kind": "user", "value": "u"}],
        },
    }
    return {
        "id": uuid.uuid4().hex,
        "conversation_id": f"slack:{channel}:1700000000.{n:06d}",
        "kind": "alert",
        "mode": "planned",
        "status": "concluded",
        "input": f"Alert {n}: sign-in from 10.{n % 250}.{n % 199}.{n % 97} to host-{n}",
        "objective": f"Decide whether host-{n} is compromised",
        "verdict": verdict,
        "severity": SEVERITIES[n % 4],
        "source": SOURCES[n % 5],
        "record": record,
        "digest": digest_of(record),
        "usage": {"llm_calls": 6, "cost_usd": 0.004},
        "created_at": start + timedelta(seconds=n * 77),
        "finished_at": start + timedelta(seconds=n * 77 + 60),
    }


def _alert(row: dict[str, Any], n: int) -> dict[str, Any]:
    ip = f"10.{n % 250}.{n % 199}.{n % 97}"
    return {
        "id": uuid.uuid4().hex,
        "source": row["source"],
        "title": f"Sign-in from {ip}",
        "raw": {"ip": ip},
        "indicators": [{"kind": "ip", "value": ip}],
        "indicator_text": f" ip:{ip} domain:host-{n}.example ",
        "investigation_id": row["id"],
        "created_at": row["created_at"],
    }


async def fill(db: Database, rows: int) -> None:
    """``rows`` investigations, each with one alert (its indicators are searched too)."""
    start = datetime.now(UTC) - timedelta(days=90)
    for first in range(0, rows, BATCH):
        batch = [_row(n, start) for n in range(first, min(first + BATCH, rows))]
        async with db.session() as session:
            await session.execute(insert(Investigation), batch)
            alerts = [_alert(row, first + i) for i, row in enumerate(batch)]
            await session.execute(insert(AlertRow), alerts)
    if not db.is_sqlite:  # what autovacuum does after a bulk load: statistics on the words
        async with db.engine.begin() as conn:
            await conn.execute(text("ANALYZE investigations, alerts"))


async def middle_cursor(db: Database, rows: int) -> str:
    async with db.session() as session:
        found = (
            await session.execute(
                select(Investigation.created_at, Investigation.id)
                .order_by(Investigation.created_at.desc(), Investigation.id.desc())
                .offset(rows // 2)
                .limit(1)
            )
        ).one()
    return encode_cursor(found.created_at, found.id)


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}


async def timed_get(
    session: aiohttp.ClientSession,
    url: str,
    requests: int,
    before: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, float]:
    samples, cpu = [], []  # wall; this process's CPU (server, client, fake: what load hides)
    for attempt in range(requests + 2):
        if before is not None:  # untimed
            await before()
        began, used = time.perf_counter(), time.process_time()
        async with session.get(url) as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"{url} answered {response.status}")
        if attempt >= 2:
            samples.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - used) * 1000)
    return summary(samples) | {f"cpu_{k}": v for k, v in summary(cpu).items()}


async def member_list(db: Database, requests: int) -> dict[str, float]:
    browse = BrowseStore(db)
    seen = Visibility(channels=frozenset(channel_id(n) for n in range(5)), terminal=False)
    samples = []
    for _ in range(requests):
        began = time.perf_counter()
        await browse.page(Filters(), seen, cursor=None)
        samples.append((time.perf_counter() - began) * 1000)
    return summary(samples)


async def measure(url: str, rows: int, requests: int) -> dict[str, Any]:
    db = Database(url)
    await db.create()
    began = time.perf_counter()
    await fill(db, rows)
    filled_s = time.perf_counter() - began
    big = await seed(
        db, channel=channel_id(3), text="185.220.101.42", steps=50, result_size=RESULT_SIZE
    )
    for n in range(VOTERS):
        await FeedbackStore(db).vote(big, f"U0VOTER{n:03d}", "correct", comment="checked")
    middle = await middle_cursor(db, rows)
    slack = FakeSlackAPI()  # names of channels and voters (users.info, conversations.info)
    await slack.start()
    for n in range(20):
        slack.add_channel(channel_id(n), f"alerts-{n:02d}")
    client = AsyncWebClient(token="xoxb-bench", base_url=slack.base_url)
    pages = create_web(Settings(database_url=url), db, client, local=True)
    app = web.Application()
    install(app, pages)
    runner = await start_site(app, "127.0.0.1", free_port())
    frozen = freeze_heap()
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    cases = {
        "investigation_50_steps": f"/web/investigations/{big}",
        "list_first_page": "/web/investigations",
        "list_middle_page": f"/web/investigations?after={middle}",
        "list_verdict": "/web/investigations?verdict=benign",
        "list_severity_source": "/web/investigations?severity=low&source=scc",
        # worst case: no row matches both (the data never pairs them), every row is read
        "list_no_match_scan": "/web/investigations?verdict=benign&severity=low",
        "list_channel": f"/web/investigations?channel={channel_id(7)}",
        # search (store/schema/search.py): one run by its text, one by an alert's indicator,
        # a word every run holds (newest 50 of 100k matches), a word none holds
        "list_search_text": "/web/investigations?q=host-4242",
        "list_search_indicator": "/web/investigations?q=host-777.example",
        "list_search_seeded_ip": "/web/investigations?q=185.220.101.42",
        "list_search_common_word": "/web/investigations?q=compromised",
        "list_search_no_match": "/web/investigations?q=203.0.113.70",
        "list_search_and_filter": "/web/investigations?q=compromised&verdict=benign&source=scc",
        # what a run concluded (its digest): an e-mail only in one run's conclusion
        "list_search_conclusion": "/web/investigations?q=user4242@example.com",
        "list_most_severe_first": "/web/investigations?order=severity",
        "list_oldest_first": "/web/investigations?order=oldest",
        "list_source_any_case": "/web/investigations?source=SCC",
    }
    out: dict[str, Any] = {"rows": rows, "fill_s": round(filled_s, 1)}
    out["load_average_1m"] = round(os.getloadavg()[0], 2)  # 2 shared cores: say how busy
    try:
        async with aiohttp.ClientSession() as session:
            for name, path in cases.items():
                out[name] = await timed_get(session, base + path, requests)
            # drawn afresh each time: an event appended before each changes its revision
            store = InvestigationStore(db)
            grow = partial(store.append_events, [(big, "mode_chosen", GREW)])
            big_url = base + cases["investigation_50_steps"]
            out["investigation_50_steps_drawn"] = await timed_get(session, big_url, requests, grow)
            async with session.get(big_url) as response:  # the names are on the page
                page = await response.text()
        if "#alerts-03" not in page or "@u0voter009" not in page:
            raise RuntimeError("the 50-step page shows no Slack names")
        out["member_list_query"] = await member_list(db, requests)
        # each id shown is looked up once, on its first page; later views use the cache
        out["slack_name_lookups"] = len(slack.calls)
        out["slack_ids_shown"] = len({str(c.args) for c in slack.calls})
    finally:
        await runner.cleanup()
        if frozen:
            gc.unfreeze()
        await slack.stop()
        await db.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()
    result = on_each_database("bench_web", lambda url: measure(url, args.rows, args.requests))
    for backend, cases in result.items():
        for name, value in cases.items():
            print(f"{backend:<11} {name:<24} {value}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_web.json").write_text(json.dumps(result, indent=2) + "\n")
    ok = all(
        cases["investigation_50_steps"]["p95_ms"] <= 100
        and cases["investigation_50_steps_drawn"]["p95_ms"] <= 100
        and cases["list_first_page"]["p95_ms"] <= 150
        and cases["list_middle_page"]["p95_ms"] <= 150
        and all(cases[c]["p95_ms"] <= 150 for c in cases if c.startswith("list_search"))
        and cases["slack_name_lookups"] == cases["slack_ids_shown"]  # never asked twice
        for cases in result.values()
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Slack acks and alert 202s in one run, while investigations run (the front door).

::

    .venv/bin/python -m bench.bench_front                          # ~2.5 min
    .venv/bin/python -m bench.bench_front --alerts 500 --seconds 60 --event-rate 5

socbot runs as ``socbot serve --mode http`` does (``bench.bench_slack.serving``: the app on
this process's main loop, the acknowledging front in a process of its own, which answers
``POST /alerts`` itself: checks, stores, 202, then hands the alert over), against the Slack
and Gemini fakes (``--latency`` per model call; a 3-step plan per investigation) served
from a thread of this process. The load is sent and timed from a third process
(``bench.ack_sender``), so neither socbot nor the fakes delay the clock: ``--alerts``
POSTs to ``/alerts`` (distinct GuardDuty-like findings, ``bench.bench_slack.storm_alert``)
and signed ``app_mention`` events at ``--event-rate`` per second, interleaved over
``--seconds``. Every mention and every admitted alert starts an investigation.

``--postgres`` runs it on a real PostgreSQL (``tests/pg_server.py``) instead of SQLite.

Reported: 202 and Slack-ack latency (request sent to response, p50/p99/max), statuses, the
machine's load average (1 minute, at the start and at the end of the load), model calls
served during the load, and every accepted alert's row after ``--observe`` seconds (a
202 whose alert is not stored would be a broken promise).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.bench_replicas import send
from bench.bench_slack import WEBHOOK_TOKEN, mention_event, serving, storm_alert
from bench.common import ALERT_FILE, percentile, print_table, run_async, write_json
from store.db.engine import Database
from store.schema import AlertRow, Investigation
from tests import pg_server

Request = tuple[str, str, dict[str, str]]  # url, body, headers


def batch(url: str, alerts: int, events: int, seconds: float) -> list[Request]:
    """Alerts and mentions in the order of their times, each kind evenly over ``seconds``."""
    base = json.loads(ALERT_FILE.read_text())
    hook = {"Authorization": f"Bearer {WEBHOOK_TOKEN}", "Content-Type": "application/json"}
    run = uuid.uuid4().hex[:6]
    timed: list[tuple[float, Request]] = [
        (i * seconds / alerts, (f"{url}/alerts?source=scc", storm_alert(i, base), hook))
        for i in range(alerts)
    ]
    timed += [
        (i * seconds / events, (f"{url}/slack/events", mention_event(i, run), {}))
        for i in range(events)
    ]
    return [request for _, request in sorted(timed, key=lambda t: t[0])]


def _ms(values: list[float], q: float) -> float | None:
    return round(percentile(values, q) * 1000, 1) if values else None


async def _counts(url: str) -> tuple[dict[str, int], dict[str, int]]:
    """Alert rows and investigations, by status."""
    db = Database(url)
    try:
        async with db.session() as session:
            alerts = Counter(str(r.status) for r in await session.scalars(select(AlertRow)))
            runs = Counter(str(r.status) for r in await session.scalars(select(Investigation)))
            return dict(alerts), dict(runs)
    finally:
        await db.close()


async def front(args: argparse.Namespace, database_url: str | None) -> dict[str, Any]:
    events = int(args.event_rate * args.seconds)
    with tempfile.TemporaryDirectory(prefix="socbot-bench-") as d:
        async with serving(Path(d), args.latency, database_url) as (url, rem, _slack, db_path):
            requests = batch(url, args.alerts, events, args.seconds)
            rate = len(requests) / args.seconds
            load_before = os.getloadavg()[0]
            started = time.monotonic()
            # the sender is a process; waiting for it in a thread keeps socbot's loop running
            answers = await asyncio.to_thread(send, requests, rate)
            elapsed = time.monotonic() - started
            load_after = os.getloadavg()[0]
            llm_calls = len(rem.gemini.calls)
            await asyncio.sleep(args.observe)
            rows, runs = await _counts(database_url or f"sqlite+aiosqlite:///{db_path}")
    alerts = [s for s, _c, p in answers if p.startswith("alerts")]
    acks = [s for s, _c, p in answers if p == "events"]
    accepted = sum(1 for _s, c, p in answers if p.startswith("alerts") and c == 202)
    out = {
        "database": "postgresql" if database_url else "sqlite",
        "alerts": args.alerts,
        "events": events,
        "seconds": round(elapsed, 1),
        "model_latency_s": args.latency,
        "statuses": {
            "alerts": dict(Counter(c for _s, c, p in answers if p.startswith("alerts"))),
            "events": dict(Counter(c for _s, c, p in answers if p == "events")),
        },
        "alert_202_ms_p50": _ms(alerts, 0.5),
        "alert_202_ms_p99": _ms(alerts, 0.99),
        "alert_202_ms_max": _ms(alerts, 1.0),
        "slack_ack_ms_p50": _ms(acks, 0.5),
        "slack_ack_ms_p99": _ms(acks, 0.99),
        "slack_ack_ms_max": _ms(acks, 1.0),
        "load_average_start": round(load_before, 2),
        "load_average_end": round(load_after, 2),
        "cores": os.cpu_count(),
        "llm_calls_during_load": llm_calls,
        "alerts_accepted": accepted,
        "alert_rows_by_status": rows,
        "alert_rows_stored": sum(rows.values()),
        "investigations_by_status": runs,
    }
    out["met"] = (
        (out["alert_202_ms_p99"] or 0) <= 100
        and out["alert_rows_stored"] >= accepted
        and set(out["statuses"]["alerts"]) == {202}
    )
    keys = [k for k in out if k not in ("statuses", "alert_rows_by_status")]
    print_table("The front door: alert 202s and Slack acks", [[k, out[k]] for k in keys], ["", ""])
    print(json.dumps(out["statuses"]), json.dumps(rows))
    return out


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--alerts", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60.0, help="the load's duration")
    parser.add_argument("--event-rate", type=float, default=5.0, help="mentions per second")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--observe", type=float, default=20.0, help="then watch this long")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL, not SQLite")
    args = parser.parse_args()
    if not args.postgres:
        result = run_async(lambda: front(args, None))
        print(f"wrote {write_json('front', result)}")
        return
    server = pg_server.start()
    try:
        url = server.create_database("bench_front")
        result = run_async(lambda: front(args, url))
    finally:
        server.stop()
    print(f"wrote {write_json('front_postgres', result)}")


if __name__ == "__main__":
    cli()

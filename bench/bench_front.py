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
import multiprocessing
import os
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.bench_replicas import send_timed
from bench.bench_slack import WEBHOOK_TOKEN, mention_event, serving, storm_alert
from bench.common import ALERT_FILE, percentile, print_table, run_async, write_json
from store.db.engine import Database
from store.schema import AlertRow, Investigation
from tests import pg_server

Request = tuple[str, str, dict[str, str]]  # url, body, headers
Answer = tuple[float, int, str, float, str]  # bench.ack_sender's


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


def _stages(header: str) -> dict[str, float]:
    """``Server-Timing`` read back: {stage: seconds}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in header.split(","))):
        name, _, dur = part.partition(";dur=")
        out[name] = float(dur) / 1000
    return out


def where(answers: list[Answer], lags: list[float]) -> dict[str, Any]:
    """Where the time went, per kind: each stage's p50/p99 as the front reports it, the
    time outside the front's handler (client's figure minus the front's total: the
    network, the front's loop before the handler, the sender reading the answer late),
    how late the sender sent, and its loop's lag; the slowest 1 % of 202s in full."""
    out: dict[str, Any] = {"sender_loop_lag_ms": {"p50": _ms(lags, 0.5), "p99": _ms(lags, 0.99)}}
    for kind, match in (("alerts", "alerts"), ("acks", "events")):
        mine = [a for a in answers if a[2].startswith(match) and a[4]]
        stages: dict[str, list[float]] = {}
        for took, status, _p, _late, header in mine:
            if status == 0:
                continue
            parts = _stages(header)
            parts["outside"] = took - parts.get("total", 0.0)
            for name, seconds in parts.items():
                stages.setdefault(name, []).append(seconds)
        stages["sender_late"] = [a[3] for a in answers if a[2].startswith(match)]
        out[kind] = {n: {"p50": _ms(v, 0.5), "p99": _ms(v, 0.99)} for n, v in stages.items()}
    alerts = sorted((a for a in answers if a[2].startswith("alerts")), reverse=True)
    slowest = alerts[: max(1, len(alerts) // 100)]
    out["slowest_alerts"] = [
        {"ms": round(t * 1000, 1), "late_ms": round(g * 1000, 1), "front": h}
        for t, _c, _p, g, h in slowest
    ]
    return out


def _spin(stop: Any) -> None:
    while not stop.is_set():
        sum(range(10_000))


def _spin_apart(stop: Any, n: int) -> None:
    """``n`` spinners in one session of their own (so one scheduler autogroup)."""
    os.setsid()
    others = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(n - 1)]
    for p in others:
        p.start()
    _spin(stop)
    for p in others:
        p.join()


def busy(n: int, apart: bool = False) -> tuple[Any, list[multiprocessing.Process]]:
    """``n`` processes spinning on the CPU (a known load beside the machine's own); with
    ``apart`` all in one session of their own, so Linux's autogroup scheduling treats them
    as other work on the host (a container's neighbours), not as socbot's own."""
    stop = multiprocessing.Event()
    if apart and n:
        spinners = [multiprocessing.Process(target=_spin_apart, args=(stop, n), daemon=False)]
    else:
        spinners = [
            multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(n)
        ]
    for p in spinners:
        p.start()
    return stop, spinners


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
            stop, spinners = busy(args.busy, args.busy_apart)
            await asyncio.sleep(args.busy and args.warm)  # the spinners running before the load
            load_before = os.getloadavg()
            started = time.monotonic()
            # the sender is a process; waiting for it in a thread keeps socbot's loop running
            try:
                answers, lags, nice = await asyncio.to_thread(
                    send_timed, requests, rate, args.sender_nice
                )
            finally:
                stop.set()
                for p in spinners:
                    p.join()
            elapsed = time.monotonic() - started
            load_after = os.getloadavg()
            llm_calls = len(rem.gemini.calls)
            await asyncio.sleep(args.observe)
            rows, runs = await _counts(database_url or f"sqlite+aiosqlite:///{db_path}")
    alerts = [a[0] for a in answers if a[2].startswith("alerts")]
    acks = [a[0] for a in answers if a[2] == "events"]
    accepted = sum(1 for a in answers if a[2].startswith("alerts") and a[1] == 202)
    out = {
        "database": "postgresql" if database_url else "sqlite",
        "alerts": args.alerts,
        "events": events,
        "seconds": round(elapsed, 1),
        "model_latency_s": args.latency,
        "statuses": {
            "alerts": dict(Counter(a[1] for a in answers if a[2].startswith("alerts"))),
            "events": dict(Counter(a[1] for a in answers if a[2] == "events")),
        },
        "alert_202_ms_p50": _ms(alerts, 0.5),
        "alert_202_ms_p99": _ms(alerts, 0.99),
        "alert_202_ms_max": _ms(alerts, 1.0),
        "slack_ack_ms_p50": _ms(acks, 0.5),
        "slack_ack_ms_p99": _ms(acks, 0.99),
        "slack_ack_ms_max": _ms(acks, 1.0),
        "busy_processes": args.busy,
        "busy_apart": args.busy_apart,
        "sender_niceness": nice,
        "load_average_start": [round(v, 2) for v in load_before],
        "load_average_end": [round(v, 2) for v in load_after],
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
    out["where"] = where(answers, lags)
    print(json.dumps(out["where"], indent=1))
    return out


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--alerts", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60.0, help="the load's duration")
    parser.add_argument("--event-rate", type=float, default=5.0, help="mentions per second")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--observe", type=float, default=20.0, help="then watch this long")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL, not SQLite")
    parser.add_argument("--busy", type=int, default=0, help="CPU-spinning processes beside")
    parser.add_argument(
        "--warm", type=float, default=5.0, help="seconds the spinners run before the load"
    )
    parser.add_argument(
        "--busy-apart", action="store_true", help="the spinners in a session of their own"
    )
    parser.add_argument(
        "--sender-nice", type=int, default=-10, help="the sender's niceness (root: < 0)"
    )
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

"""Streamed investigations (issue 35): from an alert's arrival to the first thing a person
sees in its thread, p95 ≤ 1 s with 50 alerts arriving in 10 s.

::

    .venv/bin/python -m bench.bench_stream                 # both modes, ~1.5 min
    .venv/bin/python -m bench.bench_stream --only stream --alerts 50 --seconds 10

socbot serves in HTTP mode exactly as ``socbot serve`` does (``bench.bench_slack.serving``:
the bolt app, triage, worker, engine; the Web API and Gemini faked in another thread, model
calls ``--latency`` s each). ``--alerts`` webhook alerts are POSTed at an even pace over
``--seconds`` (``paced_posts``), then the bench watches ``--observe`` s more. Per alert:
*arrival* is when its POST was sent; its thread is the card socbot posted for it
(``alerts.slack_ts``); *first seen* is the first call that put something in that thread,
as the fake received it — the stream's ``chat.startStream`` or a ``chat.postMessage`` with
that ``thread_ts`` (the checklist, a queue notice, the conclusion). The figure is the
difference, p50 / p95 / max, with the kind of the first thing counted, and how many alerts
had nothing in their thread by the end (deferred by the storm limits: their card and the
storm message say so).

Modes: ``stream`` (the fake workspace allows streaming) and ``checklist`` (it refuses:
the first run asks once, every later run posts the checklist). Run ``uptime`` alongside:
the figure depends on the machine's load, which the JSON records (``os.getloadavg``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from collections import Counter
from datetime import UTC
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.bench_slack import WEBHOOK_CHANNEL, WEBHOOK_TOKEN, paced_posts, serving, storm_alert
from bench.common import ALERT_FILE, LoopThread, percentile, print_table, run_async, write_json
from store.db.engine import Database
from store.schema import AlertRow, Investigation
from tests.fakes.slack_api import Call

TARGET_P95_S = 1.0


async def first_seen(
    tmp: Path, mode: str, alerts: int, seconds: float, observe: float, latency_s: float
) -> dict[str, Any]:
    """One storm in ``mode``; the arrival → first-in-thread figures."""
    base = json.loads(ALERT_FILE.read_text())
    load = LoopThread("bench-load")
    try:
        async with serving(tmp, latency_s) as (url, _rem, slack, db_path):
            if mode == "stream":
                slack.streams.allow()
            headers = {
                "Authorization": f"Bearer {WEBHOOK_TOKEN}",
                "Content-Type": "application/json",
            }
            bodies = [(distinct_alert(i, base), headers) for i in range(alerts)]
            load_before = os.getloadavg()
            results = await load.run(
                paced_posts(f"{url}/alerts?source=scc", bodies, alerts / seconds)
            )
            await asyncio.sleep(observe)
            load_after = os.getloadavg()
            cards = await _cards(db_path)
            runs = await _run_starts(db_path)
            calls = list(slack.calls)
            streamed = {s.thread_ts for s in slack.streams.streams.values()}
            card_at = _card_times(calls, [m.ts for m in slack.messages if m.thread_ts is None])
    finally:
        load.close()
    firsts = _first_in_thread(calls, streamed)
    latencies: list[float] = []
    to_card: list[float] = []
    from_run: list[float] = []  # the run's start → the first thing in its thread
    kinds: Counter[str] = Counter()
    nothing = 0
    for _latency, status, sent, text in results:
        if status != 202:
            continue
        card = cards.get(str(json.loads(text)["alert_id"]))
        if card in card_at:
            to_card.append(card_at[card] - sent)
        seen = firsts.get(card) if card else None
        if seen is None:
            nothing += 1
            continue
        latencies.append(seen[0] - sent)
        if card in runs:
            from_run.append(seen[0] - runs[card])
        kinds[seen[1]] += 1
    p95 = percentile(latencies, 0.95) if latencies else float("nan")
    out: dict[str, Any] = {
        "mode": mode,
        "alerts": alerts,
        "seconds": seconds,
        "observe_seconds": observe,
        "model_latency_s": latency_s,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "with_thread_item": len(latencies),
        "nothing_in_thread": nothing,
        "first_kind": dict(kinds),
        "p50_s": round(percentile(latencies, 0.5), 3) if latencies else None,
        "p95_s": round(p95, 3) if latencies else None,
        "max_s": round(max(latencies), 3) if latencies else None,
        "card_p50_s": _q(to_card, 0.5),
        "card_p95_s": _q(to_card, 0.95),
        "run_start_to_first_p50_s": _q(from_run, 0.5),
        "run_start_to_first_p95_s": _q(from_run, 0.95),
        "stream_calls": {
            m: sum(1 for c in calls if c.method == m)
            for m in ("chat.startStream", "chat.appendStream", "chat.stopStream", "chat.update")
        },
        "met": bool(latencies) and p95 <= TARGET_P95_S,
    }
    rows: list[list[object]] = [
        ["alerts / seconds", f"{alerts} / {seconds}"],
        ["load average before / after", f"{out['loadavg_before']} / {out['loadavg_after']}"],
        ["alerts with something in their thread", len(latencies)],
        ["alerts with nothing in their thread (deferred)", nothing],
        ["first thing seen, by kind", dict(kinds)],
        [
            "arrival → first seen p50 / p95 / max s",
            f"{out['p50_s']} / {out['p95_s']} / {out['max_s']}",
        ],
        [
            "arrival → its card (top level) p50 / p95 s",
            f"{out['card_p50_s']} / {out['card_p95_s']}",
        ],
        [
            "run start → first seen p50 / p95 s",
            f"{out['run_start_to_first_p50_s']} / {out['run_start_to_first_p95_s']}",
        ],
        ["stream / update calls", out["stream_calls"]],
        [f"p95 ≤ {TARGET_P95_S} s met", out["met"]],
    ]
    print_table(
        f"Issue 35 — arrival to first seen in the thread ({mode})", rows, ["figure", "value"]
    )
    return out


def distinct_alert(i: int, base: dict[str, Any]) -> str:
    """A storm alert no earlier one groups (``alerts.grouping`` blurs digits: letters)."""
    data = json.loads(storm_alert(i, base))
    tag = "".join(chr(ord("a") + int(d)) for d in str(i))
    data["finding"]["category"] = f"{data['finding']['category']} {tag}"
    return json.dumps(data)


def _q(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 3) if values else None


def _card_times(calls: list[Call], top_level: list[str]) -> dict[str, float]:
    """card ts → when its ``chat.postMessage`` reached the fake (the fake keeps the
    top-level messages in the order of those calls)."""
    posts = [c for c in calls if c.method == "chat.postMessage" and not c.args.get("thread_ts")]
    return {ts: call.at for ts, call in zip(top_level, posts, strict=False)}


async def _run_starts(db_path: Path) -> dict[str, float]:
    """thread ts → when its first investigation started, on ``time.monotonic``'s clock."""
    offset = time.time() - time.monotonic()
    db = Database(f"sqlite+aiosqlite:///{db_path}")
    try:
        async with db.session() as session:
            rows = await session.execute(
                select(Investigation.conversation_id, Investigation.created_at)
            )
            starts: dict[str, float] = {}
            for conversation, created in rows:
                thread = str(conversation).rsplit(":", 1)[-1]
                at = created.replace(tzinfo=UTC).timestamp() - offset
                starts[thread] = min(starts.get(thread, at), at)
            return starts
    finally:
        await db.close()


async def _cards(db_path: Path) -> dict[str, str]:
    """alert id → its card's ts (the thread)."""
    db = Database(f"sqlite+aiosqlite:///{db_path}")
    try:
        async with db.session() as session:
            rows = await session.execute(select(AlertRow.id, AlertRow.slack_ts))
            return {str(i): str(ts) for i, ts in rows if ts}
    finally:
        await db.close()


def _first_in_thread(calls: list[Call], streamed: set[str]) -> dict[str, tuple[float, str]]:
    """thread ts → (when the first thing reached it, what it was); a refused
    ``chat.startStream`` shows nothing (``streamed``: the threads with a stream)."""
    firsts: dict[str, tuple[float, str]] = {}
    for call in sorted(calls, key=lambda c: c.at):
        thread = call.args.get("thread_ts")
        if (
            call.status != 200
            or not thread
            or call.method
            not in (
                "chat.startStream",
                "chat.postMessage",
            )
        ):
            continue
        if call.method == "chat.startStream" and (
            call.args.get("channel") != WEBHOOK_CHANNEL or thread not in streamed
        ):
            continue
        kind = "stream" if call.method == "chat.startStream" else _kind(call)
        firsts.setdefault(str(thread), (call.at, kind))
    return firsts


def _kind(call: Call) -> str:
    text = str(call.args.get("text") or "").lower()
    if "queue" in text or "waiting" in text:
        return "queue notice"
    if "feedback_correct" in json.dumps(call.args.get("blocks") or []):
        return "conclusion"
    return "checklist"


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"target": f"arrival → first seen in the thread, p95 ≤ {TARGET_P95_S} s"}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.only.split(","):
            out[mode] = await first_seen(
                Path(tmp), mode, args.alerts, args.seconds, args.observe, args.latency
            )
    write_json("slack_stream", out)
    return out


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--only", default="stream,checklist", help="stream, checklist or both")
    parser.add_argument("--alerts", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0, help="the alerts arrive over")
    parser.add_argument("--observe", type=float, default=20.0, help="watched afterwards")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    return parser.parse_args(argv)


if __name__ == "__main__":
    started = time.monotonic()
    run_async(lambda: main(parse()))
    print(f"({time.monotonic() - started:.0f} s)")

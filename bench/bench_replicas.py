"""Replicas as real processes (issue 13): full ``socbot serve`` throughput, ack latency,
duplicates, and the takeover after ``kill -9``.

::

    uv run python -m bench.bench_replicas                  # 1, 2 and 3 replicas, ~3 min
    uv run python -m bench.bench_replicas --replicas 2 --mentions 60 --alerts 30 --rate 20

Each replica is a ``socbot serve --mode http`` process (``tests/serve_cluster.py``) on
one real PostgreSQL (``tests/pg_server.py``), against the Slack Web API fake and the
fake Gemini (``--latency`` per model call) served from this process. A mention is
answered directly (2 model calls); a webhook alert gets a plan, one step calling
``search_past_alerts`` on the database, a reflection and a conclusion (5 calls).

Load: ``--mentions`` signed ``app_mention`` events and ``--alerts`` POSTs to ``/alerts``
(genuine samples from tests/fixtures/alerts), paced at ``--rate`` requests per second
and spread round-robin over the replicas; then each mention again to the next replica
as Slack's retry (``X-Slack-Retry-Num``). Measured per replica count:

* investigations per minute: rows done / (last row finished - first request sent);
* ack latency p50/p99/max: request sent to HTTP response, seen by the client;
* duplicate outcome posts (threads with more than one outcome; must be 0), threads
  without one, rows started more than once (a takeover) and rows per replica.

Takeover (with 2 and with 3 replicas, after the load): a mention is held at the fake
model, the replica running it gets SIGKILL; seconds from the kill until another replica
runs the row (bounded by ``--lease`` plus a poll) and until the answer is posted.

Writes ``var/bench/replicas.json`` (``SOCBOT_BENCH_RESULTS`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.ack_sender import Answer
from bench.bench_slack import signed
from bench.common import percentile, print_table, write_json
from tests import pg_server
from tests.serve_cluster import WEBHOOK_TOKEN, Cluster, wait_for
from tests.serve_scenario import mention, script, settings_toml

ALERTS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "alerts"
SETTLED = ("done", "failed", "cancelled")


def samples() -> list[str]:
    """The genuine alert samples (not the INVENTED ones; see their NOTICE)."""
    files = sorted(p for p in ALERTS.glob("*.json") if not p.name.startswith("invented-"))
    return [p.read_text() for p in files]


Request = tuple[str, str, dict[str, str]]  # url, body, headers


def requests(cluster: Cluster, run: str, mentions: int, alerts: int) -> list[Request]:
    """Alerts and mentions interleaved over the replicas, then the mentions' retries."""
    urls = [r.url for r in cluster.replicas if r.alive]
    bodies = samples()
    hook = {"Authorization": f"Bearer {WEBHOOK_TOKEN}", "Content-Type": "application/json"}
    events = [json.dumps(mention(i, run, user=f"UANALYST{i % 5}")) for i in range(mentions)]
    out: list[Request] = []
    for i in range(max(mentions, alerts)):
        if i < mentions:
            out.append((f"{urls[i % len(urls)]}/slack/events", events[i], {}))
        if i < alerts:
            out.append((f"{urls[(i + 1) % len(urls)]}/alerts", bodies[i % len(bodies)], hook))
    for i, body in enumerate(events):
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        out.append((f"{urls[(i + 1) % len(urls)]}/slack/events", body, retry))
    return out


def send(batch: list[Request], rate: float) -> list[tuple[float, int, str]]:
    """(seconds, status, path) per request (``send_timed``)."""
    return [(s, c, p) for s, c, p, _late, _timing in send_timed(batch, rate)[0]]


def send_timed(
    batch: list[Request], rate: float, nice: int = 0
) -> tuple[list[Answer], list[float], int]:
    """``bench.ack_sender`` in a process of its own: the fakes served from this process
    (their thread holds its interpreter lock for long stretches under load) must not
    delay the clock that times the acks. Its answers, its loop's lags, its niceness."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.ack_sender"],
        input=json.dumps({"batch": batch, "rate": rate, "nice": nice}),
        stdout=subprocess.PIPE,  # its errors on this process's stderr
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    out = json.loads(done.stdout)
    answers = [(float(s), int(c), str(p), float(g), str(t)) for s, c, p, g, t in out["answers"]]
    return answers, [float(lag) for lag in out["lags"]], int(out["nice"])


def throughput(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    run = uuid.uuid4().hex[:6]
    batch = requests(cluster, run, args.mentions, args.alerts)
    first = time.time()
    acks = send(batch, args.rate)
    total = args.mentions + args.alerts

    def settled() -> bool:
        rows = cluster.rows()
        return len(rows) >= total and all(r.state in SETTLED for r in rows)

    wait_for(settled, args.timeout, f"{total} runs to settle")
    rows = cluster.rows()
    last = max(r.finished_at.timestamp() for r in rows if r.finished_at is not None)
    outcomes = [len(cluster.outcomes(r.thread_ts)) for r in rows]
    latencies = [a[0] * 1000 for a in acks]
    slack = [a[0] * 1000 for a in acks if a[2] == "events"]
    alerts = [a[0] * 1000 for a in acks if a[2] == "alerts"]
    done = sum(r.state == "done" for r in rows)
    quiet = send(requests(cluster, uuid.uuid4().hex[:6], 30, 0)[:30], 2.0)
    wait_for(lambda: all(r.state in SETTLED for r in cluster.rows()), args.timeout, "quiet runs")
    quiet_ms = [a[0] * 1000 for a in quiet]
    return {
        "replicas": len([r for r in cluster.replicas if r.alive]),
        "requests": len(batch),
        "statuses": dict(Counter(a[1] for a in acks)),
        "rows": len(rows),
        "done": done,
        "investigations_per_min": round(done / (last - first) * 60, 1),
        "seconds": round(last - first, 2),
        "ack_ms_p50": round(percentile(latencies, 0.5), 1),
        "ack_ms_p99": round(percentile(latencies, 0.99), 1),
        "ack_ms_max": round(max(latencies), 1),
        # Slack's acks alone (what Slack retries after 3 s) and the webhook's 202s
        "slack_ack_ms_p50": round(percentile(slack, 0.5), 1),
        "slack_ack_ms_p99": round(percentile(slack, 0.99), 1),
        "slack_ack_ms_max": round(max(slack), 1),
        "alert_202_ms_p50": round(percentile(alerts, 0.5), 1) if alerts else None,
        "alert_202_ms_p99": round(percentile(alerts, 0.99), 1) if alerts else None,
        # 30 mentions one at a time (2/s) after the load: the quiet figure
        "quiet_slack_ack_ms_p50": round(percentile(quiet_ms, 0.5), 1),
        "quiet_slack_ack_ms_p99": round(percentile(quiet_ms, 0.99), 1),
        "load_average": os.getloadavg()[0],
        "duplicate_outcome_posts": sum(max(n - 1, 0) for n in outcomes),
        "threads_without_outcome": sum(n == 0 for n in outcomes),
        "rows_started_again": sum(r.attempts > 1 for r in rows),
        "rows_per_replica": dict(Counter(str(r.owner) for r in rows)),
        "rows_by_kind": dict(Counter(r.kind for r in rows)),
        "threads_with_more_rows": sorted(
            [t, n] for t, n in Counter(r.thread_ts for r in rows).items() if n > 1
        ),
    }


def takeover(cluster: Cluster, timeout_s: float) -> dict[str, Any]:
    """kill -9 the replica running a held mention; when another runs it and answers."""
    run = uuid.uuid4().hex[:6]
    event = mention(1, run)
    thread_ts = event["event"]["ts"]
    target = next(r for r in cluster.replicas if r.alive)
    cluster.gemini.hold()
    try:
        body = json.dumps(event)
        httpx.post(f"{target.url}/slack/events", content=body, headers=signed(body), timeout=30)
        wait_for(lambda: cluster.gemini.arrivals_with(f"case {run}-1") > 0, timeout_s, "run")
        (row,) = [r for r in cluster.rows() if r.thread_ts == thread_ts]
        victim = cluster.by_name(row.owner)
        victim.kill()
        killed = time.monotonic()
    finally:
        cluster.gemini.release()

    def owner() -> str | None:
        (row,) = [r for r in cluster.rows() if r.thread_ts == thread_ts]
        return row.owner

    wait_for(lambda: owner() not in (None, victim.name), timeout_s, "a new owner")
    taken = time.monotonic() - killed
    wait_for(lambda: cluster.outcomes(thread_ts), timeout_s, "the answer")
    answered = time.monotonic() - killed
    return {
        "taken_over_after_s": round(taken, 2),
        "answered_after_s": round(answered, 2),
        "outcome_posts": len(cluster.outcomes(thread_ts)),
    }


def main(args: argparse.Namespace) -> dict[str, Any]:
    server = pg_server.start()
    folder = Path(tempfile.mkdtemp(prefix="socbot-replicas-"))
    out: dict[str, Any] = {
        "mentions": args.mentions,
        "alerts": args.alerts,
        "rate_per_s": args.rate,
        "model_latency_s": args.latency,
        "max_concurrent_investigations": args.limit,
        "lease_s": args.lease,
        "poll_s": args.poll,
        "runs": [],
        "takeovers": [],
    }
    try:
        for n in args.replicas:
            (folder / str(n)).mkdir()
            cluster = Cluster(
                server.create_database(f"bench_replicas_{n}"),
                folder / str(n),
                script(),
                settings_toml(limit=args.limit, lease_s=args.lease, poll_s=args.poll),
                latency_s=args.latency,
            )
            try:
                cluster.ensure(n)
                out["runs"].append(throughput(cluster, args))
                if n >= 2:
                    out["takeovers"].append({"replicas": n, **takeover(cluster, args.timeout)})
            finally:
                cluster.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return out


def report(out: dict[str, Any]) -> None:
    keys = [
        "replicas",
        "investigations_per_min",
        "slack_ack_ms_p50",
        "slack_ack_ms_p99",
        "slack_ack_ms_max",
        "alert_202_ms_p99",
        "quiet_slack_ack_ms_p50",
        "quiet_slack_ack_ms_p99",
        "load_average",
        "duplicate_outcome_posts",
        "threads_without_outcome",
        "rows_started_again",
    ]
    rows = [[run[k] for k in keys] for run in out["runs"]]
    print_table("socbot serve replicas on PostgreSQL", rows, keys)
    for t in out["takeovers"]:
        print(
            f"kill -9 with {t['replicas']} replicas (lease {out['lease_s']} s): taken over "
            f"after {t['taken_over_after_s']} s, answered after {t['answered_after_s']} s, "
            f"{t['outcome_posts']} outcome post(s)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--mentions", type=int, default=60)
    parser.add_argument("--alerts", type=int, default=30)
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--limit", type=int, default=12, help="investigations at once")
    parser.add_argument("--lease", type=float, default=5.0)
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=300.0)
    result = main(parser.parse_args())
    report(result)
    print(f"wrote {write_json('replicas', result)}")

"""Replicas as separate ``socbot serve --mode http`` processes on one real PostgreSQL.

The processes (``tests/serve_cluster.py``) share the module: they start once (the
first start compiles, the rest load the shared bytecode cache) and every test uses
its own Slack threads. A test that kills or stops a replica leaves fewer alive;
``cluster.ensure(n)`` starts more when a test needs them, so any test runs alone too.
Short leases (2 s) keep takeovers fast; every wait is on something observable (the
fakes' recorded calls, rows in the database), timeouts are only upper bounds.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.work.worker import RESTARTED
from store.schema import WorkRow
from tests.pg_server import PostgresServer
from tests.serve_cluster import SOC, WEBHOOK_CHANNEL, Cluster, Replica
from tests.serve_scenario import deliver, mention, post_alert, script, settings_toml

LEASE_S = 10.0  # a loaded CI machine can starve a replica for seconds; takeover waits this long
POLL_S = 0.5
# six runs at once across the replicas, at most three on one: while the model answers
# nobody, a storm must be spread over at least two replicas
SETTINGS = settings_toml(limit=6, per_replica=3, lease_s=LEASE_S, poll_s=POLL_S, grace_s=0.5)
ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"
# genuine samples only (tests/fixtures/alerts/NOTICE), one per vendor format
STORM = [
    "azure-monitor-common-schema.json",
    "demisto-sentinelone-threat.json",
    "leveret-guardduty.json",
    "leveret-scc.json",
    "microsoft-graph-alert-v2.json",
    "okta-event-hook.json",
    "splunk-webhook.json",
    "warren-crowdstrike-falcon.json",
    "warren-defender-endpoint.json",
    "warren-falco.json",
]
SETTLED = ("done", "failed", "cancelled")
PUTS_TO_WORK = 90.0  # an upper bound only (a loaded machine), never waited out when green


@pytest.fixture(scope="module")
def cluster(
    postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    url = postgres.create_database(f"replicas_{uuid.uuid4().hex[:8]}")
    cluster = Cluster(url, tmp_path_factory.mktemp("replicas"), script(), SETTINGS)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(autouse=True)
def quiet(cluster: Cluster) -> None:
    """Each test starts on a settled cluster: a failed test's held runs cannot take the
    next test's slots."""
    cluster.gemini.release()
    cluster.wait(lambda: settled(cluster, 0), PUTS_TO_WORK, "earlier runs to settle")


def thread_calls(cluster: Cluster, row: WorkRow) -> list[tuple[str, str, str]]:
    """What was sent to a row's thread (for a failing assertion's message)."""
    return [
        (c.method, str(c.args.get("ts")), str(c.args.get("text"))[:80])
        for c in list(cluster.slack.calls)
        if row.thread_ts in (c.args.get("thread_ts"), c.args.get("ts"))
    ]


def thread_rows(cluster: Cluster, thread_ts: str) -> list[WorkRow]:
    return [r for r in cluster.rows() if r.thread_ts == thread_ts]


def cards(cluster: Cluster) -> list[str]:
    """Alert cards: top-level posts in the webhook channel (not the storm message)."""
    top = [c for c in cluster.posts(WEBHOOK_CHANNEL) if not c.args.get("thread_ts")]
    return [str(c.args.get("text")) for c in top if str(c.args.get("text")).startswith("New ")]


def settled(cluster: Cluster, count: int) -> bool:
    rows = cluster.rows()
    return len(rows) >= count and all(r.state in SETTLED for r in rows)


def running_owners(cluster: Cluster, first: int) -> set[str | None]:
    """The replicas running rows from the ``first``-th row on."""
    return {r.owner for r in cluster.rows()[first:] if r.state == "running"}


def row_settled(cluster: Cluster, thread_ts: str) -> bool:
    return thread_rows(cluster, thread_ts)[0].state in SETTLED


def reached_the_model(cluster: Cluster, marker: str) -> None:
    """Wait until a run whose text holds ``marker`` has sent the model a request."""
    cluster.wait(lambda: cluster.gemini.arrivals_with(marker) > 0, PUTS_TO_WORK, "the run")


def running_owner(cluster: Cluster, thread_ts: str) -> str | None:
    rows = [r for r in thread_rows(cluster, thread_ts) if r.state == "running"]
    return rows[0].owner if rows else None


def test_a_replica_process_cannot_reach_beyond_loopback(cluster: Cluster) -> None:
    probe = (
        "import socket, urllib.request, sys\n"
        "for target in (('192.0.2.10', 443), ('slack.com', 443)):\n"
        "    try:\n"
        "        socket.create_connection(target, timeout=2)\n"
        "    except OSError as error:\n"
        "        print('blocked', error)\n"
        "    else:\n"
        "        sys.exit('reached ' + repr(target))\n"
        f"print(urllib.request.urlopen({cluster.slack_url + 'auth.test'!r}).status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=cluster.env("probe"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["blocked", "blocked", "200"]
    assert all("network blocked in tests" in line for line in lines[:2])


def test_a_storm_over_three_replicas_investigates_each_alert_and_mention_once(
    cluster: Cluster,
) -> None:
    replicas = cluster.ensure(3)
    run = uuid.uuid4().hex[:6]
    before, cards_before = len(cluster.rows()), len(cards(cluster))
    mentions = [mention(i, run, user=f"UANALYST{i % 4}") for i in range(12)]
    # the model answers nobody until the storm is in: a replica holds at most `limit`
    # runs, so the rest must go to the others (on a loaded machine one fast replica
    # could otherwise finish them all before the others' next poll)
    cluster.gemini.hold()
    try:
        # a load balancer spreads alerts and events over the replicas, all at once, and
        # Slack's retry of each event reaches another replica
        with ThreadPoolExecutor(8) as pool:
            alerts = [
                pool.submit(post_alert, replicas[i % 3], (ALERTS / name).read_text())
                for i, name in enumerate(STORM)
            ]
            events = [pool.submit(deliver, replicas[i % 3], e) for i, e in enumerate(mentions)]
            events += [
                pool.submit(deliver, replicas[(i + 1) % 3], e, 1) for i, e in enumerate(mentions)
            ]
        assert [a.result().status_code for a in alerts] == [202] * len(STORM)
        assert [e.result() for e in events] == [200] * len(events)
        cluster.wait(lambda: len(running_owners(cluster, before)) >= 2, PUTS_TO_WORK, "2 owners")
    finally:
        cluster.gemini.release()
    alert_ids = [a.result().json()["alert_id"] for a in alerts]
    total = len(STORM) + len(mentions)
    cluster.wait(lambda: settled(cluster, before + total), PUTS_TO_WORK, f"{total} runs to settle")

    rows = cluster.rows()[before:]
    assert len(rows) == total  # no redelivery queued a second row
    assert {r.state for r in rows} == {"done"}
    assert sorted(r.alert_id for r in rows if r.kind == "alert") == sorted(alert_ids)
    assert len(cards(cluster)) - cards_before == len(STORM)  # one card per alert
    for row in rows:  # one outcome per alert and per mention, recorded with its row
        channel = WEBHOOK_CHANNEL if row.kind == "alert" else SOC
        assert row.posted["outcome_ts"] == cluster.outcomes(row.thread_ts), thread_calls(
            cluster, row
        )
        assert len(cluster.outcomes(row.thread_ts)) == 1
        # a lease that lapsed on an overloaded machine is taken over like a crash: told once
        told = [str(c.args.get("text")) for c in cluster.posts(channel, row.thread_ts)]
        assert told.count(RESTARTED) == (row.attempts > 1), (row.id, row.attempts, told)


def test_a_redelivery_to_another_replica_starts_nothing(cluster: Cluster) -> None:
    first, second = cluster.ensure(2)[:2]
    run = uuid.uuid4().hex[:6]
    event = mention(1, run)
    thread_ts = event["event"]["ts"]
    cluster.gemini.hold()  # the original run is still busy when the retry comes
    try:
        assert deliver(first, event) == 200
        reached_the_model(cluster, f"case {run}-1")
        assert deliver(second, event, retry=1) == 200
        assert deliver(second, event, retry=2) == 200
        assert deliver(first, event, retry=3) == 200
    finally:
        cluster.gemini.release()
    # later work on both replicas settles after anything the retries could have queued
    after = [mention(2, run), mention(3, run)]
    assert deliver(second, after[0]) == 200
    assert deliver(first, after[1]) == 200
    for ts in (thread_ts, *(e["event"]["ts"] for e in after)):
        cluster.wait(lambda ts=ts: cluster.outcomes(ts), PUTS_TO_WORK, f"an answer in {ts}")
    assert len(thread_rows(cluster, thread_ts)) == 1
    assert len(cluster.outcomes(thread_ts)) == 1
    assert cluster.gemini.arrivals_with(f"case {run}-1)") == 2


def test_kill_9_of_the_running_replica_hands_the_run_to_another_within_the_lease(
    cluster: Cluster,
) -> None:
    replicas = cluster.ensure(3)
    run = uuid.uuid4().hex[:6]
    event = mention(7, run)
    thread_ts = event["event"]["ts"]
    cluster.gemini.hold()
    try:
        assert deliver(replicas[0], event) == 200
        reached_the_model(cluster, f"case {run}-7")
        owner = running_owner(cluster, thread_ts)
        assert owner is not None
        victim = cluster.by_name(owner)
        # its status message is already in the thread
        cluster.wait(
            lambda: thread_rows(cluster, thread_ts)[0].posted.get("status_ts"),
            PUTS_TO_WORK,
            "status",
        )
        victim.kill()
        killed = time.monotonic()
    finally:
        cluster.gemini.release()
    taken = _taken_over_and_answered(cluster, thread_ts, victim)

    # the lease, a poll and a loaded machine's delays; a missed expiry would take another lease
    assert taken - killed < 2 * LEASE_S
    [row] = thread_rows(cluster, thread_ts)
    assert (row.state, row.attempts) == ("done", 2)
    assert row.owner not in (None, victim.name)
    posts = [str(c.args.get("text")) for c in cluster.posts(SOC, thread_ts)]
    assert len(cluster.outcomes(thread_ts)) == 1
    assert posts.count(RESTARTED) == 1
    assert posts.count("socbot is working") == 1  # the status message is edited, not reposted
    assert row.posted["outcome_ts"] == cluster.outcomes(thread_ts)  # recorded with the row


def test_sigterm_hands_the_running_work_to_another_replica(cluster: Cluster) -> None:
    replicas = cluster.ensure(2)
    run = uuid.uuid4().hex[:6]
    event = mention(9, run)
    thread_ts = event["event"]["ts"]
    cluster.gemini.hold()  # the run cannot finish within the grace period
    try:
        assert deliver(replicas[0], event) == 200
        reached_the_model(cluster, f"case {run}-9")
        victim = cluster.by_name(running_owner(cluster, thread_ts))
        victim.terminate()
        assert victim.process.wait(30) == 0, victim.output()[-2000:]
        stopped = time.monotonic()
    finally:
        cluster.gemini.release()
    taken = _taken_over_and_answered(cluster, thread_ts, victim)

    assert "handed 1 running work rows back to the queue" in victim.output()
    assert taken - stopped < LEASE_S  # handed back at once, not left for the lease to expire
    [row] = thread_rows(cluster, thread_ts)
    assert (row.state, row.attempts) == ("done", 1)  # a hand-back is not an attempt
    posts = [str(c.args.get("text")) for c in cluster.posts(SOC, thread_ts)]
    assert len(cluster.outcomes(thread_ts)) == 1
    assert posts.count("socbot is working") == 1


def _taken_over_and_answered(cluster: Cluster, thread_ts: str, victim: Replica) -> float:
    """Wait until another replica runs the thread's row (returns when it was seen), the
    answer is posted and the row settled."""

    def other() -> bool:
        [row] = thread_rows(cluster, thread_ts)
        return row.owner not in (None, victim.name)

    cluster.wait(other, PUTS_TO_WORK, "another replica to take the run")
    taken = time.monotonic()
    cluster.wait(lambda: cluster.outcomes(thread_ts), PUTS_TO_WORK, "the answer")
    cluster.wait(lambda: row_settled(cluster, thread_ts), PUTS_TO_WORK, "the row")
    return taken

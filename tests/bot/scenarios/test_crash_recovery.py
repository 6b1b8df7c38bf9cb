"""``socbot serve`` killed with ``kill -9`` and started again on the same database
(SQLite and PostgreSQL): nothing that got a 202 vanishes or waits for a timer, and the
run the kill cut short is settled as interrupted, linked to the run that replaced it;
killed at its last attempt, it is given up and its status message says so, once.

Real processes (``tests/serve_cluster.py``) with the fake Gemini and Slack; every wait
is on something observable (rows in the database, the fakes' recorded calls), the
timeouts are upper bounds only. The lease is short (``LEASE_S``) so that a takeover
happens within seconds; the old start-up adoption waited 300 s for a queued alert
without a work row, so every bound below is far under that.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.work.contracts import gave_up
from store.schema import AlertRow, Investigation
from tests.pg_server import PostgresServer
from tests.serve_cluster import WEBHOOK_CHANNEL, Cluster, wait_for
from tests.serve_scenario import post_alert, script, settings_toml

LEASE_S = 4.0
LIMIT = 2
SETTINGS = settings_toml(limit=LIMIT, lease_s=LEASE_S, poll_s=0.5, grace_s=0.5)
ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"
SAMPLES = [  # genuine samples only (tests/fixtures/alerts/NOTICE)
    "azure-monitor-common-schema.json",
    "leveret-guardduty.json",
    "leveret-scc.json",
    "okta-event-hook.json",
    "splunk-webhook.json",
    "warren-falco.json",
]
SETTLED_ALERT = ("concluded", "failed", "cancelled")
BOUND_S = 150.0  # an upper bound on a loaded 2-core machine; half the old 300 s timer


ONE_ATTEMPT = SETTINGS.replace("[work]\n", "[work]\nmax_attempts = 1\n")
TOLD = gave_up(1)


def running(backend: str, tmp_path: Path, postgres: PostgresServer, toml: str) -> Iterator[Cluster]:
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    else:
        url = postgres.create_database(f"crash_{uuid.uuid4().hex[:10]}")
    cluster = Cluster(url, tmp_path, script(), toml)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def cluster(
    request: pytest.FixtureRequest, tmp_path: Path, postgres: PostgresServer
) -> Iterator[Cluster]:
    yield from running(request.param, tmp_path, postgres, SETTINGS)


@pytest.fixture(params=["sqlite", "postgresql"])
def one_attempt(
    request: pytest.FixtureRequest, tmp_path: Path, postgres: PostgresServer
) -> Iterator[Cluster]:
    """Replicas that start each row once (``work.max_attempts = 1``)."""
    assert ONE_ATTEMPT != SETTINGS
    yield from running(request.param, tmp_path, postgres, ONE_ATTEMPT)


def alerts(cluster: Cluster) -> dict[str, AlertRow]:
    async def query() -> dict[str, AlertRow]:
        async with cluster.db.session() as session:
            return {a.id: a for a in (await session.scalars(select(AlertRow))).all()}

    return cluster.run(query())


def investigations(cluster: Cluster) -> list[Investigation]:
    async def query() -> list[Investigation]:
        async with cluster.db.session() as session:
            rows = await session.scalars(select(Investigation).order_by(Investigation.created_at))
            return list(rows.all())

    return cluster.run(query())


def all_settled(cluster: Cluster, ids: list[str]) -> bool:
    rows = alerts(cluster)
    return all(rows[i].status in SETTLED_ALERT for i in ids)


def storm(cluster: Cluster, count: int) -> list[str]:
    """POST ``count`` alerts to the one live replica, 8 at once; their ids (all 202)."""
    [replica] = [r for r in cluster.replicas if r.alive]
    bodies = [(ALERTS / SAMPLES[n % len(SAMPLES)]).read_text() for n in range(count)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda body: post_alert(replica, body), bodies))
    assert [a.status_code for a in answers] == [202] * count
    return [a.json()["alert_id"] for a in answers]


def killed_mid_run(cluster: Cluster) -> tuple[str, Investigation]:
    """One alert on one replica, killed once its status message and investigation row
    are in (the model held until the new replica is up); its id and the investigation
    the kill cut short."""
    cluster.ensure(1)
    cluster.gemini.hold()
    try:
        [alert_id] = storm(cluster, 1)

        def status_posted() -> bool:
            rows = [r for r in cluster.rows() if r.alert_id == alert_id]
            return bool(rows) and bool(rows[0].posted.get("status_ts"))

        wait_for(status_posted, BOUND_S, "the status message")
        wait_for(lambda: investigations(cluster), BOUND_S, "the investigation row")
        [killed] = investigations(cluster)
        assert killed.status == "running"
        restart(cluster)
    finally:
        cluster.gemini.release()
    return alert_id, killed


def restart(cluster: Cluster) -> float:
    """Kill the live replica with ``kill -9`` and start a new one; when it was up."""
    for replica in cluster.replicas:
        if replica.alive:
            replica.kill()
    cluster.ready(cluster.spawn())
    return time.monotonic()


def assert_each_investigated_once(cluster: Cluster, ids: list[str]) -> None:
    rows = [r for r in cluster.rows() if r.kind == "alert"]
    assert sorted(r.alert_id for r in rows if r.state == "done") == sorted(ids)
    stored = alerts(cluster)
    for alert_id in ids:
        ts = stored[alert_id].slack_ts
        assert ts is not None and len(cluster.outcomes(ts)) == 1, alert_id


def test_every_alert_answered_202_is_investigated_after_a_kill(cluster: Cluster) -> None:
    cluster.ensure(1)
    cluster.gemini.hold()  # nothing concludes before the kill
    try:
        ids = storm(cluster, 24)
        restarted = restart(cluster)  # killed the moment the last 202 was answered
    finally:
        cluster.gemini.release()
    wait_for(lambda: all_settled(cluster, ids), BOUND_S * 2, "every alert to be investigated")

    stored = alerts(cluster)
    assert {stored[i].status for i in ids} == {"concluded"}
    assert time.monotonic() - restarted < BOUND_S * 2
    assert_each_investigated_once(cluster, ids)


def test_a_queued_backlog_runs_within_seconds_of_a_restart(cluster: Cluster) -> None:
    cluster.ensure(1)
    cluster.gemini.hold()
    try:
        ids = storm(cluster, 8)
        # two run; the rest wait: some with their card and work row, some still without
        wait_for(lambda: cluster.gemini.arrivals_with("") >= LIMIT, BOUND_S, "two runs")
        queued = [a for a in alerts(cluster).values() if a.status == "queued"]
        assert len(queued) >= len(ids) - LIMIT
        restarted = restart(cluster)
    finally:
        cluster.gemini.release()
    wait_for(lambda: all_settled(cluster, ids), BOUND_S, "the backlog to be investigated")

    assert time.monotonic() - restarted < BOUND_S  # the old adoption alone waited 300 s
    assert {alerts(cluster)[i].status for i in ids} == {"concluded"}
    assert_each_investigated_once(cluster, ids)


def test_the_killed_run_is_settled_interrupted_and_its_status_message_says_so(
    cluster: Cluster,
) -> None:
    alert_id, killed = killed_mid_run(cluster)
    wait_for(lambda: all_settled(cluster, [alert_id]), BOUND_S, "the rerun")

    stored = alerts(cluster)[alert_id]
    rows = {i.id: i for i in investigations(cluster)}
    old, new = rows[killed.id], rows[str(stored.investigation_id)]
    assert (old.status, old.replaced_by, old.finished_at is not None) == (
        "interrupted",
        new.id,
        True,
    )
    assert new.status == "concluded" and new.id != old.id
    [row] = [r for r in cluster.rows() if r.alert_id == alert_id]
    edits = [
        json.dumps(c.args)
        for c in list(cluster.slack.calls)
        if c.method == "chat.update" and c.args.get("ts") == row.posted["status_ts"]
    ]
    assert any(f"run `{old.id[:12]}`" in e and "interrupted" in e for e in edits), edits
    top = [c for c in cluster.posts(WEBHOOK_CHANNEL) if not c.args.get("thread_ts")]
    assert len(top) == 1  # one card; the rerun edits the same status message


def test_a_run_killed_at_its_last_attempt_is_given_up_and_its_status_message_says_so(
    one_attempt: Cluster,
) -> None:
    cluster = one_attempt
    alert_id, killed = killed_mid_run(cluster)
    cluster.wait(lambda: alerts(cluster)[alert_id].status == "failed", BOUND_S, "the give-up")
    [row] = [r for r in cluster.rows() if r.alert_id == alert_id]

    def edits() -> list[str]:
        return [
            str(c.args.get("text"))
            for c in list(cluster.slack.calls)
            if c.method == "chat.update" and c.args.get("ts") == row.posted["status_ts"]
        ]

    cluster.wait(lambda: TOLD in edits(), BOUND_S, "the status message to say so")
    assert (row.state, row.attempts) == ("failed", 1)
    assert edits().count(TOLD) == 1 and edits()[-1] == TOLD  # once, and it stays so
    told = [c for c in list(cluster.slack.calls) if c.args.get("text") == TOLD]
    assert [c.method for c in told] == ["chat.update"]  # the status message, no new post
    [settled] = investigations(cluster)  # nothing ran again
    assert (settled.id, settled.status, settled.replaced_by, settled.error) == (
        killed.id,
        "interrupted",
        None,
        TOLD,
    )

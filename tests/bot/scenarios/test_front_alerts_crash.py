"""``socbot serve --mode http`` killed between the front's 202 and the hand-over: every
alert the front accepted is investigated, exactly once, after a restart.

Real processes (``tests/serve_cluster.py``) on one SQLite database. The app process is
stopped (``SIGSTOP``: its loop cannot run at all) while alerts are POSTed, so the front,
a process of its own, answers every 202 with no hand-over reaching the app; then the app
gets ``kill -9``. Its front sees its stdin end, fails to hand the alerts over and exits;
the restarted replica's triage sweeps the ``received`` alerts and places each once.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil  # type: ignore[import-untyped]
import pytest

from tests.bot.scenarios.test_crash_recovery import (
    BOUND_S,
    SETTINGS,
    alerts,
    all_settled,
    assert_each_investigated_once,
    storm,
)
from tests.serve_cluster import Cluster, wait_for
from tests.serve_scenario import script

COUNT = 12


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    cluster = Cluster(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}", tmp_path, script(), SETTINGS)
    try:
        yield cluster
    finally:
        cluster.close()


def test_alerts_accepted_by_the_front_survive_a_kill_before_the_hand_over(
    cluster: Cluster,
) -> None:
    [app] = cluster.ensure(1)
    [front] = psutil.Process(app.process.pid).children()
    os.kill(app.process.pid, signal.SIGSTOP)  # the app's loop cannot run from here on
    try:
        started = time.monotonic()
        ids = storm(cluster, COUNT)  # every one a 202, from the front alone
        answered_s = time.monotonic() - started
        stored = alerts(cluster)
        assert {stored[i].status for i in ids} == {"received"}  # stored, not handed over
    finally:
        app.kill()  # kill -9 (a stopped process dies too)
    assert answered_s < 60
    front.wait(60)  # its stdin ended: it tried the hand-overs and left

    cluster.ready(cluster.spawn())
    wait_for(lambda: all_settled(cluster, ids), BOUND_S, "every accepted alert investigated")
    assert {alerts(cluster)[i].status for i in ids} == {"concluded"}

    def rows_ended() -> bool:  # the alert concludes a moment before its work row ends
        return all(r.state in ("done", "failed", "cancelled") for r in cluster.rows())

    wait_for(rows_ended, BOUND_S, "the work rows to end")
    assert_each_investigated_once(cluster, ids)

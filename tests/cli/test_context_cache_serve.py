"""A real ``socbot serve`` process with explicit context caching on deletes the caches it
made when it is stopped with SIGTERM (as a deploy or ``docker stop`` stops it), so their
storage is not billed until the TTL runs out.

The process is a ``tests/serve_cluster.py`` replica against the fake Gemini over HTTP,
whose ``cachedContents`` (``bench.cached_contents``) records every create and delete.
Every wait is on what the fakes recorded or the process did; the bounds are upper
bounds only (a loaded machine), never waited out when the test passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_cluster import Cluster, Replica, wait_for
from tests.serve_scenario import post_alert, script, settings_toml

ALERT = Path(__file__).parents[1] / "fixtures" / "alerts" / "leveret-scc.json"  # genuine (NOTICE)
SETTINGS = settings_toml(limit=2, lease_s=10.0, poll_s=0.5, grace_s=0.5) + (
    "\n[gemini.context_cache]\nenabled = true\n"
)
BOUND_S = 90.0  # an upper bound only (a loaded machine), never waited out when green


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    cluster = Cluster(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}", tmp_path, script(), SETTINGS)
    try:
        yield cluster
    finally:
        cluster.close()


def cache_calls(cluster: Cluster) -> list[tuple[str, str]]:
    return list(cluster.gemini.cached_contents.calls)


def test_sigterm_deletes_the_context_caches_the_process_made(cluster: Cluster) -> None:
    (replica,) = cluster.ensure(1)
    response = post_alert(replica, ALERT.read_text())
    assert response.status_code == 202, response.text
    alert_id = response.json()["alert_id"]
    # the run ends with its conclusion: by then the planner and the concluder named a cache
    wait_for(lambda: _done(cluster, alert_id), BOUND_S, f"the run of {alert_id} to finish")
    created = [name for verb, name in cache_calls(cluster) if verb == "create"]
    assert len(created) == 1 and created[0], cache_calls(cluster)  # one per model, made
    (name,) = created
    named = {c.cached_content for c in list(cluster.gemini.calls) if c.cached_content}
    assert named == {name}  # the calls without tools used it
    assert name in cluster.gemini.cached_contents.caches  # alive while the process runs

    replica.terminate()
    code = replica.process.wait(BOUND_S)
    assert code == 0, _tail(replica)
    assert cache_calls(cluster)[-1] == ("delete", name), cache_calls(cluster)
    assert cluster.gemini.cached_contents.caches == {}
    assert "deleted 1 context cache(s)" in replica.output(), _tail(replica)


def _done(cluster: Cluster, alert_id: str) -> bool:
    rows = [r for r in cluster.rows() if r.alert_id == alert_id]
    if rows and rows[0].state not in ("queued", "running", "done"):
        raise AssertionError(f"the run ended {rows[0].state}: {rows[0].error}")
    return bool(rows) and rows[0].state == "done"


def _tail(replica: Replica) -> str:
    return replica.output()[-3000:]

"""Past alerts: stored when investigated, searched by indicator/text/time, with verdicts."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from alerts.parse import Alert, parse_alert
from core.scope import EVERYTHING
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.triage.alerts import AlertStore
from tools import past_alerts
from tools.base import Budget, ToolRegistry, ToolResult

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"


def fixture_alert(name: str, **changes: Any) -> Alert:
    alert = parse_alert(json.loads((ALERTS / name).read_text()))
    return alert.model_copy(update=changes)


@pytest.fixture
def store(db: Database) -> AlertStore:
    return AlertStore(db)


@pytest.fixture
def registry(db: Database) -> ToolRegistry:
    reg = ToolRegistry(result_chars=50_000)
    past_alerts.register(reg, db)
    return reg


async def call(reg: ToolRegistry, name: str, inv: str = "inv-now", **args: Any) -> ToolResult:
    return await reg.dispatch(
        name, args, allowed=reg.names(), investigation_id=inv, budget=Budget(), scope=EVERYTHING
    )


@pytest.fixture
async def history(store: AlertStore) -> dict[str, Alert]:
    """Three alerts over three weeks; the GuardDuty one concluded as benign."""
    now = datetime.now(UTC)
    gd = fixture_alert("leveret-guardduty-finding.json", event_time=now - timedelta(days=20))
    scc = fixture_alert("leveret-scc.json", event_time=now - timedelta(days=3))
    generic = parse_alert(
        {"title": "Brute force 100% from 45.33.32.156", "severity": "low"}
    ).model_copy(update={"event_time": None})
    await store.save(gd, investigation_id="inv-old")
    await store.set_verdict(gd.id, verdict="benign", summary="Known sample finding; no action.")
    await store.save(scc)
    await store.save(generic)
    return {"gd": gd, "scc": scc, "generic": generic}


async def test_search_by_indicator_is_exact_case_insensitive_and_refangs(
    registry: ToolRegistry, history: dict[str, Alert]
) -> None:
    result = await call(registry, "search_past_alerts", indicator="185.220.101[.]42")
    assert [a["id"] for a in result.data["alerts"]] == [history["scc"].id]
    hit = result.data["alerts"][0]
    assert hit["source"] == "scc" and hit["severity"] == "critical"
    assert hit["verdict"] == "not concluded"
    by_domain = await call(registry, "search_past_alerts", indicator="3322.ORG")
    assert [a["id"] for a in by_domain.data["alerts"]] == [history["gd"].id]
    assert by_domain.data["alerts"][0]["verdict"] == "benign"
    partial = await call(registry, "search_past_alerts", indicator="185.220.101")
    assert partial.data == {"count": 0, "alerts": [], "note": "no past alert matches these filters"}


async def test_search_by_text_matches_title_summary_and_raw(
    registry: ToolRegistry, history: dict[str, Alert]
) -> None:
    async def ids(text: str) -> list[str]:
        result = await call(registry, "search_past_alerts", text=text)
        return [a["id"] for a in result.data["alerts"]]

    assert await ids("cryptocurrency") == [history["scc"].id]  # title
    assert await ids("no action") == [history["gd"].id]  # verdict summary
    assert await ids("InstanceDetails") == [history["gd"].id]  # raw JSON
    assert await ids("100%") == [history["generic"].id]  # LIKE wildcards are literal
    assert await ids("brute_force") == []  # "_" is not a wildcard either


async def test_time_window_and_newest_first(
    registry: ToolRegistry, history: dict[str, Alert]
) -> None:
    recent = await call(registry, "search_past_alerts", since="7d")
    # The generic alert has no event time: it counts as when it was stored (now).
    assert [a["id"] for a in recent.data["alerts"]] == [history["generic"].id, history["scc"].id]
    cutoff = (datetime.now(UTC) - timedelta(days=10)).date().isoformat()
    older = await call(registry, "search_past_alerts", until=cutoff)
    assert [a["id"] for a in older.data["alerts"]] == [history["gd"].id]
    everything = await call(registry, "search_past_alerts")
    assert everything.data["count"] == 3
    limited = await call(registry, "search_past_alerts", limit=1)
    assert [a["id"] for a in limited.data["alerts"]] == [history["generic"].id]


async def test_filters_combine(registry: ToolRegistry, history: dict[str, Alert]) -> None:
    result = await call(
        registry, "search_past_alerts", indicator="185.220.101.42", text="mining", since="30d"
    )
    assert [a["id"] for a in result.data["alerts"]] == [history["scc"].id]
    none = await call(registry, "search_past_alerts", indicator="185.220.101.42", until="30d")
    assert none.data["count"] == 0


async def test_the_running_investigations_own_alert_is_left_out(
    registry: ToolRegistry, history: dict[str, Alert]
) -> None:
    result = await call(registry, "search_past_alerts", inv="inv-old", indicator="3322.org")
    assert result.data["count"] == 0


async def test_the_alert_in_the_running_investigations_thread_is_left_out(
    db: Database, store: AlertStore, registry: ToolRegistry, history: dict[str, Alert]
) -> None:
    # The bot stores the alert with its thread root, then the engine starts a run in
    # that thread; the alert is linked to the run only when it ends.
    await store.set_slack_message(history["scc"].id, "C0ALERTS", "1731900000.000100")
    await InvestigationStore(db).create(
        "inv-live", "slack:C0ALERTS:1731900000.000100", "alert", "alert"
    )
    live = await call(registry, "search_past_alerts", inv="inv-live", indicator="185.220.101.42")
    assert live.data["count"] == 0
    other = await call(registry, "search_past_alerts", inv="inv-other", indicator="185.220.101.42")
    assert [a["id"] for a in other.data["alerts"]] == [history["scc"].id]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"since": "last tuesday"}, "cannot read time 'last tuesday'"),
        ({"since": "1d", "until": "7d"}, "'since' is after 'until'"),
        ({"limit": 500}, "invalid arguments: limit"),
    ],
)
async def test_bad_arguments_are_explained(
    registry: ToolRegistry, args: dict[str, Any], error: str
) -> None:
    result = await call(registry, "search_past_alerts", **args)
    assert not result.ok and result.data["error"].startswith(error)


async def test_get_past_alert_with_its_conclusion(
    db: Database, store: AlertStore, registry: ToolRegistry
) -> None:
    alert = fixture_alert("leveret-scc_mini.json")
    investigations = InvestigationStore(db)
    await investigations.create("inv-1", "slack:C1:1.0", "alert", "alert text")
    conclusion = {
        "verdict": "true_positive",
        "severity": "critical",
        "confidence": "high",
        "summary": "Cryptominer deployed from a Tor exit node.",
        "key_findings": [{"finding": "xmrig running", "evidence": "process list"}],
        "uncertainties": [],
        "recommendations": ["Isolate web-server-prod-01"],
    }
    await investigations.finish(
        "inv-1",
        status="concluded",
        mode="planned",
        objective="Decide whether the miner is real",
        verdict="true_positive",
        record={"conclusion": conclusion},
        usage={},
        error=None,
    )
    await store.save(alert, investigation_id="inv-1")
    await store.set_verdict(
        alert.id, verdict="true_positive", summary=conclusion["summary"], investigation_id="inv-1"
    )

    result = await call(registry, "get_past_alert", alert_id=alert.id)
    assert result.ok
    data = result.data
    assert data["title"] == alert.title and data["verdict"] == "true_positive"
    assert data["summary"] == "Cryptominer deployed from a Tor exit node."
    assert data["investigation"] == {
        "id": "inv-1",
        "status": "concluded",
        "objective": "Decide whether the miner is real",
        "verdict": "true_positive",
        "conclusion": conclusion,
    }
    assert {"kind": "ipv4", "value": "185.220.101.42", "private": False} in data["indicators"]
    assert data["raw"]["finding"]["category"] == "Execution: Cryptocurrency Mining Hash Match"
    assert data["event_time"] == "2025-11-08T05:23:47.891000+00:00"


async def test_get_unknown_alert(registry: ToolRegistry) -> None:
    result = await call(registry, "get_past_alert", alert_id="nope")
    assert result.data == {"error": "no past alert with id 'nope'"}


async def test_store_slack_link_and_resave(store: AlertStore) -> None:
    alert = fixture_alert("leveret-guardduty.json")
    await store.save(alert)
    await store.set_slack_message(alert.id, "C0ALERTS", "1731900000.000100")
    await store.set_investigation(alert.id, "inv-9")
    found = await store.find_by_slack_message("C0ALERTS", "1731900000.000100")
    assert found is not None and found.id == alert.id and found.investigation_id == "inv-9"
    assert await store.find_by_slack_message("C0ALERTS", "1.0") is None
    await store.save(alert.model_copy(update={"title": "renamed"}))
    again = await store.get(alert.id)
    assert again is not None and again.title == "renamed"
    assert again.indicators == alert.indicators
    assert again.created_at.tzinfo is not None


async def test_defaults_and_edges(store: AlertStore, registry: ToolRegistry) -> None:
    now = datetime.now(UTC)
    for n in range(12):
        scan = parse_alert({"title": f"Port scan {n} from 45.33.32.156"})
        await store.save(scan.model_copy(update={"event_time": now - timedelta(minutes=n)}))
    assert (await call(registry, "search_past_alerts")).data["count"] == 10  # the default
    assert len(await store.search(scope=EVERYTHING)) == 12  # the store's default is 20
    same = "2025-11-08T05:00:00+00:00"
    assert (await call(registry, "search_past_alerts", since=same, until=same)).ok
    long = "x" * 400
    await store.set_verdict(scan.id, verdict="benign", summary=long)
    got = await call(registry, "get_past_alert", alert_id=scan.id)
    assert got.data["summary"] == long  # whole, where the search shows 300 characters
    [brief] = (await call(registry, "search_past_alerts", text="Port scan 11")).data["alerts"]
    assert brief["summary"] == "x" * 300 + "…"


async def test_relative_times_are_utc_on_any_host(
    store: AlertStore, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    recent = parse_alert({"title": "Login from 45.33.32.156"})
    when = datetime.now(UTC) - timedelta(minutes=30)
    await store.save(recent.model_copy(update={"event_time": when}))
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: a host's clock is not UTC
    time.tzset()
    try:
        assert (await call(registry, "search_past_alerts", since="1h")).data["count"] == 1
        assert (await call(registry, "search_past_alerts", until="1h")).data["count"] == 0
    finally:
        monkeypatch.undo()
        time.tzset()

"""The past-alert tools answer from the request's scope only (``RunContext.scope``): a call
that names none sees nothing, another channel's id is answered as an unknown one, and the
model is never told why. Invented alerts on SQLite."""

from __future__ import annotations

from typing import Any

from alerts.parse import parse_alert
from core.scope import EVERYTHING, NOTHING, Scope
from store.db.engine import Database
from store.triage.alerts import AlertStore
from tools import past_alerts
from tools.base import Budget, ToolRegistry

MINE, THEIRS = "CALERTS01", "CWEBHOOK1"


async def world(db: Database) -> tuple[ToolRegistry, dict[str, str]]:
    registry = ToolRegistry(result_chars=50_000)
    past_alerts.register(registry, db)
    store, ids = AlertStore(db), {}
    for channel in (MINE, THEIRS):
        alert = parse_alert({"title": f"Tor login from 185.220.101.42 in {channel}"})
        await store.save(alert, slack_channel=channel, slack_ts="1.1")
        ids[channel] = alert.id
    return registry, ids


async def call(registry: ToolRegistry, name: str, **args: Any) -> dict[str, Any]:
    scope = args.pop("scope", None)
    more = {} if scope is None else {"scope": scope}
    result = await registry.dispatch(
        name, args, allowed=registry.names(), investigation_id="i", budget=Budget(), **more
    )
    return result.data


async def test_the_tools_see_the_scope_of_their_call(db: Database) -> None:
    registry, ids = await world(db)
    mine = Scope.of([MINE])
    found = await call(registry, "search_past_alerts", indicator="185.220.101[.]42", scope=mine)
    assert [a["id"] for a in found["alerts"]] == [ids[MINE]] and found["count"] == 1
    got = await call(registry, "get_past_alert", alert_id=ids[MINE], scope=mine)
    assert got["id"] == ids[MINE] and got["title"].endswith(MINE)
    every = await call(registry, "search_past_alerts", scope=EVERYTHING)
    assert {a["id"] for a in every["alerts"]} == set(ids.values())


async def test_another_channels_id_is_an_unknown_id(db: Database) -> None:
    registry, ids = await world(db)
    mine = Scope.of([MINE])
    theirs = await call(registry, "get_past_alert", alert_id=ids[THEIRS], scope=mine)
    unknown = await call(registry, "get_past_alert", alert_id="0" * 32, scope=mine)
    assert theirs == {"error": f"no past alert with id {ids[THEIRS]!r}"}
    assert unknown == {"error": f"no past alert with id {'0' * 32!r}"}
    spaced = await call(registry, "get_past_alert", alert_id=f" {ids[THEIRS]} ", scope=mine)
    assert spaced == {"error": f"no past alert with id {' ' + ids[THEIRS] + ' '!r}"}


async def test_a_call_with_no_scope_sees_nothing(db: Database) -> None:
    registry, ids = await world(db)
    for scope in (None, NOTHING):  # not given: the registry's default
        found = await call(registry, "search_past_alerts", scope=scope)
        assert found == {"count": 0, "alerts": [], "note": "no past alert matches these filters"}
        got = await call(registry, "get_past_alert", alert_id=ids[MINE], scope=scope)
        assert got == {"error": f"no past alert with id {ids[MINE]!r}"}

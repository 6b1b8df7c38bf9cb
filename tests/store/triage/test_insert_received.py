"""``AlertStore.insert_received``: the acknowledging front's group commit stores new alerts
as ``received`` in one statement, on SQLite and PostgreSQL; an id already stored fails the
whole transaction and replaces nothing."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from alerts.parse import parse_alert
from core.scope import EVERYTHING
from store.db.engine import Database
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses


async def test_new_alerts_are_stored_received_with_their_indicators(any_db: Database) -> None:
    alerts = [
        parse_alert({"title": f"Impossible travel {i}", "src_ip": f"203.0.113.{i}"})
        for i in range(1, 4)
    ]
    await AlertStore(any_db).insert_received(alerts)
    received = await AlertStatuses(any_db).by_status("received")
    assert {a.id for a in received} == {a.id for a in alerts}
    stored = await AlertStore(any_db).get(alerts[1].id)
    assert stored is not None
    assert stored.status == "received"
    assert stored.title == "Impossible travel 2"
    assert [(i.kind, i.value) for i in stored.indicators] == [("ipv4", "203.0.113.2")]
    assert await AlertStore(any_db).search(scope=EVERYTHING, indicator="203.0.113.3") != []


async def test_an_id_already_stored_fails_all_and_replaces_nothing(any_db: Database) -> None:
    store = AlertStore(any_db)
    kept = parse_alert({"title": "Stored and placed", "src_ip": "203.0.113.7"})
    await store.save(kept, status="grouped")
    again = kept.model_copy(update={"title": "Sent again by someone else"})
    other = parse_alert({"title": "A new one", "src_ip": "203.0.113.8"})
    with pytest.raises(IntegrityError):
        await store.insert_received([other, again])
    stored = await store.get(kept.id)
    assert stored is not None
    assert (stored.title, stored.status) == ("Stored and placed", "grouped")
    assert await store.get(other.id) is None  # the same transaction: not stored either

"""``AlertStore.search`` and ``visible`` read only the alerts of a scope (``core.scope``), on
SQLite and PostgreSQL: the channel filter is in the query, before its limit; an alert of
another channel is as absent as an unknown id; an empty scope reads nothing. Invented
alerts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alerts.parse import Alert, parse_alert
from core.scope import EVERYTHING, NOTHING, Scope
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.triage.alerts import AlertStore

MINE, THEIRS, OTHER = "CALERTS01", "CWEBHOOK1", "CELSEWHERE"
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def alert(title: str, minutes_ago: int) -> Alert:
    found = parse_alert({"title": title, "severity": "high"})
    return found.model_copy(update={"event_time": NOW - timedelta(minutes=minutes_ago)})


async def world(db: Database) -> dict[str, Alert]:
    """An old alert in MINE, 12 newer ones in THEIRS, one in OTHER, one posted nowhere."""
    store = AlertStore(db)
    made = {"mine": alert("Tor login from 185.220.101.42 (mine)", 600)}
    await InvestigationStore(db).create("inv-mine", f"slack:{MINE}:1.1", "alert", "t")
    await store.save(made["mine"], investigation_id="inv-mine", slack_channel=MINE, slack_ts="1.1")
    await store.set_verdict(made["mine"].id, verdict="benign", summary="a known scanner")
    for n in range(12):
        made[f"theirs{n}"] = alert(f"Tor login from 185.220.101.42 ({n})", n)
        await store.save(made[f"theirs{n}"], slack_channel=THEIRS, slack_ts=f"2.{n}")
    made["other"] = alert("Tor login from 185.220.101.42 (other)", 30)
    await store.save(made["other"], slack_channel=OTHER, slack_ts="3.1")
    made["nowhere"] = alert("Tor login from 185.220.101.42 (terminal)", 20)
    await store.save(made["nowhere"])  # `socbot investigate`: no channel
    return made


async def test_the_channel_filter_comes_before_the_limit(any_db: Database) -> None:
    made = await world(any_db)
    store = AlertStore(any_db)
    mine = await store.search(scope=Scope.of([MINE]), indicator="185.220.101.42", limit=5)
    assert [a.id for a in mine] == [made["mine"].id]  # behind 12 newer alerts of THEIRS
    assert mine[0].verdict == "benign"
    two = await store.search(scope=Scope.of([MINE, OTHER]), text="tor login", limit=50)
    assert [a.id for a in two] == [made["other"].id, made["mine"].id]
    every = await store.search(scope=EVERYTHING, text="tor login", limit=50)
    assert {a.id for a in every} == {a.id for a in made.values()}  # the terminal's too
    assert len(await store.search(scope=EVERYTHING, limit=5)) == 5
    for n in range(7):
        await store.save(alert(f"Port scan {n}", 700 + n), slack_channel=MINE, slack_ts=f"4.{n}")
    assert len(await store.search(scope=EVERYTHING)) == 20  # of 22: the default limit
    assert len(await store.search(scope=Scope.of([MINE]))) == 8


async def test_an_empty_scope_reads_nothing(any_db: Database) -> None:
    made = await world(any_db)
    store = AlertStore(any_db)
    for nothing in (NOTHING, Scope(), Scope.of([]), Scope.of([None, ""])):
        assert nothing.empty
        assert await store.search(scope=nothing, limit=50) == []
        assert await store.visible(made["mine"].id, nothing) is None
        assert await store.visible(made["nowhere"].id, nothing) is None
    assert not EVERYTHING.empty and not Scope.of([MINE]).empty
    assert Scope.of([MINE, None, "", MINE]) == Scope(frozenset({MINE}))


async def test_a_scope_is_a_list_of_exact_channel_ids(any_db: Database) -> None:
    made = await world(any_db)
    store = AlertStore(any_db)
    for near in ("C%", "CALERTS0_", "calerts01", f"{MINE} ", MINE[:-1], "%"):
        assert await store.search(scope=Scope.of([near]), limit=50) == []
        assert await store.visible(made["mine"].id, Scope.of([near])) is None


async def test_another_channels_alert_is_as_absent_as_an_unknown_id(any_db: Database) -> None:
    made = await world(any_db)
    store = AlertStore(any_db)
    scope = Scope.of([MINE])
    seen = await store.visible(made["mine"].id, scope)
    assert seen is not None and seen.id == made["mine"].id and seen.slack_channel == MINE
    assert seen.investigation["id"] == "inv-mine" and seen.verdict == "benign"
    assert await store.visible(made["theirs0"].id, scope) is None
    assert await store.visible(made["other"].id, scope) is None
    assert await store.visible(made["nowhere"].id, scope) is None  # no channel: nobody's
    assert await store.visible("no-such-alert", scope) is None
    everything = await store.visible(made["nowhere"].id, EVERYTHING)
    assert everything is not None and everything.title == made["nowhere"].title
    assert (await store.visible(made["theirs3"].id, Scope.of([THEIRS]))) == (
        await store.get(made["theirs3"].id)
    )

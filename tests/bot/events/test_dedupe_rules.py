"""``bot.events.middleware.Deduper`` on its own, with the real ``SlackStore`` on SQLite: the
in-memory claim the middleware makes before the ack (its size bound, oldest first
out), the persistent claims of events and messages, the hourly prune on a clock the
test sets, and what the bolt middleware drops. Bodies are the recorded ``app_mention``
deliveries (tests/fixtures/slack), a retry carrying the same ``event_id``. Part of the
mutation group ``slack_auth`` (``scripts/mutation.py``)."""

from __future__ import annotations

import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest

from bot.events import middleware
from bot.events.middleware import Deduper
from store.db.engine import Database
from store.slack import SlackStore
from tests.db_copy import copied_db  # noqa: F401  (db: a copy of one schema)
from tests.slack_support import load


def test_the_memory_claim_is_bounded_oldest_first(db: Database) -> None:
    dedupe = Deduper(SlackStore(db), recent=2)  # memory only: the store is not asked
    assert [dedupe.claim_recent(e) for e in ("Ev1", "Ev2", "Ev1")] == [True, True, False]
    assert dedupe.claim_recent("Ev3")  # three: Ev1, the oldest, is forgotten
    assert [dedupe.claim_recent(e) for e in ("Ev3", "Ev2")] == [False, False]
    assert dedupe.claim_recent("Ev1")  # forgotten, so new again; Ev2 goes
    assert [dedupe.claim_recent(e) for e in ("Ev3", "Ev1", "Ev2")] == [False, False, True]


async def test_events_and_messages_are_claimed_once_under_their_own_keys(db: Database) -> None:
    store = SlackStore(db)
    dedupe = Deduper(store)
    assert dedupe.recent == 10_000
    assert [await dedupe.claim_event("Ev0MENTION01") for _ in range(2)] == [True, False]
    assert not await store.claim("event:Ev0MENTION01")
    assert await dedupe.claim_event("Ev0MENTION02")
    claims = [await dedupe.claim_message("CSOC00001", ts) for ts in ("1.1", "1.1", "1.2")]
    assert claims == [True, False, True]
    assert await dedupe.claim_message("CSOC00002", "1.1")  # the same ts elsewhere
    assert not await store.claim("msg:CSOC00001:1.1")
    assert await store.claim("event:CSOC00001:1.1")  # the two kinds never collide


async def test_seen_keys_are_pruned_first_then_hourly(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TTL under zero makes every prune empty the table, so each prune shows: a
    claim made before it is first again."""
    now = [10.0]
    monkeypatch.setattr(middleware, "time", SimpleNamespace(monotonic=lambda: now[0]))
    store = SlackStore(db, seen_ttl=timedelta(seconds=-60))
    await store.claim("event:Ev1")
    dedupe = Deduper(store)
    pruned = []
    for at in (10.0, 20.0, 3609.0, 3610.0, 3611.0, 7209.0, 7210.0):
        now[0] = at
        pruned.append(await dedupe.claim_event("Ev1"))  # True: pruned just before
    assert pruned == [True, False, False, True, False, False, True]


async def test_the_middleware_drops_a_repeated_delivery(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    dedupe = Deduper(SlackStore(db))
    mention, retry = load("app_mention.json"), load("app_mention_retry.json")["body"]
    served: list[str] = []

    async def next_() -> None:
        served.append("served")

    twin = load("message_mention_twin.json")  # the same message, another delivery
    with caplog.at_level(logging.INFO, logger="bot.events.middleware"):
        assert await dedupe.middleware(mention, next_) is None
        assert await dedupe.middleware(twin, next_) is None
        dropped = await dedupe.middleware(retry, next_)
    assert dropped is not None and (dropped.status, dropped.body) == (200, "")
    assert served == ["served"] * 2
    assert caplog.messages == ["duplicate delivery of event Ev0MENTION01 dropped"]
    assert await dedupe.claim_event("Ev0MENTION01")  # memory only: the store is the listener's
    click = {**load("block_actions_feedback.json"), "event_id": "Ev0MENTION01"}
    no_id = {**mention, "event_id": None}
    odd_id = {**mention, "event_id": 1700000100}
    for body in (click, click, no_id, no_id, odd_id, odd_id):  # not deliveries to dedupe
        assert await dedupe.middleware(body, next_) is None
    assert served == ["served"] * 8

"""Text search on its index (store/schema/search.py, migrations 0011 and 0015), on both databases.

The rows are invented (documentation addresses, RFC 5737). An indicator is found as
whole words: ``203.0.113.7`` is not a piece of ``203.0.113.70``; the index follows
inserts, updates and deletes; a query is data (quotes, FTS5 and regex syntax match
nothing or the words they hold, and never raise).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, insert, text, update

from store.db import migrate
from store.db.engine import Database
from store.investigations.browse import BrowseStore, Filters, Visibility
from store.investigations.runs import InvestigationStore
from store.schema import AlertRow, Investigation, InvestigationStatus, search
from store.schema.search import words
from tests.pg_server import PostgresServer

EVERYONE = Visibility(channels=None, terminal=True)
RUNS = {
    "a": ("sign-in from 203.0.113.70", None),
    "b": ("203.0.113.7:443 answered", None),
    "c": ("a question", "Decide whether host-4242 is compromised"),
    "d": ("an alert", None),
    "e": ("seen at 1203.0.113.7 and evil_host", None),
}


async def _store(db: Database) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    async with db.session() as session:  # only these columns: an older schema has them
        runs = [
            {
                "id": key,
                "conversation_id": "slack:C1:1.0",
                "kind": "alert",
                "status": "concluded",
                "input": text,
                "objective": objective,
                "created_at": start + timedelta(minutes=n),
            }
            for n, (key, (text, objective)) in enumerate(RUNS.items())
        ]
        await session.execute(insert(Investigation.__table__), runs)
        session.add(
            AlertRow(
                id="alert-d",
                source="guardduty",
                title="t",
                raw={},
                indicators=[],
                indicator_text=" ip:203.0.113.7 domain:evil.example ",
                investigation_id="d",
            )
        )


async def _found(db: Database, text: str) -> set[str]:
    page = await BrowseStore(db).page(Filters(text=text), EVERYONE, cursor=None)
    return {row.id for row in page.rows}


async def test_an_indicator_is_found_whole(any_db: Database) -> None:
    await _store(any_db)
    assert await _found(any_db, "203.0.113.7") == {"b", "d"}
    assert await _found(any_db, "203.0.113.70") == {"a"}
    assert await _found(any_db, "HOST-4242") == {"c"}
    assert await _found(any_db, "host-424") == set()
    assert await _found(any_db, "evil_host") == {"e"}
    assert await _found(any_db, "evil") == {"d", "e"}  # "_" parts words, as "-" does
    assert await _found(any_db, "ip:203.0.113.7") == {"d"}


async def test_a_common_word_reads_newest_first_and_finds_the_same(
    any_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _store(any_db)
    monkeypatch.setattr(search, "COMMON", 0)  # every word is common: SQLite's other plan
    assert await _found(any_db, "203.0.113.7") == {"b", "d"}
    assert await _found(any_db, "host-4242") == {"c"}
    browse, wanted = BrowseStore(any_db), Filters(text="203.0.113.7")
    first = await browse.page(wanted, EVERYONE, cursor=None, size=1)
    assert [r.id for r in first.rows] == ["d"] and first.next_cursor is not None
    second = await browse.page(wanted, EVERYONE, cursor=first.next_cursor, size=1)
    assert [r.id for r in second.rows] == ["b"] and second.next_cursor is None


async def test_a_query_is_data(any_db: Database) -> None:
    await _store(any_db)
    for hostile in ('"', "NEAR(sign in)", "* OR 1", r"\m.*", "') OR 1=1 --", "%", "^$|"):
        assert await _found(any_db, hostile) <= {"a"}  # only "sign in" has words in a
    assert await _found(any_db, 'sign" OR "answered') == set()
    assert await _found(any_db, "NEAR(sign in)") == set()
    assert await _found(any_db, "sign-in") == {"a"}


async def test_the_index_follows_writes(any_db: Database) -> None:
    await _store(any_db)
    async with any_db.session() as session:
        await session.execute(
            update(Investigation).where(Investigation.id == "c").values(objective="look at x9")
        )
        await session.execute(delete(AlertRow).where(AlertRow.id == "alert-d"))
        await session.execute(delete(Investigation).where(Investigation.id == "b"))
    assert await _found(any_db, "host-4242") == set()
    assert await _found(any_db, "x9") == {"c"}
    assert await _found(any_db, "203.0.113.7") == set()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_runs_stored_before_the_index_are_found(
    backend: str, tmp_path: Path, postgres: PostgresServer
) -> None:
    url = (
        f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        if backend == "sqlite"
        else postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
    )
    db = Database(url)
    try:
        await migrate.upgrade(db.engine, "0010")  # the revision before the index
        await _store(db)
        await db.create()  # to the head, as every start does
        assert await _found(db, "203.0.113.7") == {"b", "d"}
        assert await _found(db, "host-4242") == {"c"}
    finally:
        await db.close()


CONCLUDED = {
    "conclusion": {
        "summary": "Credential stuffing succeeded for j.doe@example.com.",
        "key_findings": [{"finding": "MFA was bypassed", "evidence": "row at 22:06:13"}],
    },
    "alert": {"title": "Sign-in anomaly", "entities": [{"kind": "host", "value": "web-prod-01"}]},
}


async def test_what_a_run_concluded_is_found(any_db: Database) -> None:
    """The conclusion's summary and findings and the alert's title and entities are found,
    written through ``finish`` as the engine writes them."""
    await _store(any_db)
    await InvestigationStore(any_db).finish(
        "a",
        status=InvestigationStatus.CONCLUDED,
        mode="planned",
        objective=None,
        verdict="true_positive",
        record=CONCLUDED,
        usage={},
        error=None,
    )
    for query in ("j.doe@example.com", "MFA was bypassed", "22:06:13", "web-prod-01"):
        assert await _found(any_db, query) == {"a"}, query
    assert await _found(any_db, "sign-in anomaly") == {"a"}
    assert await _found(any_db, "j.doe@example.org") == set()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_runs_concluded_before_0015_are_found(
    backend: str, tmp_path: Path, postgres: PostgresServer
) -> None:
    url = (
        f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        if backend == "sqlite"
        else postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
    )
    db = Database(url)
    try:
        await migrate.upgrade(db.engine, "0011")
        async with db.engine.begin() as conn:  # a run stored before the digest column
            await conn.execute(
                text(
                    "INSERT INTO investigations (id, conversation_id, kind, status, input,"
                    " record, created_at) VALUES ('old', 'cli:x', 'alert', 'concluded', 'x',"
                    " :record, :at)"
                ),
                {"record": json.dumps(CONCLUDED), "at": datetime(2026, 1, 1, tzinfo=UTC)},
            )
        await db.create()
        assert await _found(db, "j.doe@example.com") == {"old"}
        assert await _found(db, "web-prod-01") == {"old"}
    finally:
        await db.close()


def test_words_are_cut_as_the_indexes_cut_them() -> None:
    assert words("203.0.113.7:443") == ["203", "0", "113", "7", "443"]
    assert words("Évil_Host-1") == ["évil", "host", "1"]
    assert words("'\"*()") == []

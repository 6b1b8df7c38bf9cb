"""Text search over investigations, on an index: whole words, never a piece of a longer one.

What is searched: the request text (``input``), the objective, the run's ``digest`` (the
alert's title and entities, the conclusion's summary and key findings, the answer:
``digest_of``, written when the run finishes) and the linked alerts' indicators
(``alerts.indicator_text``). A query is cut into words (runs of letters and
digits) and matches where those words stand next to each other, in order, separated by
anything else: ``203.0.113.7`` finds ``203.0.113.7`` and ``203.0.113.7:443`` but not
``203.0.113.70`` nor ``1203.0.113.7``; ``host-4242`` does not find ``host-42420``.

The indexes (migration ``0011``; ``0015`` added ``digest``): on SQLite, FTS5 tables with
external content (``investigations_fts``, ``alerts_fts``) that triggers keep in step
with every write, searched with one phrase query (``_fts`` says how the plan is chosen);
on PostgreSQL, GIN indexes on a ``tsvector`` of the same columns cut into the same words
(``RUN_WORDS``, ``ALERT_WORDS``), searched with ``phraseto_tsquery``; ANALYZE
(autovacuum) keeps statistics on those words, so the planner knows a rare word (read the
index) from a common one (read newest first and stop at a page full). The query is a
bound parameter and holds words only: nothing in it is syntax.

``branches`` gives two conditions, the run's own text and its alerts': the list reads
a page from each and merges them, since one ``OR`` across two tables hides from the
planner how many rows match.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, Select, exists, false, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from store.schema import AlertRow, Investigation

# what the index adds to the schema beside the models (left out when comparing them)
SEARCH_TABLES = frozenset({"investigations_fts", "alerts_fts"})
SEARCH_INDEXES = frozenset({"ix_investigations_words", "ix_alerts_words"})
COMMON = 1000  # SQLite: more matches than this, and the list reads newest first
MAX_WORDS = 16  # a longer query is cut: a phrase of 16 words is already unique
MAX_CHARS = 100_000  # PostgreSQL: what of a column is indexed (a tsvector stays < 1 MB)


def _words_of(column: str) -> str:
    spaced = f"regexp_replace(left({column}, {MAX_CHARS}), '[^[:alnum:]]+', ' ', 'g')"
    return f"to_tsvector('simple'::regconfig, {spaced})"


# PostgreSQL: the indexed expressions (the migration indexes these very strings)
RUN_WORDS = _words_of(
    "coalesce(input, '') || ' ' || coalesce(objective, '') || ' ' || coalesce(digest, '')"
)
RUN_WORDS_0011 = _words_of("coalesce(input, '') || ' ' || coalesce(objective, '')")  # before 0015
ALERT_WORDS = _words_of("indicator_text")
# SQLite: the columns each FTS5 table indexes (external content, kept by triggers)
FTS_COLUMNS = {"investigations": ("input", "objective", "digest"), "alerts": ("indicator_text",)}
DIGEST_CHARS = 20_000  # of a run's digest; the conclusion's text comes first


def digest_of(record: dict[str, Any]) -> str:
    """The run's searchable text beside its request and objective: the alert's title and
    entities, the conclusion's summary, key findings (and their evidence), the answer."""
    alert: dict[str, Any] = record.get("alert") or {}
    found: dict[str, Any] = record.get("conclusion") or {}
    alert, found = (
        (alert if isinstance(alert, dict) else {}),
        (found if isinstance(found, dict) else {}),
    )
    parts: list[Any] = [found.get("summary")]
    for finding in found.get("key_findings") or []:
        if isinstance(finding, dict):
            parts += [finding.get("finding"), finding.get("evidence")]
    parts += [record.get("answer"), alert.get("title")]
    parts += [e.get("value") for e in alert.get("entities") or [] if isinstance(e, dict)]
    return "\n".join(p for p in parts if isinstance(p, str) and p)[:DIGEST_CHARS]


def fts_triggers(name: str, columns: tuple[str, ...]) -> list[str]:
    """The SQLite triggers that keep ``<name>_fts`` in step with ``name``."""
    fts = f"{name}_fts"
    listed = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    add = f"INSERT INTO {fts}(rowid, {listed}) VALUES (new.rowid, {new});"
    drop = f"INSERT INTO {fts}({fts}, rowid, {listed}) VALUES ('delete', old.rowid, {old});"
    return [
        f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {name} BEGIN {add} END",
        f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {name} BEGIN {drop} END",
        f"CREATE TRIGGER {fts}_update AFTER UPDATE OF {listed} ON {name} BEGIN {drop} {add} END",
    ]


Condition = ColumnElement[bool]
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The query's words, lower-cased, as both indexes cut text."""
    return _WORD.findall(text.lower())[:MAX_WORDS]


def is_search_object(name: str | None) -> bool:
    """Whether a table or index (or an FTS5 table's shadow tables) belongs to the search
    index rather than to the models (``compare_metadata`` leaves those out)."""
    if not name:
        return False
    return name in SEARCH_INDEXES or any(
        name == t or name.startswith(f"{t}_") for t in SEARCH_TABLES
    )


async def branches(session: AsyncSession, text: str, *, sqlite: bool) -> list[Condition]:
    """Conditions on ``investigations``, any of which is a match: the run's text holds
    ``text`` as whole words; one of its alerts' indicators does. ``[false()]`` when
    ``text`` has no word."""
    found = words(text)
    if not found:
        return [false()]
    return await _fts(session, found) if sqlite else _tsvector(found)


async def _fts(session: AsyncSession, found: list[str]) -> list[Condition]:
    """SQLite has no statistics on words: how many rows match is counted (up to
    ``COMMON``). Few: the matches are read first, then sorted. Many: the list reads
    newest first and checks each row against the matches (``+`` keeps SQLite from
    starting at them), so it stops once a page is full."""
    phrase = '"' + " ".join(found) + '"'  # words only: no quote or operator inside

    def hits(name: str) -> Select[Any]:
        rowid: ColumnElement[int] = literal_column("rowid")
        matching = literal_column(f"{name}_fts").op("MATCH")(phrase)
        return select(rowid).select_from(table(f"{name}_fts")).where(matching)

    async def common(name: str) -> bool:
        counted = select(func.count()).select_from(hits(name).limit(COMMON + 1).subquery())
        return int(await session.scalar(counted) or 0) > COMMON

    plus = "+" if await common("investigations") else ""
    in_run = literal_column(f"{plus}investigations.rowid").in_(hits("investigations"))
    if await common("alerts"):
        alert: Condition = exists().where(
            AlertRow.investigation_id == Investigation.id,
            literal_column("+alerts.rowid").in_(hits("alerts")),
        )
    else:
        alert_rows = literal_column("alerts.rowid").in_(hits("alerts"))
        alert = Investigation.id.in_(select(AlertRow.investigation_id).where(alert_rows))
    return [in_run, alert]


def _tsvector(found: list[str]) -> list[Condition]:
    query = func.phraseto_tsquery(literal_column("'simple'::regconfig"), " ".join(found))
    in_run = literal_column(RUN_WORDS).op("@@")(query)
    # unqualified: only ``alerts`` has the column
    in_alert: ColumnElement[Any] = literal_column(ALERT_WORDS)
    alert = exists().where(AlertRow.investigation_id == Investigation.id, in_alert.op("@@")(query))
    return [in_run, alert]

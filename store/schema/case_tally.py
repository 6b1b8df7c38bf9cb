"""The cases' daily tally (``case_tally``, migration ``0019``): what the period report sums
instead of scanning the cases (``store.cases.tally``).

One row per day (UTC, the case's opening) by **facet** by value by the case's state as the
figures read it (socbot's verdict, status, disposition, auto-resolution, audit and its
disposition), with the number of cases and their summed tokens, seconds and cost. Each
case is counted once in every facet:

- ``all`` (value ``''``): the whole case — agreement, confusion matrix, status and
  disposition counts, cost, the weeks;
- ``source``, ``format``, ``model``, ``rule``, ``severity``: value the case's attribute
  (``''`` when it has none) — the breakdowns and the audit of auto-resolution per rule;
- ``playbook``: value ``"<bullets><holdout>"`` (``"10"``: used a bullet, not held out);
- ``acknowledge``, ``resolve``: value the histogram bucket of the seconds from opening to
  the first owner, to a person's resolution (``bucket``), state left ``''``: the
  percentiles.

Triggers keep it in step (SQLite triggers, PostgreSQL trigger functions): every insert,
delete and every update that changes a column the figures read (``QUALITY_COLUMNS``)
subtracts the old row's contributions and adds the new one's in the same statement, so a
decision's conditional UPDATE carries its tally with it — a lost race changes no row and
no tally, whichever code path wrote the case. Contributions that cancel are left out and
the rest are written in key order (no deadlock between two decisions' upserts).
"""

from __future__ import annotations

import math
from datetime import date

from sqlalchemy import BigInteger, Date, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base
from store.schema.cases import QUALITY_COLUMNS

PER_OCTAVE = 16  # histogram buckets per doubling: a bucket's middle is within 2.2 %
PRECISION = 2 ** (1 / (2 * PER_OCTAVE)) - 1  # the relative error of a bucket's middle
DIMENSION_COLUMNS = {
    "source": "source",
    "format": "format",
    "model": "model",
    "rule": "policy_rule",
    "severity": "severity",
}
SPANS = ("acknowledge", "resolve")
FACETS = ("all", *DIMENSION_COLUMNS, "playbook", *SPANS)
STATE = ("verdict", "status", "disposition", "auto_resolved", "audit", "audit_disposition")
KEY = ("day", "facet", "value", *STATE)
SUMS = ("cases", "tokens", "seconds", "cost_usd")
TRIGGERS = ("case_tally_insert", "case_tally_delete", "case_tally_update")


class CaseTally(Base):
    """One day by facet by value by state of the cases, with their count and sums."""

    __tablename__ = "case_tally"
    __table_args__ = ({"sqlite_with_rowid": False},)  # SQLite: rows kept in key order
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    facet: Mapped[str] = mapped_column(String(16), primary_key=True)
    value: Mapped[str] = mapped_column(String(100), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), primary_key=True)
    disposition: Mapped[str] = mapped_column(String(32), primary_key=True)
    auto_resolved: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    audit: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    audit_disposition: Mapped[str] = mapped_column(String(32), primary_key=True)
    cases: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)


def bucket(seconds: float) -> int:
    """The histogram bucket of a span: 0 below one second, else ``1 + ⌊16·log2 s⌋``."""
    return 0 if seconds < 1 else 1 + math.floor(PER_OCTAVE * math.log(seconds) / math.log(2))


def middle(number: int) -> float:
    """What the report gives for a bucket: its geometric middle (0.5 s for bucket 0)."""
    return 0.5 if number <= 0 else 2 ** ((number - 0.5) / PER_OCTAVE)


def _parts(r: str, sign: int, pg: bool, table: str = "") -> list[str]:
    """One SELECT per facet of row ``r`` (``NEW``, ``OLD`` or a table alias)."""
    src = f" FROM {table} AS {r}" if table else ""
    day = f"(({r}.created_at AT TIME ZONE 'UTC')::date)" if pg else f"substr({r}.created_at, 1, 10)"

    def flag(column: str) -> str:
        return f"(CASE WHEN {r}.{column} THEN 1 ELSE 0 END)"

    def text(column: str) -> str:
        return f"coalesce({r}.{column}, '')"

    def span(end: str) -> str:
        if pg:
            s = f"extract(epoch from ({r}.{end} - {r}.created_at))::float8"
            log = f"floor({PER_OCTAVE} * ln({s}) / ln(2.0::float8))::int"
        else:
            s = f"((julianday({r}.{end}) - julianday({r}.created_at)) * 86400.0)"
            log = f"CAST({PER_OCTAVE} * ln({s}) / ln(2.0) AS INTEGER)"
        return f"CAST(CASE WHEN {s} < 1 THEN 0 ELSE 1 + {log} END AS {'text' if pg else 'TEXT'})"

    state = (
        f"{text('socbot_verdict')} AS verdict, {text('status')} AS status, "
        f"{text('disposition')} AS disposition, {flag('auto_resolved')} AS auto_resolved, "
        f"{flag('audit')} AS audit, {text('audit_disposition')} AS audit_disposition"
    )
    sums = (
        f"{sign} AS cases, {sign} * {r}.tokens AS tokens, {sign} * {r}.seconds AS seconds, "
        f"{sign} * {r}.cost_usd AS cost_usd"
    )
    values = {"all": "''", "playbook": f"{flag('used_bullets')} || {flag('holdout')}"}
    values |= {facet: text(column) for facet, column in DIMENSION_COLUMNS.items()}
    if pg:
        values["playbook"] = f"{flag('used_bullets')}::text || {flag('holdout')}::text"
    parts = [
        f"SELECT {day} AS day, '{facet}' AS facet, {value} AS value, {state}, {sums}{src}"
        for facet, value in values.items()
    ]
    ended = {
        "acknowledge": ("acknowledged_at", f"{r}.acknowledged_at IS NOT NULL"),
        "resolve": (
            "resolved_at",
            f"{r}.status = 'resolved' AND NOT {r}.auto_resolved AND {r}.resolved_at IS NOT NULL",
        ),
    }
    for facet, (end, reached) in ended.items():
        parts.append(
            f"SELECT {day}, '{facet}', {span(end)}, '', '', '', 0, 0, '', {sign}, 0, 0.0, 0.0"
            f"{src} WHERE {reached}"
        )
    return parts


def upsert(parts: list[str], *, merge: bool = True) -> str:
    """The statement that adds the rows of ``parts`` to the tally, summed per key."""
    keys = ", ".join(KEY)
    union = " UNION ALL ".join(parts)
    changed = " OR ".join(f"sum({s}) <> 0" for s in SUMS)
    sums = ", ".join(f"sum({s})" for s in SUMS)
    statement = (
        f"INSERT INTO case_tally ({keys}, {', '.join(SUMS)}) SELECT {keys}, {sums} "
        f"FROM ({union}) AS d WHERE 1 = 1 GROUP BY {keys} HAVING {changed} ORDER BY {keys}"
    )
    if not merge:
        return statement
    added = ", ".join(f"{s} = case_tally.{s} + excluded.{s}" for s in SUMS)
    return f"{statement} ON CONFLICT ({keys}) DO UPDATE SET {added}"


def backfill(pg: bool) -> str:
    """Tally every existing case (the migration, into an empty table)."""
    return upsert(_parts("c", 1, pg, table="cases"), merge=False)


def _changed(pg: bool) -> str:
    if pg:
        old = ", ".join(f"OLD.{c}" for c in QUALITY_COLUMNS)
        new = ", ".join(f"NEW.{c}" for c in QUALITY_COLUMNS)
        return f"(ROW({old}) IS DISTINCT FROM ROW({new}))"
    return " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in QUALITY_COLUMNS)


def triggers(pg: bool) -> list[str]:
    """The DDL that keeps the tally in step with ``cases``."""
    bodies = {
        "case_tally_insert": ("INSERT", _parts("NEW", 1, pg)),
        "case_tally_delete": ("DELETE", _parts("OLD", -1, pg)),
        "case_tally_update": ("UPDATE", _parts("OLD", -1, pg) + _parts("NEW", 1, pg)),
    }
    ddl = []
    for name, (event, parts) in bodies.items():
        when = f" WHEN {_changed(pg)}" if event == "UPDATE" else ""
        if not pg:
            ddl.append(
                f"CREATE TRIGGER {name} AFTER {event} ON cases FOR EACH ROW{when} "
                f"BEGIN {upsert(parts)}; END"
            )
            continue
        returned = "OLD" if event == "DELETE" else "NEW"
        ddl.append(
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN {upsert(parts)}; RETURN {returned}; END $$"
        )
        ddl.append(
            f"CREATE TRIGGER {name} AFTER {event} ON cases FOR EACH ROW{when} "
            f"EXECUTE FUNCTION {name}()"
        )
    return ddl


def drop_triggers(pg: bool) -> list[str]:
    """The DDL that removes what ``triggers`` made."""
    ddl = [f"DROP TRIGGER IF EXISTS {name}{' ON cases' if pg else ''}" for name in TRIGGERS]
    return ddl + ([f"DROP FUNCTION IF EXISTS {name}()" for name in TRIGGERS] if pg else [])

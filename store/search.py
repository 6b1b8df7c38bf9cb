"""Text search over investigations, on an index: whole words, never a piece of a longer one.

What is searched: the request text (``input``), the objective and the linked alerts'
indicators (``alerts.indicator_text``). A query is cut into words (letters, digits,
``_``) and matches where those words stand next to each other, in order, separated by
anything else: ``203.0.113.7`` finds ``203.0.113.7`` and ``203.0.113.7:443`` but not
``203.0.113.70`` nor ``1203.0.113.7``; ``host-4242`` does not find ``host-42420``.

The indexes (migration ``0011``): on SQLite, FTS5 tables with external content
(``investigations_fts``, ``alerts_fts``) that triggers keep in step with every write,
searched with one phrase query; on PostgreSQL, ``pg_trgm`` GIN indexes on the same
columns, searched with a case-insensitive regular expression bounded by word edges
(``\\m…\\M``), which the trigram index answers. The query is always a bound
parameter: its words are letters and digits only, so nothing in it is syntax.
"""

from __future__ import annotations

import re

from sqlalchemy import ColumnElement, false, literal_column, or_, select, table

from store.models import AlertRow, Investigation

# what the index adds to the schema beside the models (left out when comparing them)
SEARCH_TABLES = frozenset({"investigations_fts", "alerts_fts"})
SEARCH_INDEXES = frozenset({"ix_investigations_text_trgm", "ix_alerts_indicators_trgm"})
MAX_WORDS = 16  # a longer query is cut: a phrase of 16 words is already unique

_WORD = re.compile(r"\w+")
_SEPARATOR = "[^[:alnum:]_]+"  # PostgreSQL: what may stand between two words


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


def matches(text: str, *, sqlite: bool) -> ColumnElement[bool]:
    """A condition on ``investigations``: the run's text or its alerts' indicators hold
    ``text`` as whole words (false when ``text`` has no word)."""
    found = words(text)
    if not found:
        return false()
    return _fts(found) if sqlite else _regex(found)


def _fts(found: list[str]) -> ColumnElement[bool]:
    phrase = '"' + " ".join(found) + '"'  # words only: no quote or operator inside
    runs = table("investigations_fts")
    alerts = table("alerts_fts")
    in_runs = select(literal_column("rowid")).select_from(runs)
    in_alerts = select(literal_column("rowid")).select_from(alerts)
    alert_runs = select(AlertRow.investigation_id).where(
        literal_column("alerts.rowid").in_(
            in_alerts.where(literal_column("alerts_fts").op("MATCH")(phrase))
        )
    )
    return or_(
        literal_column("investigations.rowid").in_(
            in_runs.where(literal_column("investigations_fts").op("MATCH")(phrase))
        ),
        Investigation.id.in_(alert_runs),
    )


def _regex(found: list[str]) -> ColumnElement[bool]:
    pattern = r"\m" + _SEPARATOR.join(found) + r"\M"
    alert_runs = select(AlertRow.investigation_id).where(
        AlertRow.indicator_text.op("~*")(pattern)
    )
    return or_(
        Investigation.input.op("~*")(pattern),
        Investigation.objective.op("~*")(pattern),
        Investigation.id.in_(alert_runs),
    )

"""Alerts socbot investigated: stored with their indicators, searched, given a verdict.

Times are stored in UTC (SQLite keeps them naive; they are read back as UTC).
``indicator_text`` is `` kind:value kind:value `` (values lower-cased) so that an
indicator search is one portable ``LIKE`` on any database.

Triage (``status``, ``group_id``, ``storm_id``): ``store.triage.states``, ``.storms``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, Text, cast, func, insert, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from alerts.parse import Alert, Indicator, parse_alert
from core.scope import Scope
from store.db.engine import Database
from store.schema import AlertRow, AlertStatus, Investigation, utcnow

_WHEN = func.coalesce(AlertRow.event_time, AlertRow.created_at)  # an alert's time, for search


@dataclass(frozen=True)
class StoredAlert:
    """One row of ``alerts`` as plain data (times aware UTC)."""

    id: str
    source: str
    title: str
    severity: str | None
    event_time: datetime | None
    created_at: datetime
    indicators: list[Indicator]
    raw: dict[str, Any]
    investigation_id: str | None = None
    verdict: str | None = None
    summary: str | None = None
    slack_channel: str | None = None
    slack_ts: str | None = None
    investigation: dict[str, Any] = field(default_factory=dict)
    status: str | None = None
    group_id: str | None = None
    storm_id: int | None = None

    def to_alert(self) -> Alert:
        """The alert as the engine takes it (entities read again from the raw payload)."""
        read = parse_alert(self.raw, self.source)
        return Alert(
            id=self.id,
            source=self.source,
            title=self.title,
            severity=self.severity,
            event_time=self.event_time,
            indicators=self.indicators,
            raw=self.raw,
            entities=read.entities,
            format=read.format,
            description=read.description,
        )


class AlertStore:
    """Queries on ``alerts``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(
        self,
        alert: Alert,
        *,
        investigation_id: str | None = None,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
        status: str | None = None,
    ) -> None:
        """Insert (or replace) the alert with its indicators (``status``: where it is in
        triage, ``received`` for one that triage must place: ``store.triage.states``)."""
        row = AlertRow(
            **_columns(alert, status),
            investigation_id=investigation_id,
            slack_channel=slack_channel,
            slack_ts=slack_ts,
        )
        async with self.db.session() as session:
            await session.merge(row)

    async def insert_received(self, alerts: Sequence[Alert]) -> None:
        """Insert new alerts as ``received`` in one short transaction of one statement
        (``Database.write``: the front's group commit, ``bot.transport.alert_writer``). An id
        already stored fails the whole transaction: nothing is replaced."""
        now = utcnow()
        rows = [_columns(alert, AlertStatus.RECEIVED) | {"created_at": now} for alert in alerts]
        await self.db.write(lambda session: session.execute(insert(AlertRow), rows))

    async def get(self, alert_id: str) -> StoredAlert | None:
        """The alert, with its investigation's status/objective/verdict when linked."""
        return await self._one(select(AlertRow).where(AlertRow.id == alert_id))

    async def visible(self, alert_id: str, scope: Scope) -> StoredAlert | None:
        """``get`` of an alert ``scope`` may see; one it may not is None, as an unknown id."""
        if scope.empty:
            return None
        return await self._one(select(AlertRow).where(AlertRow.id == alert_id, *_within(scope)))

    async def _one(self, query: Select[AlertRow]) -> StoredAlert | None:
        async with self.db.reading() as session:
            row = (await session.scalars(query.limit(1))).first()
            if row is None:
                return None
            inv = None
            if row.investigation_id:
                inv = await session.get(Investigation, row.investigation_id)
        return stored_alert(row, inv)

    async def search(
        self,
        *,
        scope: Scope,
        indicator: str | None = None,
        text: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        exclude_investigation: str | None = None,
        exclude_slack_thread: tuple[str, str] | None = None,
        limit: int = 20,
    ) -> list[StoredAlert]:
        """Newest first; every given filter must match, and only alerts ``scope`` may see
        are read (in the query, before its limit; an empty scope reads nothing).

        ``indicator`` matches an extracted indicator value exactly (case-insensitive);
        ``text`` matches a substring of the title, summary or raw JSON; the time window
        applies to the event time, or the time stored when the alert had none. The
        ``exclude_*`` filters leave out the alert being investigated right now.
        """
        if scope.empty:
            return []
        conditions = _within(scope) + _filters(
            indicator, text, since, until, exclude_investigation, exclude_slack_thread
        )
        query = select(AlertRow).where(*conditions).order_by(_WHEN.desc()).limit(limit)
        async with self.db.session() as session:
            rows = list(await session.scalars(query))
        return [stored_alert(row) for row in rows]

    async def set_investigation(self, alert_id: str, investigation_id: str) -> None:
        """Link the alert to the investigation that handles it."""
        await self._update(alert_id, investigation_id=investigation_id)

    async def set_verdict(
        self,
        alert_id: str,
        *,
        verdict: str,
        summary: str | None,
        investigation_id: str | None = None,
    ) -> None:
        """Record the conclusion of the alert's investigation."""
        values: dict[str, Any] = {"verdict": verdict, "summary": summary}
        if investigation_id is not None:
            values["investigation_id"] = investigation_id
        await self._update(alert_id, **values)

    async def set_slack_message(self, alert_id: str, channel: str, ts: str) -> None:
        """Where the alert lives in Slack (its thread root)."""
        await self._update(alert_id, slack_channel=channel, slack_ts=ts)

    async def find_by_slack_message(self, channel: str, ts: str) -> StoredAlert | None:
        """The alert whose thread root is ``channel``/``ts``, if any."""
        query = select(AlertRow).where(AlertRow.slack_channel == channel, AlertRow.slack_ts == ts)
        async with self.db.session() as session:
            row = (await session.scalars(query.limit(1))).first()
        return None if row is None else stored_alert(row)

    async def _update(self, alert_id: str, **values: Any) -> None:
        async with self.db.session() as session:
            await session.execute(update(AlertRow).where(AlertRow.id == alert_id).values(**values))


def _filters(
    indicator: str | None,
    text: str | None,
    since: datetime | None,
    until: datetime | None,
    exclude_investigation: str | None,
    exclude_slack_thread: tuple[str, str] | None,
) -> list[ColumnElement[bool]]:
    """The conditions of ``AlertStore.search``'s filters (its docstring says what they are)."""
    conditions: list[ColumnElement[bool]] = []
    if indicator:
        pattern = "%:" + _escape_like(indicator.strip().lower()) + " %"
        conditions.append(AlertRow.indicator_text.like(pattern, escape="\\"))
    if text:
        pattern = "%" + _escape_like(text.strip().lower()) + "%"
        conditions.append(
            or_(
                func.lower(AlertRow.title).like(pattern, escape="\\"),
                func.lower(func.coalesce(AlertRow.summary, "")).like(pattern, escape="\\"),
                func.lower(cast(AlertRow.raw, Text)).like(pattern, escape="\\"),
            )
        )
    if since is not None:
        conditions.append(_WHEN >= _utc(since))
    if until is not None:
        conditions.append(_WHEN <= _utc(until))
    if exclude_investigation:
        conditions.append(
            or_(
                AlertRow.investigation_id.is_(None),
                AlertRow.investigation_id != exclude_investigation,
            )
        )
    if exclude_slack_thread is not None:
        channel, ts = exclude_slack_thread
        conditions.append(
            or_(
                AlertRow.slack_channel.is_(None),
                AlertRow.slack_ts.is_(None),
                AlertRow.slack_channel != channel,
                AlertRow.slack_ts != ts,
            )
        )
    return conditions


def _within(scope: Scope) -> list[ColumnElement[bool]]:
    """The condition of ``scope`` (a non-empty one): posted in one of its channels."""
    if scope.everything:
        return []
    return [AlertRow.slack_channel.in_(sorted(scope.channels))]


def indicator_text(indicators: list[Indicator]) -> str:
    """`` kind:value kind:value `` for ``LIKE`` search."""
    return " " + " ".join(f"{i.kind}:{i.value.lower()}" for i in indicators) + " "


def stored_alert(row: AlertRow, inv: Investigation | None = None) -> StoredAlert:
    """A row as plain data (with its investigation's outline when given)."""
    investigation: dict[str, Any] = {}
    if inv is not None:
        investigation = {
            "id": inv.id,
            "status": inv.status,
            "objective": inv.objective,
            "verdict": inv.verdict,
        }
        if isinstance(inv.record, dict) and isinstance(inv.record.get("conclusion"), dict):
            investigation["conclusion"] = inv.record["conclusion"]
    return StoredAlert(
        id=row.id,
        source=row.source,
        title=row.title,
        severity=row.severity,
        event_time=_utc(row.event_time),
        created_at=_utc(row.created_at) or datetime.now(UTC),
        indicators=[Indicator.model_validate(i) for i in row.indicators or []],
        raw=row.raw,
        investigation_id=row.investigation_id,
        verdict=row.verdict,
        summary=row.summary,
        slack_channel=row.slack_channel,
        slack_ts=row.slack_ts,
        investigation=investigation,
        status=row.status,
        group_id=row.group_id,
        storm_id=row.storm_id,
    )


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _columns(alert: Alert, status: str | None) -> dict[str, Any]:
    """The alert's own columns, and where it is in triage (``status``)."""
    return {
        "id": alert.id,
        "source": alert.source,
        "title": alert.title,
        "severity": alert.severity,
        "raw": alert.raw,
        "indicators": [i.model_dump() for i in alert.indicators],
        "indicator_text": indicator_text(alert.indicators),
        "event_time": _utc(alert.event_time),
        "status": status,
        "status_at": utcnow() if status is not None else None,
    }

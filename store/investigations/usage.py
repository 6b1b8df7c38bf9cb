"""Model usage and cost over time, from the investigations' stored ``usage``.

Every finished investigation stores its usage (``core.usage``: calls, prompt, cached,
output and thinking tokens and the list-price ``cost_usd``, in total and per stage).
``UsageStore.rows`` reads those since a time; ``summarise`` adds them up per day, alert
source (``question`` for mentions and chat), channel (the Slack channel of the thread,
``cli`` for the terminal), stage (``step s2`` counted as ``step``) or model
(``provider:model`` as served; Gemini's bare).

An alert's source is the one its run recorded (``record.alert.source``, written by the
engine however the run ended), else that of the stored alert linked to it; a run that
failed or was cancelled before its alert was stored still has the first. An alert run
with neither (a record that names no alert) is ``unknown``: never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select

from core.usage import StageUsage
from store.db.engine import Database
from store.schema import AlertRow, Investigation

Dimension = Literal["day", "source", "channel", "stage", "model"]
DIMENSIONS: tuple[Dimension, ...] = ("day", "source", "channel", "stage", "model")
UNKNOWN = "unknown"  # an alert run whose source nothing stored says


@dataclass(frozen=True)
class UsageRow:
    """One investigation's usage and where it came from."""

    investigation_id: str
    created_at: datetime
    conversation_id: str
    source: str
    usage: dict[str, Any]

    @property
    def channel(self) -> str:
        """``C0123`` for ``slack:C0123:<ts>``; the prefix (``cli``) otherwise."""
        kind, _, rest = self.conversation_id.partition(":")
        if kind == "slack":
            return rest.split(":", 1)[0] or "slack"
        return kind or "other"


@dataclass
class Totals:
    """Summed usage of a group, and how many investigations it covers."""

    usage: StageUsage = field(default_factory=StageUsage)
    ids: set[str] = field(default_factory=set, repr=False)

    @property
    def investigations(self) -> int:
        return len(self.ids)

    def add(self, investigation_id: str, counts: Mapping[str, Any]) -> None:
        self.ids.add(investigation_id)
        self.usage.merge(StageUsage.from_dict(counts))

    def as_dict(self) -> dict[str, Any]:
        return {"investigations": self.investigations, **self.usage.as_dict()}


class UsageStore:
    """Reads the usage of finished investigations."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def rows(self, since: datetime) -> list[UsageRow]:
        """Investigations created since ``since`` that stored a usage, oldest first."""
        async with self.db.session() as session:
            found = (
                await session.execute(
                    select(
                        Investigation.id,
                        Investigation.created_at,
                        Investigation.conversation_id,
                        Investigation.kind,
                        Investigation.usage,
                        Investigation.record[("alert", "source")].as_string().label("source"),
                    )
                    .where(Investigation.created_at >= since, Investigation.usage.is_not(None))
                    .order_by(Investigation.created_at)
                )
            ).all()
            sources = {r.id: r.source for r in found if r.kind == "alert" and r.source}
            ids = [r.id for r in found if r.kind == "alert" and r.id not in sources]
            for start in range(0, len(ids), 500):
                alerts = await session.execute(
                    select(AlertRow.investigation_id, AlertRow.source)
                    .where(AlertRow.investigation_id.in_(ids[start : start + 500]))
                    .order_by(AlertRow.created_at)
                )
                for investigation_id, source in alerts.all():
                    sources.setdefault(str(investigation_id), source)  # the group's first
        return [
            UsageRow(
                investigation_id=r.id,
                created_at=r.created_at,
                conversation_id=r.conversation_id,
                source=sources.get(r.id, UNKNOWN) if r.kind == "alert" else "question",
                usage=dict(r.usage or {}),
            )
            for r in found
        ]


def summarise(rows: Iterable[UsageRow], by: Dimension) -> dict[str, Totals]:
    """Totals per value of ``by``, sorted by key."""
    groups: dict[str, Totals] = {}
    for row in rows:
        if by == "stage":
            for stage, counts in (row.usage.get("stages") or {}).items():
                key = str(stage).split(" ", 1)[0]
                groups.setdefault(key, Totals()).add(row.investigation_id, counts)
            continue
        if by == "model":  # runs stored before models were split count as "unknown"
            for model, counts in (row.usage.get("by_model") or {UNKNOWN: row.usage}).items():
                groups.setdefault(str(model), Totals()).add(row.investigation_id, counts)
            continue
        key = {
            "day": row.created_at.strftime("%Y-%m-%d"),
            "source": row.source,
            "channel": row.channel,
        }[by]
        groups.setdefault(key, Totals()).add(row.investigation_id, row.usage)
    return dict(sorted(groups.items()))

"""The cases list's rows as an analyst reads them: the case number, the alert's title and
key entity (as the investigation list names them), severity, status, owner, when it
opened, and the disposition of a resolved one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.web.view.listing import entities_of, first_line, key_entity, main_entities


@dataclass(frozen=True)
class CaseListRow:
    id: int
    investigation_id: str
    title: str
    entity: str | None  # "host web-01", when the title does not already name it
    severity: str | None
    status: str
    owner: str | None
    disposition: str | None
    escalated: bool
    channel: str | None
    created_at: datetime
    resolved_at: datetime | None


def case_row(row: Any) -> CaseListRow:
    """One ``store.cases.browse.ListedCase`` as the list shows it."""
    title = first_line(row.title) or f"case {row.id}"
    key = key_entity(main_entities(entities_of(row.entities)))
    return CaseListRow(
        id=row.id,
        investigation_id=row.investigation_id,
        title=title,
        entity=key if key and key.split(" ", 1)[1] not in title else None,
        severity=row.severity,
        status=row.status,
        owner=row.owner,
        disposition=row.disposition,
        escalated=bool(row.escalated),
        channel=row.channel,
        created_at=row.created_at,
        resolved_at=row.resolved_at,
    )

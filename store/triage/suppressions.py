"""Suppressions asked for in Slack ("Suppress similar…"), as rows with their history.

``propose`` stores one as ``proposed`` (who, when, why, the rule as data); an approver
``decide``s it (``approved`` / ``rejected``, who and when); an approved one is a rule of
the policy until it expires or someone ``lift``s it (who and when). Nothing is
deleted: the rows are the audit trail ``socbot policy list`` shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from store.db.engine import Database
from store.schema import PolicySuppression, SuppressionStatus, utcnow

RULE_PREFIX = "slack-"  # the policy rule id of suppression 12 is ``slack-12``


@dataclass(frozen=True)
class Suppression:
    """A suppression row as read."""

    id: int
    status: str
    rule: dict[str, Any]
    reason: str
    alert_id: str | None
    expires_at: datetime
    proposed_by: str
    proposed_at: datetime
    decided_by: str | None
    decided_at: datetime | None
    lifted_by: str | None
    lifted_at: datetime | None
    review_ts: str | None

    @property
    def rule_id(self) -> str:
        return f"{RULE_PREFIX}{self.id}"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule_id": self.rule_id, **self.__dict__}
        for key, value in out.items():
            if isinstance(value, datetime):
                out[key] = value.isoformat()
        return out


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _read(row: PolicySuppression) -> Suppression:
    expires, proposed = _utc(row.expires_at), _utc(row.proposed_at)
    assert expires is not None and proposed is not None
    return Suppression(
        id=row.id,
        status=row.status,
        rule=dict(row.rule),
        reason=row.reason,
        alert_id=row.alert_id,
        expires_at=expires,
        proposed_by=row.proposed_by,
        proposed_at=proposed,
        decided_by=row.decided_by,
        decided_at=_utc(row.decided_at),
        lifted_by=row.lifted_by,
        lifted_at=_utc(row.lifted_at),
        review_ts=row.review_ts,
    )


class SuppressionStore:
    """The suppressions table (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def propose(
        self,
        rule: dict[str, Any],
        *,
        reason: str,
        expires_at: datetime,
        proposed_by: str,
        alert_id: str | None = None,
    ) -> Suppression:
        async with self.db.session() as session:
            row = PolicySuppression(
                status=SuppressionStatus.PROPOSED,
                rule=rule,
                reason=reason,
                alert_id=alert_id,
                expires_at=expires_at,
                proposed_by=proposed_by,
                proposed_at=utcnow(),
            )
            session.add(row)
            await session.flush()
            return _read(row)

    async def get(self, suppression_id: int) -> Suppression | None:
        async with self.db.session() as session:
            row = await session.get(PolicySuppression, suppression_id)
            return _read(row) if row is not None else None

    async def set_review_ts(self, suppression_id: int, ts: str) -> None:
        await self._update(suppression_id, None, review_ts=ts)

    async def decide(self, suppression_id: int, *, approve: bool, by: str) -> bool:
        """Approve or reject a proposed suppression; False if it was not proposed."""
        status = SuppressionStatus.APPROVED if approve else SuppressionStatus.REJECTED
        values = {"status": status, "decided_by": by, "decided_at": utcnow()}
        return await self._update(suppression_id, SuppressionStatus.PROPOSED, **values)

    async def lift(self, suppression_id: int, *, by: str) -> bool:
        """End an approved suppression now; False if it was not approved."""
        values = {"status": SuppressionStatus.LIFTED, "lifted_by": by, "lifted_at": utcnow()}
        return await self._update(suppression_id, SuppressionStatus.APPROVED, **values)

    async def active(self, now: datetime | None = None) -> list[Suppression]:
        """Approved suppressions that have not expired, newest first."""
        query = (
            select(PolicySuppression)
            .where(
                PolicySuppression.status == SuppressionStatus.APPROVED,
                PolicySuppression.expires_at > (now or utcnow()),
            )
            .order_by(PolicySuppression.id.desc())
        )
        async with self.db.session() as session:
            return [_read(r) for r in (await session.scalars(query)).all()]

    async def all(self) -> list[Suppression]:
        """Every suppression ever asked for, newest first."""
        query = select(PolicySuppression).order_by(PolicySuppression.id.desc())
        async with self.db.session() as session:
            return [_read(r) for r in (await session.scalars(query)).all()]

    async def of_alerts(self, alert_ids: list[str]) -> list[Suppression]:
        """The suppressions asked for from these alerts (an investigation's), newest first."""
        if not alert_ids:
            return []
        query = (
            select(PolicySuppression)
            .where(PolicySuppression.alert_id.in_(alert_ids))
            .order_by(PolicySuppression.id.desc())
            .limit(20)
        )
        async with self.db.reading() as session:
            return [_read(r) for r in (await session.scalars(query)).all()]

    async def _update(self, suppression_id: int, was: str | None, **values: Any) -> bool:
        query = update(PolicySuppression).where(PolicySuppression.id == suppression_id)
        if was is not None:
            query = query.where(PolicySuppression.status == was)
        async with self.db.session() as session:
            changed = (await session.execute(query.values(**values))).rowcount  # type: ignore[attr-defined]
        return bool(changed)

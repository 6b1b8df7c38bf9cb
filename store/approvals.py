"""Requests for a person's approval, and their decisions: they outlive the process.

``open`` finds the request for a call (``ApprovalRequest.key``) that is still pending
or was decided within its time, or records a new one; so a run started again after a
restart waits on the same request, or goes on with the decision made meanwhile.
``decide`` records the first decision only (an ``UPDATE`` on a pending row that has
not expired: two clicks, on two replicas, cannot both decide); ``expire`` ends a
request nobody decided in time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import CursorResult, select, update

from core.approvals import ApprovalRequest
from store.db.engine import Database
from store.schema import ApprovalRow, ApprovalStatus, utcnow


@dataclass(frozen=True)
class Approval:
    """A stored request and where it stands."""

    id: int
    key: str
    tool: str
    why: str
    estimate: str | None
    requested_by: str | None
    status: ApprovalStatus
    channel: str | None
    message_ts: str | None
    expires_at: datetime
    decided_by: str | None
    decided_at: datetime | None


class ApprovalStore:
    """Queries on the ``approvals`` table (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def open(self, request: ApprovalRequest, within_s: float) -> tuple[Approval, bool]:
        """The live request for this call, or a new one expiring in ``within_s``; True
        when it is new (nobody has been asked yet)."""
        now = self._now()
        async with self.db.session() as session:
            row = await session.scalar(
                select(ApprovalRow)
                .where(ApprovalRow.key == request.key, ApprovalRow.expires_at > now)
                .where(ApprovalRow.status != ApprovalStatus.EXPIRED)
                .order_by(ApprovalRow.id.desc())
                .limit(1)
            )
            if row is not None:
                return _view(row), False
            row = ApprovalRow(
                key=request.key,
                investigation_id=request.investigation_id,
                conversation_id=request.conversation_id,
                tool=request.tool,
                args=request.args,
                why=request.why,
                estimate=request.estimate,
                requested_by=request.requested_by,
                status=ApprovalStatus.PENDING,
                created_at=now,
                expires_at=now + timedelta(seconds=within_s),
            )
            session.add(row)
            await session.flush()
            view = _view(row)
        return view, True

    async def get(self, approval_id: int) -> Approval | None:
        async with self.db.session() as session:
            row = await session.get(ApprovalRow, approval_id)
            return _view(row) if row is not None else None

    async def set_message(self, approval_id: int, channel: str, ts: str) -> None:
        async with self.db.session() as session:
            await session.execute(
                update(ApprovalRow)
                .where(ApprovalRow.id == approval_id)
                .values(channel=channel, message_ts=ts)
            )

    async def decide(self, approval_id: int, user: str, approved: bool) -> Approval | None:
        """Record ``user``'s decision if the request is still open; the decided request,
        or None when it was decided already or has expired."""
        return await self._end(
            approval_id,
            ApprovalStatus.APPROVED if approved else ApprovalStatus.DENIED,
            user,
            only_live=True,
        )

    async def expire(self, approval_id: int) -> Approval | None:
        """End a request nobody decided; None when it was decided meanwhile."""
        return await self._end(approval_id, ApprovalStatus.EXPIRED, None, only_live=False)

    async def _end(
        self, approval_id: int, status: ApprovalStatus, user: str | None, *, only_live: bool
    ) -> Approval | None:
        now = self._now()
        statement = update(ApprovalRow).where(
            ApprovalRow.id == approval_id, ApprovalRow.status == ApprovalStatus.PENDING
        )
        if only_live:
            statement = statement.where(ApprovalRow.expires_at > now)
        async with self.db.session() as session:
            result = await session.execute(
                statement.values(status=status, decided_by=user, decided_at=now)
            )
            changed = isinstance(result, CursorResult) and result.rowcount == 1
        return await self.get(approval_id) if changed else None

    def _now(self) -> datetime:
        now = utcnow()
        return now.replace(tzinfo=None) if self.db.is_sqlite else now  # SQLite: naive UTC


def _view(row: ApprovalRow) -> Approval:
    return Approval(
        id=row.id,
        key=row.key,
        tool=row.tool,
        why=row.why,
        estimate=row.estimate,
        requested_by=row.requested_by,
        status=ApprovalStatus(row.status),
        channel=row.channel,
        message_ts=row.message_ts,
        expires_at=_aware(row.expires_at),
        decided_by=row.decided_by,
        decided_at=_aware(row.decided_at) if row.decided_at else None,
    )


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)

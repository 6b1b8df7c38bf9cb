"""What the alert policy did, in the database: decisions counted, budgets spent.

``record`` keeps one row per alert a rule decided (``policy_hits``): the counts by
outcome (``counts``, read by ``/healthz``, ``socbot usage`` and ``/metrics``) and by
rule (``rule_hits``: ``socbot policy list``) come from there, the same on every
replica. ``take_budget`` lets one more investigation through a budget rule, or not:
the period's counter row is updated under its row lock (``UPDATE ... WHERE used <
limit``), so replicas sharing a PostgreSQL database never let more through than the
budget says. A dollar budget compares the cost of the investigations the rule let
through this period (finished ones: a running one has no cost yet) with its limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.schema import AlertRow, Investigation, PolicyBudget, PolicyHit, utcnow

OUTCOMES = ("ignored", "suppressed", "routed", "investigated", "deferred")


@dataclass(frozen=True)
class RuleHits:
    """How often a rule decided an alert, and when last."""

    hits: int
    last: datetime | None


@dataclass(frozen=True)
class Asked:
    """What the rule that let an alert through asked of its investigation."""

    mode: str | None = None  # direct | planned
    model: str | None = None  # a model (provider:model) instead of models.main


@dataclass(frozen=True)
class Limit:
    """A budget as the store applies it (``alerts.policy.rules.Budget``)."""

    investigations: int | None
    usd: float | None
    per: str  # hour | day


def period_start(now: datetime, per: str) -> datetime:
    """The start of the hour or (UTC) day ``now`` is in."""
    start = now.replace(minute=0, second=0, microsecond=0)
    return start.replace(hour=0) if per == "day" else start


class PolicyStore:
    """Decisions and budgets of the alert policy (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(
        self,
        alert_id: str,
        rule_id: str,
        origin: str,
        source: str,
        outcome: str,
        at: datetime | None = None,
        *,
        mode: str | None = None,
        model: str | None = None,
        auto_resolve: dict[str, Any] | None = None,
    ) -> None:
        """One alert decided by ``rule_id`` with ``outcome`` (one of ``OUTCOMES``)."""
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown policy outcome {outcome!r}")
        async with self.db.session() as session:
            session.add(
                PolicyHit(
                    alert_id=alert_id,
                    rule_id=rule_id,
                    origin=origin[:300],
                    source=source[:32],
                    outcome=outcome,
                    mode=mode,
                    model=model,
                    auto_resolve=auto_resolve,
                    at=at or utcnow(),
                )
            )

    async def take_budget(
        self, rule_id: str, source: str, limit: Limit, now: datetime | None = None
    ) -> bool:
        """True: one more investigation of ``source`` through ``rule_id`` this period."""
        now = now or utcnow()
        start = period_start(now, limit.per)
        key = (
            (PolicyBudget.rule_id == rule_id)
            & (PolicyBudget.source == source[:32])
            & (PolicyBudget.period_start == start)
        )
        insert = sqlite_insert if self.db.is_sqlite else pg_insert
        async with self.db.session() as session:
            await session.execute(
                insert(PolicyBudget)
                .values(rule_id=rule_id, source=source[:32], period_start=start, used=0)
                .on_conflict_do_nothing()
            )
            bump = update(PolicyBudget).where(key).values(used=PolicyBudget.used + 1)
            if limit.investigations is not None:
                bump = bump.where(PolicyBudget.used < limit.investigations)
            taken = bool((await session.execute(bump)).rowcount == 1)  # type: ignore[attr-defined]
            if taken and limit.usd is not None:  # the row is locked: replicas take turns
                if await _spent(session, rule_id, source, start) >= limit.usd:
                    await session.execute(
                        update(PolicyBudget).where(key).values(used=PolicyBudget.used - 1)
                    )
                    return False
            return taken

    async def counts(self, since: datetime | None = None) -> dict[str, int]:
        """Alerts the policy decided, by outcome (every outcome present, 0 when none).

        This is the query ``/metrics`` reads (``socbot_policy_alerts_total{outcome}``).
        """
        query = select(PolicyHit.outcome, func.count()).group_by(PolicyHit.outcome)
        if since is not None:
            query = query.where(PolicyHit.at >= since)
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        found = {str(outcome): int(n) for outcome, n in rows}
        return {o: found.get(o, 0) for o in OUTCOMES}

    async def rule_hits(self) -> dict[str, RuleHits]:
        """Every rule that decided an alert: its hit count and last hit."""
        query = select(PolicyHit.rule_id, func.count(), func.max(PolicyHit.at)).group_by(
            PolicyHit.rule_id
        )
        async with self.db.session() as session:
            rows = (await session.execute(query)).all()
        return {str(r): RuleHits(int(n), _utc(last)) for r, n, last in rows}

    async def set_severity(self, alert_id: str, severity: str) -> None:
        """A rule's severity override, kept on the alert's row (the queue reads it)."""
        async with self.db.session() as session:
            await session.execute(
                update(AlertRow).where(AlertRow.id == alert_id).values(severity=severity)
            )

    async def asked_for(self, alert_id: str) -> Asked:
        """The engine mode and model the rule that let ``alert_id`` through asked for
        (the latest such decision: a held alert is decided again when let through)."""
        async with self.db.session() as session:
            row = (
                await session.execute(
                    select(PolicyHit.mode, PolicyHit.model)
                    .where(
                        PolicyHit.alert_id == alert_id,
                        PolicyHit.outcome.in_(("investigated", "routed")),
                    )
                    .order_by(PolicyHit.id.desc())
                    .limit(1)
                )
            ).first()
        return Asked(row.mode, row.model) if row is not None else Asked()

    async def decided(self, alert_id: str) -> PolicyHit | None:
        """The decision recorded for an alert, if a rule decided it."""
        async with self.db.session() as session:
            return await session.scalar(
                select(PolicyHit).where(PolicyHit.alert_id == alert_id).order_by(PolicyHit.id)
            )


async def _spent(session: AsyncSession, rule_id: str, source: str, start: datetime) -> float:
    query = (
        select(Investigation.usage)
        .join(AlertRow, AlertRow.investigation_id == Investigation.id)
        .join(PolicyHit, PolicyHit.alert_id == AlertRow.id)
        .where(
            PolicyHit.rule_id == rule_id,
            PolicyHit.source == source[:32],
            PolicyHit.outcome.in_(("investigated", "routed")),
            PolicyHit.at >= start,
        )
    )
    usages = (await session.execute(query)).scalars().all()
    return sum(float((u or {}).get("cost_usd") or 0.0) for u in usages)


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value

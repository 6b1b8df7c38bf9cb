"""Opening a case: one per investigated alert, or per investigation someone took.

``open_for_run`` reads what the case copies (socbot's verdict, severity and confidence,
whether the verdict used playbook bullets, the alert's source, title and severity, the
policy rule that let the alert through) from the stored investigation, its alert and
the policy's record, so the figures read one table. It inserts once: the case's unique
investigation and alert ids make a second call — a retried run, another replica, a
mention taken twice — find the first case instead. An alert investigated again keeps its
case, which follows the newest run's verdict (``socbot_*``) without changing its state;
opening it from an older run's conclusion finds it and changes nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.schema import (
    AlertRow,
    CaseAction,
    CaseEvent,
    CaseRow,
    CaseStatus,
    Investigation,
    InvestigationStatus,
    PolicyHit,
    run_figures,
    utcnow,
)

SEVERITIES = ("info", "low", "medium", "high", "critical")  # lowest first


async def open_for_run(
    db: Database,
    investigation_id: str,
    *,
    model: str | None = None,
    fmt: str | None = None,
    actor: str = "socbot",
    via: str = "auto",
) -> CaseRow | None:
    """The case of a concluded investigation (opened now if it has none); None when the
    run is not a concluded one."""
    async with db.session() as session:
        run = await session.get(Investigation, investigation_id)
        if run is None or run.status != InvestigationStatus.CONCLUDED or run.verdict is None:
            return None
        record: dict[str, Any] = run.record or {}
        conclusion = record.get("conclusion") or {}
        ref = record.get("alert") or {}
        alert_id = str(ref.get("id")) if ref.get("id") else None
        alert = await session.get(AlertRow, alert_id) if alert_id else None
        if alert is not None and alert.group_id:
            alert_id = alert.group_id  # a grouped alert follows its leader's case
        channel, thread_ts = _thread(run.conversation_id)
        rule = (
            await session.scalar(
                select(PolicyHit.rule_id)
                .where(
                    PolicyHit.alert_id == alert_id,
                    PolicyHit.outcome.in_(("investigated", "routed")),
                )
                .order_by(PolicyHit.id.desc())
                .limit(1)
            )
            if alert_id
            else None
        )
        socbot = {
            "socbot_verdict": run.verdict,
            "socbot_severity": _word(conclusion.get("severity")),
            "socbot_confidence": _word(conclusion.get("confidence")),
            "used_bullets": bool(conclusion.get("used_bullets")),
            **run_figures(run.usage, record, run.created_at, run.finished_at),
        }
        alert_severity = _word(ref.get("severity") or (alert.severity if alert else None))
        now = utcnow()
        values = {
            **socbot,
            "investigation_id": investigation_id,
            "alert_id": alert_id,
            "channel": channel,
            "thread_ts": thread_ts,
            "title": str(ref.get("title") or run.objective or run.input or "")[:500],
            "status": CaseStatus.OPEN,
            "revision": 1,
            "escalated": False,
            "source": _word(ref.get("source") or run.source, 32),
            "format": _word(fmt, 64),
            "model": _word(model, 100),
            "policy_rule": rule,
            "severity": socbot["socbot_severity"] or alert_severity,
            "auto_resolved": False,
            "audit": False,
            "created_at": now,
            "updated_at": now,
        }
        insert = sqlite_insert if db.is_sqlite else pg_insert
        inserted = await session.execute(
            insert(CaseRow).values(**values).on_conflict_do_nothing().returning(CaseRow.id)
        )
        new_id = inserted.scalar()
        if new_id is not None:
            session.add(
                CaseEvent(
                    case_id=new_id,
                    revision=1,
                    action=CaseAction.OPENED,
                    actor=actor,
                    via=via,
                    detail={"investigation_id": investigation_id},
                    created_at=now,
                )
            )
            await session.flush()
            return await session.get(CaseRow, new_id)
        where = or_(
            CaseRow.investigation_id == investigation_id,
            CaseRow.alert_id == alert_id if alert_id else CaseRow.id.is_(None),
        )
        found = await session.scalar(select(CaseRow).where(where).limit(1))
        if found is not None and await _newer(session, run, found.investigation_id):
            await session.execute(
                update(CaseRow)
                .where(CaseRow.id == found.id)
                .values(investigation_id=investigation_id, **socbot)
                .execution_options(synchronize_session=False)
            )
            found = await session.get(CaseRow, found.id, populate_existing=True)
        return found


async def _newer(session: AsyncSession, run: Investigation, current: str) -> bool:
    """``run`` came after the case's current run (a click on an older conclusion of the
    same alert does not take the case back to that run's verdict)."""
    if run.id == current:
        return False
    before = await session.get(Investigation, current)
    return before is None or (run.created_at, run.id) > (before.created_at, before.id)


def _thread(conversation: str) -> tuple[str | None, str | None]:
    """``(channel, thread_ts)`` of ``slack:<channel>:<ts>``; ``(None, None)`` otherwise."""
    kind, _, rest = conversation.partition(":")
    channel, _, ts = rest.partition(":")
    return (channel, ts) if kind == "slack" and channel and ts else (None, None)


def _word(value: object, chars: int = 16) -> str | None:
    return str(value).strip()[:chars] or None if value else None


def at_least(severity: str | None, floor: str) -> bool:
    """``severity`` is ``floor`` or above (an unknown severity is not)."""
    if severity not in SEVERITIES or floor not in SEVERITIES:
        return False
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)

"""socbot resolving its own conclusions (a policy rule's ``auto_resolve``), and the blind
audit of a random share of them.

``AutoResolution`` runs when a case opens on a concluded alert: it reads what the rule that
let the alert through asked for (``policy_hits.auto_resolve``, the latest decision that let
it be investigated), asks the gate (``alerts.policy.auto_resolve.refusal``), and resolves
the case in one conditional UPDATE (``store.cases.transitions``): disposition = socbot's
verdict, ``auto_resolved``, owner and resolver ``socbot``. Only a case still open, unowned,
never auto-resolved and still on the run that was judged: a person who took it first, a
newer run's verdict, or a retried worker finds it changed and nothing happens.

In the same UPDATE the case is drawn for audit or not: each auto-resolved case
independently, with probability the rule's ``audit_share`` (else ``cases.audit_share``),
from the operating system's random source (``random.SystemRandom``): an unbiased sample
per rule, so the auditors' answers estimate the rule's error rate. The post that tells
the thread queues on the run's own work thread, so it follows the conclusion.

``audit`` records a person's blind answer once (``audit_disposition``, ``audit_by``,
``audit_at``): of two submissions, or two replicas, the first wins.
"""

from __future__ import annotations

import logging
from random import Random, SystemRandom

from sqlalchemy import and_, select

from alerts.policy.auto_resolve import Asked, read, refusal
from core.quality import drawn
from store.cases.transitions import SOCBOT, Decided, _Change, _decide, _now
from store.db.engine import Database
from store.investigations.conversations import conversation_id
from store.schema import (
    AlertRow,
    CaseAction,
    CaseDisposition,
    CaseRow,
    CaseStatus,
    PolicyHit,
)

log = logging.getLogger(__name__)
LET_THROUGH = ("investigated", "routed")


async def asked_of(db: Database, alert_id: str | None) -> tuple[str, Asked | None, str | None]:
    """``(rule id, what its auto_resolve asked, the alert's own severity)`` of the latest
    policy decision that let ``alert_id`` be investigated; ``("", None, …)`` for none."""
    if not alert_id:
        return "", None, None
    async with db.reading() as session:
        hit = (
            await session.execute(
                select(PolicyHit.rule_id, PolicyHit.auto_resolve)
                .where(PolicyHit.alert_id == alert_id, PolicyHit.outcome.in_(LET_THROUGH))
                .order_by(PolicyHit.id.desc())
                .limit(1)
            )
        ).first()
        severity = await session.scalar(select(AlertRow.severity).where(AlertRow.id == alert_id))
    if hit is None:
        return "", None, severity
    return str(hit.rule_id), read(hit.auto_resolve), severity


class AutoResolution:
    """Resolve a concluded case when its rule says so, drawing the audit (module doc)."""

    def __init__(self, db: Database, audit_share: float, rng: Random | None = None) -> None:
        self.db = db
        self.audit_share = audit_share  # ``cases.audit_share``: a rule may set its own
        self.rng = rng or SystemRandom()

    async def __call__(self, case: CaseRow) -> Decided | None:
        """The decision, or None when the gate refused or the case moved on."""
        rule, asked, alert_severity = await asked_of(self.db, case.alert_id)
        why = refusal(
            asked,
            case.socbot_verdict,
            case.socbot_confidence,
            (alert_severity, case.socbot_severity, case.severity),
        )
        if why is not None or asked is None:
            if asked is not None:
                log.info("case %d not auto-resolved by %s: %s", case.id, rule, why)
            return None
        audit = drawn(asked.share(self.audit_share), self.rng)
        now = _now(self.db)
        values = {
            "status": CaseStatus.RESOLVED,
            "disposition": case.socbot_verdict,
            "escalated": False,
            "reason": None,
            "missed": None,
            "owner": SOCBOT,
            "resolved_by": SOCBOT,
            "resolved_at": now,
            "auto_resolved": True,
            "audit": audit,
        }
        allowed = and_(
            CaseRow.status == CaseStatus.OPEN,
            CaseRow.owner.is_(None),
            CaseRow.auto_resolved.is_(False),
            CaseRow.investigation_id == case.investigation_id,
            CaseRow.socbot_verdict == case.socbot_verdict,
            CaseRow.socbot_confidence == case.socbot_confidence,
        )
        detail = {"rule": rule, "confidence": case.socbot_confidence, "audit": audit}
        channel, ts = case.channel, case.thread_ts
        thread = conversation_id(channel, ts) if channel and ts else None
        change = _Change(
            CaseAction.AUTO_RESOLVED, SOCBOT, "auto", allowed, values, detail, thread=thread
        )
        return await _decide(self.db, case.id, case.revision, change)


async def audit(
    db: Database,
    case_id: int,
    actor: str,
    disposition: CaseDisposition,
    *,
    seen: int,
    via: str,
    capture: bool = False,
) -> Decided | None:
    """A person's blind answer on a case drawn for audit, recorded once; with ``capture``,
    an answer against socbot's verdict queues its capture (``store.cases.captures``)."""
    allowed = and_(
        CaseRow.auto_resolved.is_(True),
        CaseRow.audit.is_(True),
        CaseRow.audit_disposition.is_(None),
    )
    values = {"audit_disposition": disposition, "audit_by": actor, "audit_at": _now(db)}
    detail = {"audit_disposition": str(disposition)}
    change = _Change(CaseAction.AUDITED, actor, via, allowed, values, detail, capture=capture)
    return await _decide(db, case_id, seen, change)

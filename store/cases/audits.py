"""The blind reviews of auto-resolved cases, for Slack's dialog and the terminal alike:
which cases await one (``awaiting``) and recording one on the case as it is now (``review``).

``review`` asks the store's rule (``store.cases.auto.audit``: drawn, auto-resolved, not
reviewed yet — one conditional UPDATE, so of two submissions the first wins). A decision in
between (a reopen) that moved the case's revision since it was read is not a reason to
drop the answer: the case is read again and the answer recorded once more, once; a review
recorded in between is. Who may review is the caller's to check (``bot.decisions``'s rules
in Slack; the terminal is trusted like ``socbot cases resolve``).
"""

from __future__ import annotations

from sqlalchemy import select

from store.cases import auto, records
from store.cases.transitions import Decided
from store.db.engine import Database
from store.schema import CaseDisposition, CaseRow

GONE = "There is no such case."
NOT_DRAWN = "This case was not drawn for a blind review."
REVIEWED = "This case's blind review is recorded already."
MOVED = "The case kept changing while you answered: try again."


def open_question(case: CaseRow) -> str | None:
    """Why ``case`` takes no review now, or None."""
    if not (case.auto_resolved and case.audit):
        return NOT_DRAWN
    return REVIEWED if case.audit_disposition is not None else None


async def awaiting(db: Database, *, limit: int) -> list[CaseRow]:
    """Cases drawn for a blind review whose answer is not in, oldest first."""
    async with db.reading() as session:
        rows = await session.scalars(
            select(CaseRow)
            .where(
                CaseRow.auto_resolved.is_(True),
                CaseRow.audit.is_(True),
                CaseRow.audit_disposition.is_(None),
            )
            .order_by(CaseRow.created_at, CaseRow.id)
            .limit(limit)
        )
        return list(rows)


async def review(
    db: Database,
    case: CaseRow | None,
    actor: str,
    answer: CaseDisposition,
    *,
    via: str,
    capture: bool = False,
    attempts: int = 2,
) -> Decided | str:
    """``actor``'s blind ``answer`` on ``case`` (as read): the decision, or why none. A
    case whose revision another decision moved is read again and tried again, up to
    ``attempts`` tries in all."""
    if case is None:
        return GONE
    why = open_question(case)
    if why is not None or attempts == 0:
        return why or MOVED
    done = await auto.audit(
        db, case.id, actor, answer, seen=case.revision, via=via, capture=capture
    )
    if done is not None:
        return done
    now = await records.get(db, case.id)
    return await review(db, now, actor, answer, via=via, capture=capture, attempts=attempts - 1)

"""Concluded investigations (and alerts) to open cases on, stored as the engine stores them."""

from __future__ import annotations

from store.cases.opening import open_for_run
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.schema import CaseRow, InvestigationStatus
from store.triage.alerts import AlertStore

CHANNEL, THREAD = "CALERTS1", "1700000000.000100"


async def concluded(
    db: Database,
    run_id: str,
    *,
    verdict: str = "true_positive",
    severity: str = "high",
    alert_id: str | None = "alert-1",
    channel: str = CHANNEL,
    thread_ts: str = THREAD,
    used_bullets: tuple[str, ...] = (),
    confidence: str = "high",
) -> str:
    """Store a concluded run (about ``alert_id`` when given); returns its id."""
    runs = InvestigationStore(db)
    await runs.create(run_id, f"slack:{channel}:{thread_ts}", "alert", "investigate")
    alert = (
        {"id": alert_id, "source": "guardduty", "title": "Odd login", "severity": "medium"}
        if alert_id
        else None
    )
    conclusion = {
        "verdict": verdict,
        "severity": severity,
        "confidence": confidence,
        "used_bullets": list(used_bullets),
    }
    await runs.finish(
        run_id,
        status=InvestigationStatus.CONCLUDED,
        mode="planned",
        objective="Was the login odd?",
        verdict=verdict,
        record={"alert": alert, "conclusion": conclusion},
        usage={},
        error=None,
    )
    return run_id


async def a_case(db: Database, run_id: str = "run-1", **kwargs: object) -> CaseRow:
    """A concluded run and the case it opened."""
    await concluded(db, run_id, **kwargs)  # type: ignore[arg-type]
    case = await open_for_run(db, run_id, model="gemini-test", fmt="guardduty")
    assert case is not None
    return case


__all__ = ["CHANNEL", "THREAD", "AlertStore", "a_case", "concluded"]

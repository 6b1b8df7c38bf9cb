"""The top of an investigation page: the alert first (its title, when it happened and
how long socbot took to start on it), the run's state in words (running for how long,
when it last did something, possibly stale), and the verdict band (verdict, severity,
confidence as words).

A run whose last event is older than ``STALE_AFTER_S`` while it still says ``running``
is marked as possibly stale: its process may have died (a restart settles it as
interrupted).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.web.view.listing import first_line, main_entities, words
from bot.web.view.when import ago, between, span, utc
from store.investigations.browse import channel_of

STALE_AFTER_S = 300.0  # no trace event for 5 minutes while running


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return utc(value)
    try:
        return utc(datetime.fromisoformat(str(value))) if value else None
    except ValueError:
        return None


def head(
    row: dict[str, Any],
    record: dict[str, Any],
    trace: list[dict[str, Any]],
    alerts: list[dict[str, Any]],
    now: datetime,
) -> dict[str, Any]:
    """What the header shows; ``alerts`` are the stored alerts of the run (first: its own)."""
    alert = dict(record.get("alert") or {})
    stored = alerts[0] if alerts else {}
    title = first_line(alert.get("title") or stored.get("title"), 300)
    objective = record.get("objective") or row.get("objective")
    event_time = _time(alert.get("event_time") or stored.get("event_time"))
    started, finished = utc(row.get("created_at")), utc(row.get("finished_at"))
    running = row.get("status") == "running"
    last = _time(trace[-1]["at"]) if trace else started
    idle = between(last, now)
    delay = between(event_time, started)
    entities = [e for e in alert.get("entities") or [] if isinstance(e, dict)]
    return {
        "title": title or first_line(objective or row.get("input"), 300),
        "beneath": first_line(objective, 300) if title and objective else None,
        "event_time": event_time,
        "delay": span(delay) if delay is not None and delay >= 0 else None,
        "running": running,
        "elapsed": span(between(started, now)) if running else None,
        "last_event": ago(last, now) if running else None,
        "stale": running and idle is not None and idle > STALE_AFTER_S,
        "duration": span(between(started, finished)) if finished else None,
        "entities": entities,
        "channel": channel_of(str(row.get("conversation_id") or "")),
        "main": main_entities(
            [{"kind": str(e.get("kind")), "value": str(e.get("value"))} for e in entities]
        ),
    }


def band(conclusion: dict[str, Any] | None) -> dict[str, str] | None:
    """The verdict band's words: ``true positive``, ``critical``, ``high confidence``."""
    if not conclusion:
        return None
    return {
        "verdict": words(conclusion.get("verdict")),
        "verdict_class": str(conclusion.get("verdict") or "none"),
        "severity": words(conclusion.get("severity")),
        "confidence": words(conclusion.get("confidence")),
    }


def drafts_of(review: dict[str, Any]) -> list[dict[str, Any]]:
    """Each draft the review saw, readable: its verdict, summary and findings, and what
    changed from the draft before (verdict, severity, confidence, findings)."""
    out: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    for number, draft in enumerate(review.get("drafts") or []):
        if not isinstance(draft, dict):
            continue
        findings = [
            str(f.get("finding") or "") if isinstance(f, dict) else str(f)
            for f in draft.get("key_findings") or []
        ]
        changes = []
        if before:
            for key in ("verdict", "severity", "confidence"):
                if draft.get(key) != before.get(key):
                    was, now = words(before.get(key)), words(draft.get(key))
                    changes.append(f"{key} {was} → {now}")
            had = len(before.get("key_findings") or [])
            if len(findings) != had:
                changes.append(f"{had} → {len(findings)} findings")
            if draft.get("summary") != before.get("summary"):
                changes.append("summary rewritten")
        out.append(
            {
                "number": number + 1,
                "kept": number == review.get("kept", 0),
                "verdict": draft.get("verdict"),
                "severity": draft.get("severity"),
                "confidence": draft.get("confidence"),
                "summary": draft.get("summary") or draft.get("text"),
                "findings": findings,
                "changes": changes,
            }
        )
        before = draft
    return out

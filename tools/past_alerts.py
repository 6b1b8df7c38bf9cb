"""Past alerts: what socbot saw before, and what it concluded then.

Two tools: ``search_past_alerts`` (by indicator, text and/or time window) and
``get_past_alert`` (one alert with its indicators, verdict and conclusion).
The alert of the running investigation (linked by id, or by its Slack thread) is
left out of searches. Both see only the alerts of the request's scope (``ctx.scope``,
``core.scope``: the channels of the people it answers), filtered in the store's query; an
alert outside it is answered exactly as an unknown id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from alerts.defang import refang
from tools.base import RunContext, Tool, ToolError, ToolRegistry

if TYPE_CHECKING:  # the stores are SQLAlchemy: imported only when the tools are bound
    from store.db.engine import Database
    from store.investigations.runs import InvestigationStore
    from store.triage.alerts import AlertStore, StoredAlert

_RELATIVE = re.compile(r"^\s*(\d{1,5})\s*([mhdw])\s*$", re.I)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_SUMMARY_CHARS = 300


@dataclass(frozen=True)
class PastAlertDeps:
    alerts: AlertStore
    investigations: InvestigationStore


def register(registry: ToolRegistry, db: Database | None) -> None:
    """Add the past-alert tools (they need only the database; without it they are listed
    but not bound, for ``socbot tools list``)."""
    deps = None
    if db is not None:
        from store.investigations.runs import InvestigationStore
        from store.triage.alerts import AlertStore

        deps = PastAlertDeps(AlertStore(db), InvestigationStore(db))
    registry.add(Tool(search_past_alerts, deps))
    registry.add(Tool(get_past_alert, deps))


async def search_past_alerts(
    ctx: RunContext[PastAlertDeps],
    indicator: Annotated[
        str | None, Field(description="exact IP, domain, URL, hash, email or principal")
    ] = None,
    text: Annotated[str | None, Field(description="words in the title, summary or alert")] = None,
    since: Annotated[
        str | None, Field(description="ISO 8601 time/date, or relative like '7d', '12h'")
    ] = None,
    until: Annotated[str | None, Field(description="ISO 8601 time/date, or relative")] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> dict[str, Any]:
    """Search alerts socbot handled before, newest first, with their verdicts.

    Filters combine (all must match); with none, the most recent alerts are returned.
    """
    now = datetime.now(UTC)
    start, end = _when(since, now), _when(until, now)
    if start and end and start > end:
        raise ToolError("'since' is after 'until'")
    found = await ctx.deps.alerts.search(
        scope=ctx.scope,
        indicator=refang(indicator).strip() if indicator else None,
        text=text,
        since=start,
        until=end,
        exclude_investigation=ctx.investigation_id,
        exclude_slack_thread=await _current_thread(ctx),
        limit=limit,
    )
    result: dict[str, Any] = {"count": len(found), "alerts": [_brief(a) for a in found]}
    if not found:
        result["note"] = "no past alert matches these filters"
    return result


async def get_past_alert(
    ctx: RunContext[PastAlertDeps],
    alert_id: Annotated[str, Field(description="an id returned by search_past_alerts")],
) -> dict[str, Any]:
    """One past alert: indicators, raw alert, and the verdict and conclusion reached."""
    alert = await ctx.deps.alerts.visible(alert_id.strip(), ctx.scope)
    if alert is None:
        raise ToolError(f"no past alert with id {alert_id!r}")
    return {
        **_brief(alert),
        "summary": alert.summary,
        "indicators": [i.model_dump() for i in alert.indicators],
        "investigation": alert.investigation or None,
        "raw": alert.raw,
    }


def _brief(alert: StoredAlert) -> dict[str, Any]:
    summary = alert.summary or ""
    if len(summary) > _SUMMARY_CHARS:
        summary = summary[:_SUMMARY_CHARS] + "…"
    return {
        "id": alert.id,
        "source": alert.source,
        "title": alert.title,
        "severity": alert.severity,
        "event_time": _iso(alert.event_time),
        "received_at": _iso(alert.created_at),
        "verdict": alert.verdict or "not concluded",
        "summary": summary or None,
        "indicator_count": len(alert.indicators),
    }


async def _current_thread(ctx: RunContext[PastAlertDeps]) -> tuple[str, str] | None:
    """The Slack thread of the running investigation: its alert is not a *past* alert.

    An alert is linked to its investigation only when the run ends, but its thread
    root (``slack:<channel>:<ts>``, see ``store.slack``) is the conversation id.
    """
    investigation = await ctx.deps.investigations.get(ctx.investigation_id)
    if investigation is None:
        return None
    parts = investigation.conversation_id.split(":", 2)
    if len(parts) == 3 and parts[0] == "slack":
        return parts[1], parts[2]
    return None


def _when(value: str | None, now: datetime) -> datetime | None:
    if value is None or not value.strip():
        return None
    match = _RELATIVE.match(value)
    if match:
        amount, unit = int(match.group(1)), _UNITS[match.group(2).lower()]
        return now - timedelta(**{unit: amount})
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolError(
            f"cannot read time {value!r}: use ISO 8601 (2025-11-08T05:00:00Z) or '7d'/'12h'"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None

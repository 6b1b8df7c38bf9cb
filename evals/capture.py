"""``socbot eval capture``: a past investigation as a scenario that replays offline.

From the database: the alert as it arrived (``alerts.raw``), the rows its log queries
returned and its threat-intel answers (from the trace's ``tool_called`` events), and
the ground truth: ``--verdict``, else the analyst's vote (👎 with the right verdict, or
👍 on socbot's own). The trace keeps each tool result whole, as the tool returned it
before the model's cut, up to ``core.events.STORED_RESULT_CHARS`` (64 KiB); the rows
whole within a longer one (or an older trace's 600-character preview) are kept, the
others are counted in ``Captured.cut_rows``; review the scenario before adding it to a pack.
Rows go to the table the query read (queries over several tables are skipped).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from config.settings import Settings
from evals.writer import Draft, TableRows
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.feedback import FeedbackStore
from store.schema import AlertRow

VERDICTS = ("true_positive", "false_positive", "benign")
CATEGORIES = {
    "guardduty": "cloud", "scc": "cloud", "securityhub": "cloud", "wiz": "cloud",
    "okta": "identity", "azure": "identity",
    "defender": "endpoint", "crowdstrike": "endpoint", "sentinelone": "endpoint",
    "falco": "endpoint", "wazuh": "endpoint", "elastic": "endpoint",
}  # fmt: skip
LOOKUPS = ("lookup_ip", "lookup_domain", "lookup_url", "lookup_hash")


class CaptureError(Exception):
    """The investigation cannot become a scenario; one line says why."""


@dataclass
class Captured:
    draft: Draft
    queries: int = 0
    cut_rows: int = 0  # queries whose rows the trace preview cut short
    cut_intel: int = 0  # intel answers the trace did not keep whole (left out)
    skipped: list[str] = field(default_factory=list)


def salvage(preview: str) -> tuple[dict[str, Any], bool]:
    """The JSON object in ``preview``, or as much of it as is whole: its ``columns`` and
    every complete row of ``rows``; ``False`` when something was cut."""
    try:
        value = json.loads(preview)
        return (value if isinstance(value, dict) else {}), True
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    out: dict[str, Any] = {}
    start = preview.find('"columns":')
    if start >= 0:
        out["columns"], _ = decoder.raw_decode(preview, preview.index("[", start))
    start = preview.find('"rows":')
    rows: list[Any] = []
    if start >= 0:
        pos = preview.index("[", start) + 1
        while True:
            while pos < len(preview) and preview[pos] in " ,\n":
                pos += 1
            try:
                row, pos = decoder.raw_decode(preview, pos)
            except json.JSONDecodeError:
                break
            rows.append(row)
    out["rows"] = rows
    return out, False


def query_table(sql: str) -> str | None:
    """The one table ``sql`` reads, or ``None`` (several, or none, or not SQL)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        tree = sqlglot.parse_one(sql, read="bigquery")
    except SqlglotError:
        return None
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    names = {
        ".".join(p for p in (t.catalog, t.db, t.name) if p)
        for t in tree.find_all(exp.Table)
        if t.name not in ctes
    }
    return names.pop() if len(names) == 1 else None


async def capture(
    db: Database,
    settings: Settings,
    investigation_id: str,
    *,
    verdict: str | None = None,
    truth: dict[str, Any] | None = None,
    category: str | None = None,
) -> Captured:
    """The scenario ``investigation_id`` makes (not written yet)."""
    inv = await InvestigationStore(db).get(investigation_id)
    if inv is None:
        raise CaptureError(f"no investigation {investigation_id!r} in this database")
    async with db.session() as session:
        alert = await session.scalar(
            select(AlertRow).where(AlertRow.investigation_id == investigation_id)
        )
    if alert is None:
        raise CaptureError(f"investigation {investigation_id!r} has no stored alert")
    verdict = verdict or await _analyst_verdict(db, investigation_id, inv.verdict)
    if verdict not in VERDICTS:
        raise CaptureError(
            f"no analyst verdict for {investigation_id!r}: pass --verdict ({', '.join(VERDICTS)})"
        )
    captured = Captured(draft=_draft(alert, investigation_id, category))
    await _from_trace(captured, InvestigationStore(db), investigation_id, settings)
    captured.draft.truth = {
        "verdict": verdict,
        "severity": ["info", "critical"],
        "must_establish": [],
        "techniques": [],
        "forbidden": [],
        **(truth or {}),
    }
    return captured


async def _analyst_verdict(db: Database, investigation_id: str, own: str | None) -> str | None:
    votes = await FeedbackStore(db).votes(investigation_id)
    for vote in reversed(votes):
        if vote.value == "incorrect" and vote.verdict:
            return vote.verdict
        if vote.value == "correct":
            return own
    return None


def _draft(alert: AlertRow, investigation_id: str, category: str | None) -> Draft:
    when = datetime.now(UTC).date().isoformat()
    return Draft(
        title=alert.title,
        category=category or CATEGORIES.get(alert.source, "network"),
        origin=f"captured from investigation {investigation_id} on {when}",
        licence="internal: your organisation's data; do not publish without review",
        synthetic=False,
        truth={},
        alert=dict(alert.raw),
        tables=[],
    )


async def _from_trace(
    captured: Captured, store: InvestigationStore, investigation_id: str, settings: Settings
) -> None:
    known = {t.name: t for t in settings.logs.tables}
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in await store.trace(investigation_id):
        payload = event["payload"]
        if event["type"] != "tool_called" or not payload.get("ok"):
            continue
        result, whole = salvage(str(payload.get("result_preview") or ""))
        tool, args = payload.get("tool"), payload.get("args") or {}
        if tool == "query_logs":
            captured.queries += 1
            captured.cut_rows += not whole
            table = query_table(str(args.get("sql") or ""))
            if table is None:
                captured.skipped.append(str(args.get("sql"))[:120])
                continue
            columns = result.get("columns") or []
            for row in result.get("rows") or []:
                values = row if isinstance(row, list) else list(dict(row).values())
                rows[table].append(dict(zip(columns, values, strict=False)))
        elif tool in LOOKUPS and whole and isinstance(result.get("services"), dict):
            captured.draft.intel.append(
                {"indicator": result.get("indicator"), "services": result["services"]}
            )
        elif tool in LOOKUPS and not whole:
            captured.cut_intel += 1
    captured.draft.tables = [
        TableRows(
            name=name,
            description=(known[name].description if name in known else "Captured rows")
            + f" (rows captured from investigation {investigation_id})",
            rows=found,
            time_column=known[name].time_column if name in known else None,
        )
        for name, found in sorted(rows.items())
        if found
    ]

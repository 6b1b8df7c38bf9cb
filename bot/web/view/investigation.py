"""What the investigation page shows, from the stored record and its trace.

``investigation_view`` gathers it: the conclusion with each key finding's evidence
references resolved to the tool calls behind them (verified or not, and why, from the
review), the plan as first made and each change reflection made to it, every step
with its tool calls (arguments with SQL laid out, outcome, duration, size, the stored
result preview), the review's drafts, the playbook bullets, and usage per stage.
Values stay as data: the template escapes every one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.web.view import timeline
from bot.web.view.header import band, drafts_of, head
from bot.web.view.results import Table, arg_text, cite, table_of, tabular
from bot.web.view.sql_layout import layout

PREVIEW_CHARS = 1500  # of a stored result, on the page; "Show all" fetches the rest
TECHNIQUE_ID = re.compile(r"^T\d{4}(?:\.\d{3})?$")
SQL_KEYS = ("sql", "query")


@dataclass
class Call:
    seq: int  # the trace event's: ``/calls/{seq}`` shows the whole stored result
    anchor: str
    ref: str | None
    tool: str
    args: list[tuple[str, str, bool]]  # name, text, is SQL
    ok: bool
    error: str | None
    duration_ms: float
    result_chars: int
    truncated: bool
    preview: str
    at: str | None
    table: Table | None = None  # a query's rows (``bot.web.view.results``), when cited
    lazy: bool = False  # rows no finding cites: drawn when opened ("Show"), not with the page

    @property
    def short(self) -> str:
        return self.preview[:PREVIEW_CHARS]

    @property
    def cut(self) -> str | None:
        """ "first N of M characters" when the page or the trace holds less than the whole."""
        whole = max(self.result_chars, len(self.preview))
        shown = len(self.short)
        return f"first {shown:,} of {whole:,} characters" if shown < whole else None

    @property
    def stored_all(self) -> bool:
        """Whether the trace holds the whole result (else its first STORED_RESULT_CHARS)."""
        return len(self.preview) >= self.result_chars


@dataclass
class Step:
    id: str
    description: str
    status: str
    summary: str
    tools: list[str]
    calls: list[Call] = field(default_factory=list)


def anchor_of(ref: str | None, seq: int) -> str:
    clean = re.sub(r"[^A-Za-z0-9_-]", "-", ref) if ref else ""
    return f"call-{clean}" if clean else f"call-{seq}"


def _args(args: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out = []
    for key, value in args.items():
        if key in SQL_KEYS and isinstance(value, str):
            out.append((key, layout(value), True))
        else:
            out.append((key, arg_text(value), False))
    return out


def calls_of(
    trace: list[dict[str, Any]], cited: frozenset[str] = frozenset()
) -> list[tuple[str, Call]]:
    """Every tool call in the trace, with the id of the step it ran in (``""``: none).
    Only the results of calls whose ref is in ``cited`` (a finding quotes them) are read
    as tables with the page; another result that looks like one is drawn when opened
    (``lazy``): parsing every row of every call made most of a page's time and memory."""
    out = []
    for event in trace:
        if event["type"] != "tool_called":
            continue
        p = event["payload"]
        stored = str(p.get("result_preview") or "")
        ok, quoted = bool(p.get("ok")), p.get("ref") in cited
        out.append(
            (
                str(p.get("step_id") or ""),
                Call(
                    seq=int(event["seq"]),
                    anchor=anchor_of(p.get("ref"), int(event["seq"])),
                    ref=p.get("ref"),
                    tool=str(p.get("tool")),
                    args=_args(p.get("args") or {}),
                    ok=ok,
                    error=p.get("error"),
                    duration_ms=float(p.get("duration_ms") or 0),
                    result_chars=int(p.get("result_chars") or 0),
                    truncated=bool(p.get("truncated")),
                    preview=stored,
                    at=event.get("at"),
                    table=table_of(stored) if ok and quoted else None,
                    lazy=ok and not quoted and tabular(stored),
                ),
            )
        )
    return out


def techniques(conclusion: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Each ATT&CK technique's label, and its page on attack.mitre.org for a well-formed id."""
    out: list[tuple[str, str | None]] = []
    for technique in conclusion.get("techniques") or []:
        if not isinstance(technique, dict):
            continue
        tid = str(technique.get("id") or "")
        name, tactic = technique.get("name"), technique.get("tactic")
        label = tid + (f" {name}" if name else "") + (f" ({tactic})" if tactic else "")
        url = None
        if TECHNIQUE_ID.match(tid):
            url = "https://attack.mitre.org/techniques/" + tid.replace(".", "/") + "/"
        out.append((label, url))
    return out


def _last(trace: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((e["payload"] for e in reversed(trace) if e["type"] == kind), None)


def _steps(
    record: dict[str, Any], trace: list[dict[str, Any]], calls: list[tuple[str, Call]]
) -> list[Step]:
    plan = _last(trace, "plan_updated") or _last(trace, "plan_created") or {}
    planned = record.get("steps") or (plan.get("plan") or {}).get("steps") or []
    finished = {
        e["payload"]["step_id"]: e["payload"] for e in trace if e["type"] == "step_finished"
    }
    started = {e["payload"]["step_id"] for e in trace if e["type"] == "step_started"}
    steps = []
    for raw in planned:
        step_id = str(raw.get("id"))
        done = finished.get(step_id, {})
        steps.append(
            Step(
                id=step_id,
                description=str(raw.get("description") or ""),
                status=str(
                    done.get("status")
                    or ("running" if step_id in started else raw.get("status") or "pending")
                ),
                summary=str(done.get("summary") or raw.get("result") or ""),
                tools=[str(t) for t in raw.get("tools") or []],
                calls=[c for s, c in calls if s == step_id],
            )
        )
    return steps


def _cited(conclusion: dict[str, Any]) -> frozenset[str]:
    """The calls the key findings refer to: their tables are read whole (``cite``)."""
    findings = [f for f in conclusion.get("key_findings") or [] if isinstance(f, dict)]
    return frozenset(str(r) for f in findings for r in f.get("evidence_refs") or [])


def _target(call: Call | None, quoted: str) -> str | None:
    """Where a finding's link leads: the row of the call's table it quotes best, else
    the call; None for a reference to no call (``alert`` or one that never ran)."""
    if call is None:
        return None
    row = cite(call.table, quoted) if call.table else None
    return f"{call.anchor}-r{row}" if row is not None else call.anchor


def _findings(
    conclusion: dict[str, Any], review: dict[str, Any], calls: dict[str, Call]
) -> list[dict[str, Any]]:
    unverified = {int(u.get("index", -1)): u for u in review.get("unverified") or []}
    reviewed = bool(review) and review.get("status") != "skipped"
    out = []
    for index, finding in enumerate(conclusion.get("key_findings") or []):
        quoted = f"{finding.get('finding') or ''}\n{finding.get('evidence') or ''}"
        refs = [(r, _target(calls.get(r), quoted)) for r in finding.get("evidence_refs") or []]
        problem = unverified.get(index)
        out.append(
            {
                "finding": finding.get("finding"),
                "evidence": finding.get("evidence"),
                "refs": refs,
                "verified": None if not reviewed else problem is None,
                "problems": (problem or {}).get("problems") or [],
            }
        )
    return out


def investigation_view(
    row: dict[str, Any],
    trace: list[dict[str, Any]],
    votes: list[dict[str, Any]],
    alerts: list[dict[str, Any]] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Everything the investigation template shows; ``alerts`` the run's stored alerts."""
    now = now or datetime.now(UTC)
    record = dict(row.get("record") or {})
    running = row.get("status") == "running"
    conclusion = record.get("conclusion") or (_last(trace, "concluded") or {}).get("conclusion")
    calls = calls_of(trace, _cited(conclusion or {}))
    by_ref = {c.ref: c for _, c in calls if c.ref}
    review = record.get("review") or (_last(trace, "reviewed") or {}).get("review") or {}
    first_plan = (_last(list(reversed(trace)), "plan_created") or {}).get("plan") or {}
    anchors = {
        int(e["seq"]): anchor_of(e["payload"].get("ref"), int(e["seq"]))
        for e in trace
        if e["type"] == "tool_called"
    }
    return {
        "row": row,
        "objective": record.get("objective") or first_plan.get("objective") or row.get("objective"),
        "conclusion": conclusion,
        "findings": _findings(conclusion or {}, review, by_ref),
        "techniques": techniques(conclusion or {}),
        "answer": record.get("answer") or (_last(trace, "answered") or {}).get("text"),
        "first_plan": first_plan.get("steps") or [],
        "changes": [e["payload"] for e in trace if e["type"] == "plan_updated"],
        "reflections": [e["payload"] for e in trace if e["type"] == "reflected"],
        "steps": _steps(record, trace, calls),
        "direct_calls": [c for s, c in calls if not s],
        "review": review,
        "playbook": _last(trace, "playbook_selected"),
        "used": [e["payload"] for e in trace if e["type"] == "playbook_used"],
        "usage": record.get("usage") or row.get("usage") or {},
        "votes": votes,
        "timeline": timeline.build(trace, anchors, now if running else None),
        "head": head(row, record, trace, alerts or [], now),
        "band": band(conclusion),
        "drafts": drafts_of(review),
        "bullets": {},  # id -> text of the playbook bullets used or selected (the page's)
        "alerts": alerts or [],
        "limits_hit": record.get("limits_hit") or [],
        "events": len(trace),
    }

"""Investigations written the way the engine writes them, for the page tests and bench_web.

``seed`` records a run through ``InvestigationStore``: ``create``, the events (real
``core.events`` models, through the trace recorder the engine uses), then ``finish``
with a record. The contents are invented (labelled so): a Tor sign-in looked at in
``steps`` steps with one or two tool calls each, a reflection that adds a step, a
conclusion whose findings cite the calls, and a review with one unverified finding.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from core.events import (
    Concluded,
    LLMCalled,
    PlanCreated,
    PlanUpdated,
    Reflected,
    Reviewed,
    Started,
    StepFinished,
    StepStarted,
    ToolCalled,
)
from store.db.engine import Database
from store.investigations.runs import InvestigationStore

SQL = (
    "select principal, count(*) as n from `proj.audit.signins` where ip = '185.220.101.42' "
    "and ts > timestamp_sub(current_timestamp(), interval 1 day) group by principal"
)


CITED = "j.doe@example.com"  # the user in the last row of each result, which a finding cites
COLUMNS = ["event_time", "principal", "client_ip", "outcome"]


def result(text: str, size: int) -> str:
    """A query_logs result's JSON of about ``size`` characters: filler rows, then the
    row the first finding cites (past what the page shows before "Show all")."""
    rows: list[list[Any]] = [["2025-11-03T22:05:00Z", "alice@example.com", text, "FAILURE"]]
    while len(json.dumps(rows)) < size:
        n = len(rows)
        rows.append([f"2025-11-03T21:{n % 60:02d}:00Z", f"user{n}@example.com", "10.1.2.3", "OK"])
    rows.append(["2025-11-03T22:06:13Z", CITED, text, "SUCCESS"])
    return json.dumps({"columns": COLUMNS, "rows": rows, "row_count": len(rows)})


def plan(steps: int, text: str) -> dict[str, Any]:
    return {
        "objective": f"Decide whether {text} is an intrusion",
        "steps": [
            {
                "id": f"s{i}",
                "description": f"Look at {text} from angle {i}",
                "tools": ["query_logs"],
                "expected": "rows",
                "depends_on": [],
                "status": "done",
            }
            for i in range(1, steps + 1)
        ],
    }


def conclusion(text: str, severity: str = "high", who: str = CITED) -> dict[str, Any]:
    return {
        "verdict": "true_positive",
        "severity": severity,
        "confidence": "medium",
        "summary": f"A Tor exit node signed in: {text}",
        "key_findings": [
            {
                "finding": f"Sign-in from Tor ({text})",
                "evidence": f"SUCCESS for {who} from {text}",
                "evidence_refs": ["s1#1"],
            },
            {"finding": "No MFA challenge", "evidence": "none found", "evidence_refs": ["s2#9"]},
        ],
        "techniques": [{"id": "T1078.004", "name": "Cloud Accounts", "tactic": "Initial Access"}],
        "uncertainties": ["MFA logs were not checked"],
        "recommendations": ["Reset the user's credentials"],
    }


def review() -> dict[str, Any]:
    return {
        "status": "passed",
        "kind": "conclusion",
        "findings": 2,
        "verified": 1,
        "unverified": [
            {"index": 1, "verified": False, "refs": ["s2#9"], "problems": ["no such result s2#9"]}
        ],
        "score": 0.82,
        "criteria": {
            "answers_objective": 1.0,
            "grounded": 0.7,
            "consistent": 0.9,
            "actionable": 0.8,
        },
        "issues": [],
        "rewrites": 0,
        "kept": 0,
        "note": "",
        "drafts": [conclusion("draft")],
    }


def events(
    investigation_id: str, conversation: str, steps: int, text: str, result_size: int = 1500
) -> list[Any]:
    """Every event of one run up to (not including) the conclusion; each call's stored
    result is about ``result_size`` characters long (of 5,000, or more when larger)."""
    the_plan = plan(steps, text)
    out: list[Any] = [
        Started(investigation_id=investigation_id, kind="alert", conversation_id=conversation),
        PlanCreated(investigation_id=investigation_id, plan=the_plan),
    ]
    for i in range(1, steps + 1):
        step = f"s{i}"
        out.append(StepStarted(investigation_id=investigation_id, step_id=step, description=text))
        for n in (1, 2) if i % 2 else (1,):
            out.append(
                ToolCalled(
                    investigation_id=investigation_id,
                    step_id=step,
                    ref=f"{step}#{n}",
                    tool="query_logs",
                    args={"sql": SQL, "note": text},
                    ok=n == 1,
                    duration_ms=120.0 * n,
                    result_chars=max(5000, result_size + 200),
                    truncated=True,
                    result_preview=result(text, result_size),
                    error=None if n == 1 else "bytes over the limit",
                )
            )
        out.append(
            LLMCalled(
                investigation_id=investigation_id,
                stage=f"step {step}",
                model="gemini-2.5-flash",
                prompt_tokens=1200,
                output_tokens=150,
                thinking_tokens=0,
                cached_tokens=0,
                latency_ms=800.0,
                finish_reason="STOP",
                cost_usd=0.0005,
            )
        )
        out.append(
            StepFinished(
                investigation_id=investigation_id,
                step_id=step,
                status="done",
                summary=f"found {text}",
            )
        )
    reflection = {"achieved": True, "insights": [f"insight about {text}"], "plan_updates": []}
    out.append(Reflected(investigation_id=investigation_id, wave=1, reflection=reflection))
    out.append(
        PlanUpdated(
            investigation_id=investigation_id, plan=the_plan, changes=[f"added s{steps}: {text}"]
        )
    )
    return out


async def seed(
    db: Database,
    *,
    channel: str | None,
    text: str = "185.220.101.42",
    steps: int = 3,
    running: bool = False,
    result_size: int = 1500,
    severity: str = "high",
    who: str = CITED,
) -> str:
    """One investigation in ``channel`` (``None``: a terminal run); returns its id."""
    store = InvestigationStore(db)
    investigation_id = uuid.uuid4().hex
    conversation = (
        f"slack:{channel}:1700000000.000100" if channel else f"cli:{investigation_id[:12]}"
    )
    await store.create(investigation_id, conversation, "alert", f"Alert: {text}")
    recorder = store.recorder(investigation_id)
    written = events(investigation_id, conversation, steps, text, result_size)
    if running:  # the last step has started and not finished
        last = f"s{steps}"
        written = [e for e in written if not (isinstance(e, StepFinished) and e.step_id == last)]
    for event in written:
        await recorder.emit(event)
    await recorder.flush()
    if not running:
        await finish(store, investigation_id, text, severity, who)
    return investigation_id


async def finish(
    store: InvestigationStore,
    investigation_id: str,
    text: str,
    severity: str = "high",
    who: str = CITED,
) -> None:
    recorder = store.recorder(investigation_id)
    await recorder.emit(
        Reviewed(investigation_id=investigation_id, kind="conclusion", review=review())
    )
    await recorder.emit(
        Concluded(investigation_id=investigation_id, conclusion=conclusion(text, severity, who))
    )
    usage = {
        "llm_calls": 4,
        "total_tokens": 5400,
        "prompt_tokens": 4800,
        "cached_tokens": 0,
        "output_tokens": 600,
        "thinking_tokens": 0,
        "cost_usd": 0.002,
        "stages": {
            "planner": {
                "calls": 1,
                "prompt_tokens": 1200,
                "cached_tokens": 0,
                "output_tokens": 150,
                "thinking_tokens": 0,
                "cost_usd": 0.0005,
            }
        },
    }
    await store.finish(
        investigation_id,
        status="concluded",
        mode="planned",
        objective=f"Decide whether {text} is an intrusion",
        verdict="true_positive",
        record={
            "conclusion": conclusion(text, severity, who),
            "review": review(),
            "usage": usage,
            "alert": {
                "source": "scc",
                "title": f"Sign-in from a Tor exit node ({text[:60]})",
                "severity": severity,
                "event_time": "2025-11-03T22:05:00+00:00",
                "entities": [
                    {"kind": "host", "value": "web-prod-01", "role": "target"},
                    {"kind": "ip", "value": text[:60], "role": "source"},
                ],
            },
        },
        usage=usage,
        error=None,
    )

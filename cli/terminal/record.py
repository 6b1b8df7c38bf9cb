"""The investigation record that ``--json`` and ``socbot show`` print.

The engine's record (``Outcome.record``, also stored on the investigation row)
plus what only the trace has: each step's tool calls (arguments, outcome,
duration, size and error text), the reflections and the step timings.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

# Key order of the record, for a reader; other keys the engine adds follow.
RECORD_ORDER = (
    "investigation_id",
    "conversation_id",
    "kind",
    "status",
    "mode",
    "error",
    "limits_hit",
    "objective",
    "steps",
    "tool_calls",
    "reflections",
    "conclusion",
    "review",
    "answer",
    "usage",
    "timings",
)

TOOL_CALL_KEYS = ("ref", "tool", "args", "ok", "error", "duration_ms", "result_chars", "truncated")


def with_trace(record: dict[str, Any], trace: list[dict[str, Any]]) -> dict[str, Any]:
    """``record`` with tool calls per step (direct calls in ``tool_calls``) and timings."""
    out = dict(record)
    calls = tool_calls(trace)
    steps = [dict(step) for step in out.get("steps") or _plan_steps(out)]
    for step in steps:
        step["tool_calls"] = calls.pop(str(step.get("id")), [])
    out["steps"] = steps
    out["tool_calls"] = [call for step_calls in calls.values() for call in step_calls]
    if not out.get("reflections"):
        out["reflections"] = [e["payload"]["reflection"] for e in trace if e["type"] == "reflected"]
    timings = dict(out.get("timings") or {})
    timings["steps_ms"] = step_timings(trace)
    out["timings"] = timings
    first = [k for k in RECORD_ORDER if k in out]
    return {key: out[key] for key in [*first, *(k for k in out if k not in first)]}


def tool_calls(trace: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The trace's tool calls by step id (``""`` for calls outside a step)."""
    by_step: dict[str, list[dict[str, Any]]] = {}
    for event in trace:
        if event["type"] != "tool_called":
            continue
        payload = event["payload"]
        call = {key: payload.get(key) for key in TOOL_CALL_KEYS}
        by_step.setdefault(str(payload.get("step_id") or ""), []).append(call)
    return by_step


def step_timings(trace: list[dict[str, Any]]) -> dict[str, float]:
    """Per-step wall-clock milliseconds from the trace's step_started/step_finished."""
    started: dict[str, datetime] = {}
    steps: dict[str, float] = {}
    for event in trace:
        step_id = event["payload"].get("step_id")
        if event["at"] is None or not isinstance(step_id, str):
            continue
        at = datetime.fromisoformat(event["at"])
        if event["type"] == "step_started":
            started[step_id] = at
        elif event["type"] == "step_finished" and step_id in started:
            steps[step_id] = round((at - started[step_id]).total_seconds() * 1000, 1)
    return steps


def _plan_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    plan = record.get("plan")
    steps = plan.get("steps") if isinstance(plan, dict) else None
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []

"""The investigation timeline as SVG, drawn on the server to scale.

One row per step (bar from ``step_started`` to ``step_finished``; a step still going,
``running``, to ``now``), its tool calls as thin bars inside the row (each ends when
its event was written and lasted ``duration_ms``), direct calls on a row of their own,
a row per stage around the steps (plan, reflect, conclude, review: the model calls of
that stage, from ``llm_called`` and its latency), and a dashed line where each wave's
reflection ended. Ticks fall on round times (1, 2 or 5 of a power of ten), none past
the end. Only numbers and ids reach the drawing; the template escapes the labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.web.view.when import utc

WIDTH = 880.0
LABEL = 120.0
ROW = 26.0


@dataclass
class Bar:
    x: float
    width: float
    kind: str  # step status, or "call-ok" / "call-error"
    title: str
    href: str | None = None


@dataclass
class Row:
    label: str
    y: float
    bars: list[Bar] = field(default_factory=list)


@dataclass
class Timeline:
    width: float
    height: float
    rows: list[Row]
    waves: list[tuple[float, str]]  # x, label
    ticks: list[tuple[float, str]]
    total_ms: float


def _at(event: dict[str, Any]) -> datetime | None:
    return utc(datetime.fromisoformat(event["at"])) if event.get("at") else None


STAGES = (  # a model call's stage (its prefix) -> the timeline row it is drawn in
    ("classifier", "plan"),
    ("planner", "plan"),
    ("reflector", "reflect"),
    ("concluder", "conclude"),
    ("critic", "review"),
    ("rewrite", "review"),
    ("review", "review"),
)
BEFORE, AFTER = ("plan",), ("reflect", "conclude", "review")


def _label(ms: float, step_ms: float) -> str:
    if step_ms >= 60_000:
        return f"{ms / 60_000:.0f} m" if ms % 60_000 == 0 else f"{ms / 60_000:.1f} m"
    return f"{ms / 1000:g} s" if step_ms >= 1000 else f"{ms:.0f} ms"


def ticks_of(total_ms: float, most: int = 6) -> list[float]:
    """Round, evenly spaced times from 0 to at most ``total_ms``, at most ``most``+1."""
    raw = total_ms / most
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(total_ms // step) + 1)]


def _stage(name: str) -> str | None:
    return next((row for prefix, row in STAGES if name.startswith(prefix)), None)


def build(
    trace: list[dict[str, Any]], call_anchor: dict[int, str], now: datetime | None = None
) -> Timeline | None:
    """The timeline of ``trace``; ``call_anchor`` maps a call event's seq to its anchor;
    ``now`` (a run still going) draws the steps started and not finished up to it."""
    times = [t for t in map(_at, trace) if t is not None]
    if not times:
        return None
    began_at = [  # a call's (or model call's) event is written when it ends
        at - timedelta(milliseconds=float(e["payload"].get(_LASTED[e["type"]]) or 0))
        for e in trace
        if e["type"] in _LASTED and (at := _at(e)) is not None
    ]
    start = min([times[0], *began_at])
    end = max([*times, *([now] if now else [])])
    total_ms = max((end - start).total_seconds() * 1000, 1.0)
    scale = (WIDTH - LABEL) / total_ms

    def x(at: datetime) -> float:
        return LABEL + max((at - start).total_seconds() * 1000, 0.0) * scale

    stages: dict[str, Row] = {}
    rows: dict[str, Row] = {}
    opened: dict[str, datetime] = {}
    waves: list[tuple[float, str]] = []

    def row(key: str) -> Row:
        if key not in rows:
            rows[key] = Row(key or "direct", 0)
        return rows[key]

    for event in trace:
        at, payload = _at(event), event["payload"]
        if at is None:
            continue
        step = str(payload.get("step_id") or "")
        if event["type"] == "step_started":
            opened[step] = at
            row(step)
        elif event["type"] == "step_finished" and step in opened:
            left = x(opened.pop(step))
            status = str(payload.get("status"))
            row(step).bars.insert(0, Bar(left, max(x(at) - left, 2), status, f"{step} {status}"))
        elif event["type"] == "tool_called":
            began = at - timedelta(milliseconds=float(payload.get("duration_ms") or 0))
            left = x(began)
            ok = "call-ok" if payload.get("ok") else "call-error"
            title = f"{payload.get('tool')} {payload.get('duration_ms')} ms"
            href = call_anchor.get(int(event["seq"]))
            row(step).bars.append(Bar(left, max(x(at) - left, 2), ok, title, href))
        elif event["type"] == "llm_called" and (name := _stage(str(payload.get("stage")))):
            began = at - timedelta(milliseconds=float(payload.get("latency_ms") or 0))
            left = x(began)
            bar = Bar(left, max(x(at) - left, 2), "stage", f"{payload.get('stage')}")
            stages.setdefault(name, Row(name, 0)).bars.append(bar)
        elif event["type"] == "reflected":
            waves.append((x(at), f"wave {payload.get('wave')}"))
    if now is not None:
        for step, since in opened.items():  # started, not finished: open to now
            left = x(since)
            row(step).bars.insert(0, Bar(left, max(x(end) - left, 2), "running", f"{step} running"))
    ordered = [
        *(stages[k] for k in BEFORE if k in stages),
        *rows.values(),
        *(stages[k] for k in AFTER if k in stages),
    ]
    for n, each in enumerate(ordered):
        each.y = 20 + n * ROW
    height = 30 + len(ordered) * ROW
    marks = ticks_of(total_ms)
    step_ms = marks[1] if len(marks) > 1 else total_ms
    ticks = [(LABEL + ms * scale, _label(ms, step_ms)) for ms in marks]
    return Timeline(WIDTH, height, ordered, waves, ticks, total_ms)


_LASTED = {"tool_called": "duration_ms", "llm_called": "latency_ms"}

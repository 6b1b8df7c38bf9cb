"""The investigation timeline as SVG, drawn on the server to scale.

One row per step (bar from ``step_started`` to ``step_finished``), its tool calls as
thin bars inside the row (each ends when its event was written and lasted
``duration_ms``), direct calls on a row of their own, and a dashed line where each
wave's reflection ended. Only numbers and ids reach the drawing; the template
escapes the labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

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
    return datetime.fromisoformat(event["at"]) if event.get("at") else None


def _label(ms: float, total_ms: float) -> str:
    return f"{ms / 1000:.1f}s" if total_ms >= 2000 else f"{ms:.0f}ms"


def build(trace: list[dict[str, Any]], call_anchor: dict[int, str]) -> Timeline | None:
    """The timeline of ``trace``; ``call_anchor`` maps a call event's seq to its anchor."""
    times = [t for t in map(_at, trace) if t is not None]
    if not times:
        return None
    call_starts = [  # a call's event is written when it ends: it began duration_ms earlier
        at - timedelta(milliseconds=float(e["payload"].get("duration_ms") or 0))
        for e in trace
        if e["type"] == "tool_called" and (at := _at(e)) is not None
    ]
    start = min([times[0], *call_starts])
    end = max(times)
    total_ms = max((end - start).total_seconds() * 1000, 1.0)
    scale = (WIDTH - LABEL) / total_ms

    def x(at: datetime) -> float:
        return LABEL + max((at - start).total_seconds() * 1000, 0.0) * scale

    rows: dict[str, Row] = {}
    opened: dict[str, datetime] = {}
    waves: list[tuple[float, str]] = []

    def row(key: str) -> Row:
        if key not in rows:
            rows[key] = Row(key or "direct", 20 + len(rows) * ROW)
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
            left = x(opened[step])
            status = str(payload.get("status"))
            row(step).bars.insert(0, Bar(left, max(x(at) - left, 2), status, f"{step} {status}"))
        elif event["type"] == "tool_called":
            began = at - timedelta(milliseconds=float(payload.get("duration_ms") or 0))
            left = x(began)
            ok = "call-ok" if payload.get("ok") else "call-error"
            title = f"{payload.get('tool')} {payload.get('duration_ms')} ms"
            href = call_anchor.get(int(event["seq"]))
            row(step).bars.append(Bar(left, max(x(at) - left, 2), ok, title, href))
        elif event["type"] == "reflected":
            waves.append((x(at), f"wave {payload.get('wave')}"))
    height = 30 + len(rows) * ROW
    ticks = [
        (LABEL + i * (WIDTH - LABEL) / 4, _label(total_ms * i / 4, total_ms)) for i in range(5)
    ]
    return Timeline(WIDTH, height, list(rows.values()), waves, ticks, total_ms)

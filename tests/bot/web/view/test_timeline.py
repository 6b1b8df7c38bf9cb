"""The timeline is drawn to scale: a step's bar and a call's bar where their times say."""

from __future__ import annotations

from typing import Any

from bot.web.view.timeline import LABEL, WIDTH, build

T0 = "2026-11-25T10:00:00+00:00"


def event(seq: int, kind: str, at: str, **payload: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "at": at, "payload": payload}


def test_bars_are_placed_to_scale() -> None:
    trace = [  # invented: one step of 10 s with a 4 s call ending at 6 s, a wave at 10 s
        event(1, "started", T0),
        event(2, "step_started", "2026-11-25T10:00:00+00:00", step_id="s1"),
        event(
            3,
            "tool_called",
            "2026-11-25T10:00:06+00:00",
            step_id="s1",
            ok=True,
            duration_ms=4000,
            tool="query_logs",
        ),
        event(4, "step_finished", "2026-11-25T10:00:10+00:00", step_id="s1", status="done"),
        event(5, "reflected", "2026-11-25T10:00:10+00:00", wave=1),
    ]
    timeline = build(trace, {3: "call-s1-1"})
    assert timeline is not None and timeline.total_ms == 10_000
    per_ms = (WIDTH - LABEL) / 10_000
    step, call = timeline.rows[0].bars
    assert (step.kind, step.x, round(step.width, 3)) == ("done", LABEL, round(10_000 * per_ms, 3))
    assert call.kind == "call-ok" and call.href == "#call-s1-1".lstrip("#")
    assert round(call.x, 3) == round(LABEL + 2000 * per_ms, 3)
    assert round(call.width, 3) == round(4000 * per_ms, 3)
    assert timeline.waves == [(LABEL + 10_000 * per_ms, "wave 1")]
    assert [label for _, label in timeline.ticks] == ["0.0s", "2.5s", "5.0s", "7.5s", "10.0s"]


def test_no_times_no_timeline() -> None:
    assert build([], {}) is None

"""The timeline is drawn to scale: a step's bar and a call's bar where their times say."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.web.view.timeline import LABEL, WIDTH, build, ticks_of

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
    assert [label for _, label in timeline.ticks] == ["0 s", "2 s", "4 s", "6 s", "8 s", "10 s"]


def test_a_running_step_is_open_to_now_and_stages_have_rows() -> None:
    """Invented: planning 2 s, step s1 started at 3 s and still going at 65 s (now)."""
    trace = [
        event(1, "started", T0),
        event(2, "llm_called", "2026-11-25T10:00:02+00:00", stage="planner", latency_ms=2000),
        event(3, "step_started", "2026-11-25T10:00:03+00:00", step_id="s1"),
    ]
    now = datetime(2026, 11, 25, 10, 1, 5, tzinfo=UTC)
    timeline = build(trace, {}, now=now)
    assert timeline is not None and timeline.total_ms == 65_000
    assert [r.label for r in timeline.rows] == ["plan", "s1"]
    (plan,) = timeline.rows[0].bars
    assert (plan.kind, plan.x) == ("stage", LABEL)
    (running,) = timeline.rows[1].bars
    assert running.kind == "running" and round(running.x + running.width, 3) == WIDTH
    assert [label for _, label in timeline.ticks] == ["0 s", "20 s", "40 s", "60 s"]
    assert build(trace, {}).rows[1].bars == []  # type: ignore[union-attr]  # no now: no bar


def test_ticks_are_round_and_never_past_the_end() -> None:
    assert ticks_of(10_000) == [0, 2000, 4000, 6000, 8000, 10_000]
    assert ticks_of(7_300) == [0, 2000, 4000, 6000]
    assert ticks_of(306_000) == [0, 100_000, 200_000, 300_000]
    assert ticks_of(95) == [0, 20, 40, 60, 80]


def test_no_times_no_timeline() -> None:
    assert build([], {}) is None

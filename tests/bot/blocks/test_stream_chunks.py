"""The chunks of a streamed investigation (``bot.blocks.stream``) over hostile content: what
the model and the alert wrote reaches Slack defanged, without mentions, within Slack's
limits; a batch Slack did not take is sent again; details are sent once (Slack appends)."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.messages.chunk import Chunk

from agent.concluder import Conclusion
from agent.planner import Plan, Step
from bot.blocks.kit import STREAM_CHARS
from bot.blocks.stream import (
    MARKDOWN_PER_CALL,
    TITLE_CHARS,
    TaskBoard,
    markdown_chars,
    verdict_line,
)
from core.events import PlanUpdated, Reflected, ToolCalled

HOSTILE = "<!channel> @here see <https://evil.example/x|docs> from 185.220.101.42 "


def plan(*statuses: str, objective: str = "Decide") -> Plan:
    steps = [
        Step(id=f"s{i}", description=HOSTILE + f"step {i}", tools=[], expected="", status=s)  # type: ignore[arg-type]
        for i, s in enumerate(statuses, 1)
    ]
    return Plan(objective=objective, steps=steps)


def tool(step: str, ok: bool = True) -> ToolCalled:
    return ToolCalled(
        investigation_id="i1",
        step_id=step,
        tool="<@U123> query_logs",
        args={},
        ok=ok,
        duration_ms=1234,
        result_chars=10,
        truncated=False,
    )


def test_hostile_text_is_defanged_and_clipped() -> None:
    board = TaskBoard(["185.220.101.42"])
    reflected = Reflected(investigation_id="i1", wave=1, reflection={"insights": [HOSTILE]})
    board.observe(reflected, None)
    batch = board.take(plan("running", objective=HOSTILE * 100))
    shown = str(batch.chunks)
    for bad in ("<!channel>", "<https://", "https://evil", "185.220.101.42", "@here", "<@U123>"):
        assert bad not in shown
    assert "185.220.101[.]42" in shown
    [title] = [c for c in batch.chunks if c["type"] == "plan_update"]
    assert len(title["title"]) <= TITLE_CHARS
    for chunk in batch.chunks:  # each one a chunk slack_sdk knows
        assert isinstance(Chunk.parse(chunk), Chunk)


def test_a_call_never_carries_more_markdown_than_slack_takes() -> None:
    board = TaskBoard()
    for _ in range(40):  # 40 long reflections arrive before the stream could send
        board.observe(
            Reflected(investigation_id="i1", wave=1, reflection={"insights": ["x" * 60_000]}), None
        )
    sent = 0
    while board.pending:
        batch = board.take(None)
        assert 0 < markdown_chars(batch.chunks) <= MARKDOWN_PER_CALL < STREAM_CHARS
        board.sent(batch)
        sent += batch.lines
    assert sent == 40


def test_task_states_follow_the_plan_and_details_are_sent_once() -> None:
    board = TaskBoard()
    live = plan("running", "pending")
    board.observe(tool("s1"), live)
    first = board.take(live)
    statuses = [(c["id"], c["status"]) for c in first.chunks if c["type"] == "task_update"]
    assert statuses == [("step-1", "in_progress"), ("step-2", "pending")]
    details = next(c for c in first.chunks if c.get("id") == "step-1")["details"]
    assert "query_logs" in details and "1.2 s" in details
    retried = board.take(live)  # Slack did not take it: the same change again
    assert retried.chunks == first.chunks
    board.sent(retried)
    assert not board.take(live)  # nothing new
    board.observe(tool("s1", ok=False), live)
    live.steps[0].status = "done"
    again = board.take(live)
    [chunk] = [c for c in again.chunks if c["type"] == "task_update"]
    assert chunk["status"] == "complete" and "failed" in chunk["details"]
    assert "query_logs (1.2 s)" not in chunk["details"]  # the first call's line is not repeated
    board.sent(again)
    final = board.take(plan("done", "pending"), final=True)
    assert [c["status"] for c in final.chunks if c["type"] == "task_update"] == ["error"]


def test_plan_changes_and_the_verdict_are_said() -> None:
    board = TaskBoard()
    board.observe(
        PlanUpdated(investigation_id="i1", plan={}, changes=["added s3: <!here> check"]), None
    )
    [line] = board.take(None).chunks
    assert line["text"].startswith("📝 Plan updated:") and "<!here>" not in line["text"]
    conclusion: dict[str, Any] = {
        "verdict": "true_positive",
        "severity": "high",
        "confidence": "medium",
        "summary": HOSTILE,
        "key_findings": [],
        "uncertainties": [],
        "recommendations": [],
    }
    said = verdict_line(Conclusion.model_validate(conclusion), ["185.220.101.42"])
    assert said.startswith("**True positive** · high severity · medium confidence")
    assert "<!channel>" not in said and "185.220.101.42" not in said

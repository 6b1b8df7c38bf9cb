"""The y/N approval prompt of ``socbot investigate`` and ``socbot chat``."""

from __future__ import annotations

import io
import threading

import pytest
from rich.console import Console

from cli.terminal.approval import NOT_INTERACTIVE, TerminalApprover, interactive
from core.approvals import ApprovalRequest

REQUEST = ApprovalRequest(
    tool="query_logs",
    args={"sql": "SELECT * FROM `p.d.t`"},
    why="query would process 2.00 TB, over the 10.00 GB per-query cap",
    estimate="2.00 TB scanned, ≈ $12.50 at on-demand prices",
)


def approver(read: object, shown: io.StringIO) -> TerminalApprover:
    console = Console(file=shown, force_terminal=False, width=200)
    return TerminalApprover(console, interactive=True, read=read, user="lead")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "approved"), [("y", True), ("YES", True), ("n", False), ("", False), ("sure", False)]
)
async def test_only_yes_approves(answer: str, approved: bool) -> None:
    shown = io.StringIO()
    decision = await approver(lambda _prompt: answer, shown).decide(REQUEST, 30)
    assert decision.approved is approved
    assert decision.by == "lead"
    text = shown.getvalue()
    assert "query_logs" in text and "over the 10.00 GB per-query cap" in text
    assert "$12.50" in text


async def test_no_answer_in_time_is_a_denial() -> None:
    never = threading.Event()
    decision = await approver(lambda _p: str(never.wait(60)), io.StringIO()).decide(REQUEST, 0.2)
    never.set()
    assert not decision.approved and decision.note == "no decision within 0.2 s"


async def test_end_of_input_is_a_denial() -> None:
    def closed(_prompt: str) -> str:
        raise EOFError

    decision = await approver(closed, io.StringIO()).decide(REQUEST, 30)
    assert not decision.approved


async def test_quiet_or_no_terminal_denies_without_asking() -> None:
    asked: list[str] = []
    quiet = TerminalApprover(Console(quiet=True), interactive=False, read=asked.append)  # type: ignore[arg-type]
    decision = await quiet.decide(REQUEST, 30)
    assert (decision.approved, decision.note, asked) == (False, NOT_INTERACTIVE, [])
    assert interactive(quiet=True) is False
    assert interactive(quiet=False) is False  # pytest's stdin is not a terminal

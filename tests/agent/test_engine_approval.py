"""A plan step whose MCP tool needs a person's approval, asked on the terminal.

The real SDK server, engine and trace; the person at the prompt is the test (the
``read`` function). The step waits for the answer while the other step goes on; the
answer and who gave it are in the trace; a denial reaches the model as a tool error.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from rich.console import Console

from agent.engine import Request
from cli.terminal.approval import NOT_INTERACTIVE, TerminalApprover
from store.db.engine import Database
from tests.engine_support import scripted_engine
from tests.fakes.model import ModelRequest, ScriptedModel, call_response, json_response
from tests.fakes.model import text_response as text
from tests.fakes.sink import EventSink
from tests.tools.mcp_support import started, stdio_spec


def step(id_: str, tools: list[str]) -> dict[str, Any]:
    return {"id": id_, "description": id_, "tools": tools, "expected": "x", "depends_on": []}


CONCLUSION = {
    "verdict": "benign",
    "severity": "low",
    "confidence": "medium",
    "summary": "s",
    "key_findings": [],
    "uncertainties": [],
    "recommendations": [],
}


def tool_responses(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        p.function_response.response
        for c in request.contents
        for p in c.parts or []
        if p.function_response and p.function_response.response
    ]


async def investigate(
    db: Database, approver: TerminalApprover, other_done: threading.Event
) -> tuple[Any, ScriptedModel, list[dict[str, Any]]]:
    def s2_answer(request: ModelRequest) -> Any:
        other_done.set()  # s2 finished its tool call while s1 was waiting for a person
        return text("web-01 is payments'")

    script = {
        "classifier": [json_response({"needs_plan": True, "reason": "r"})],
        "planner": [
            json_response(
                {
                    "objective": "o",
                    "steps": [step("s1", ["assets__echo"]), step("s2", ["assets__lookup_asset"])],
                }
            )
        ],
        "step s1": [call_response(("assets__echo", {"text": "open a ticket"})), text("done")],
        "step s2": [call_response(("assets__lookup_asset", {"host": "web-01"})), s2_answer],
        "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
        "concluder": [json_response(CONCLUSION)],
    }
    spec = stdio_spec(tools=["echo", "lookup_asset"], approval=["echo"], trust="internal")
    async with started(spec) as (registry, _):
        model = ScriptedModel(script)
        engine = scripted_engine(db, model, registry)
        request = Request(conversation_id="c1", text="t", user="alice", approver=approver)
        outcome = await engine.run(request, EventSink())
    trace = await engine.investigations.trace(outcome.investigation_id)
    return outcome, model, trace


async def test_approved_on_the_terminal_while_the_other_step_goes_on(db: Database) -> None:
    other_done = threading.Event()
    prompts: list[str] = []

    def person(prompt: str) -> str:
        prompts.append(prompt)
        assert other_done.wait(30), "the other step waited for the approval"
        return "y"

    shown = io.StringIO()
    approver = TerminalApprover(Console(file=shown), interactive=True, read=person, user="lead")
    outcome, model, trace = await investigate(db, approver, other_done)

    assert outcome.status == "concluded" and prompts == ["Run it? [y/N] "]
    assert "Approval needed: assets__echo" in shown.getvalue()
    [response] = tool_responses(model.requests_for("step s1")[1])
    assert '"text": "open a ticket"' in response["output"]  # the call ran
    asked = [t["payload"] for t in trace if t["type"] == "approval_asked"]
    decided = [t["payload"] for t in trace if t["type"] == "approval_decided"]
    assert [(a["tool"], a["args"]) for a in asked] == [("assets__echo", {"text": "open a ticket"})]
    assert [(d["approved"], d["by"]) for d in decided] == [(True, "lead")]
    assert decided[0]["at"] and decided[0]["note"] == "approved by lead (terminal)"


async def test_denied_when_nobody_can_be_asked(db: Database) -> None:
    approver = TerminalApprover(Console(quiet=True), interactive=False)
    outcome, model, trace = await investigate(db, approver, threading.Event())
    [response] = tool_responses(model.requests_for("step s1")[1])
    assert "was not approved: " + NOT_INTERACTIVE in response["error"]
    decided = [t["payload"] for t in trace if t["type"] == "approval_decided"]
    assert [(d["approved"], d["by"]) for d in decided] == [(False, None)]
    assert outcome.status == "concluded"  # a denial is a tool error, not the end

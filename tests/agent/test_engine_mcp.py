"""A plan step calls an MCP server's tool: the real SDK server, the scripted model, the
real engine and trace. The tool is offered only to the step that names it, its result
reaches the model fenced, and the call is in the trace."""

from __future__ import annotations

from typing import Any

from agent.engine import Request
from store.db.engine import Database
from tests.engine_support import scripted_engine
from tests.fakes.model import ModelRequest, ScriptedModel, call_response, json_response
from tests.fakes.model import text_response as text
from tests.fakes.sink import EventSink
from tests.tools.mcp_support import started, stdio_spec


def step(id_: str, tools: list[str]) -> dict[str, Any]:
    return {
        "id": id_,
        "description": f"angle {id_}",
        "tools": tools,
        "expected": "facts",
        "depends_on": [],
    }


CONCLUSION = {
    "verdict": "benign",
    "severity": "low",
    "confidence": "medium",
    "summary": "web-01 belongs to payments.",
    "key_findings": [{"finding": "owner is the payments team", "evidence": "s1#1"}],
    "uncertainties": [],
    "recommendations": [],
}


def responses(request: ModelRequest) -> list[Any]:
    return [
        p.function_response.response
        for c in request.contents
        for p in c.parts or []
        if p.function_response and p.function_response.response
    ]


async def test_a_plan_step_calls_an_mcp_tool(db: Database) -> None:
    script = {
        "classifier": [json_response({"needs_plan": True, "reason": "owner"})],
        "planner": [
            json_response(
                {
                    "objective": "Who owns web-01?",
                    "steps": [step("s1", ["assets__lookup_asset"]), step("s2", ["assets__pid"])],
                }
            )
        ],
        "step s1": [
            call_response(("assets__lookup_asset", {"host": "web-01"})),
            text("payments owns web-01"),
        ],
        "step s2": [call_response(("assets__lookup_asset", {"host": "web-01"})), text("n/a")],
        "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
        "concluder": [json_response(CONCLUSION)],
    }
    async with started(stdio_spec(tools=["lookup_asset", "pid"])) as (registry, _):
        model = ScriptedModel(script)
        engine = scripted_engine(db, model, registry)
        request = Request(conversation_id="c1", text="Who owns web-01?")
        outcome = await engine.run(request, EventSink())

    assert outcome.status == "concluded"
    catalogue = model.requests_for("planner")[0].system  # the tools, in a stable order
    assert catalogue.index("- assets__lookup_asset(host: string)") < catalogue.index(
        "- assets__pid()"
    )
    first, second = model.requests_for("step s1")[0], model.requests_for("step s2")[0]
    assert first.tool_names == ["assets__lookup_asset"]  # restricted to the step's tools
    assert second.tool_names == ["assets__pid"]
    [answer] = responses(model.requests_for("step s1")[1])
    assert answer["output"].startswith("<<<DATA-")  # fenced
    assert '"team": "payments"' in answer["output"]
    [refused] = responses(model.requests_for("step s2")[1])
    assert "not available in this step" in refused["error"]
    trace = await engine.investigations.trace(outcome.investigation_id)
    calls = [t for t in trace if t["type"] == "tool_called"]
    assert sorted((c["payload"]["step_id"], c["payload"]["ok"]) for c in calls) == [
        ("s1", True),
        ("s2", False),
    ]
    assert {c["payload"]["tool"] for c in calls} == {"assets__lookup_asset"}

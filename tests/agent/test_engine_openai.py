"""A whole investigation on ``openai:`` models, through the real engine, gateway, tools,
review and SQLite, and the real openai SDK client against the Chat Completions fake
(``tests/fakes/openai_api.py``: the network edge only, refusing what OpenAI refuses).

The engine does not know who answers: the same stages, tool loop, repairs, review and
history as on Gemini (``tests/agent/test_engine.py``, ``tests/agent/review``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import respx

from agent.engine import Engine, Request
from agent.history import History
from agent.model.gateway import LLMGateway
from agent.model.providers import RoutingBackend
from config.settings import Limits, ReviewSettings, Settings
from core.events import LLMCalled
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from tests.agent.test_engine import CONCLUSION, Lab, registry, step
from tests.fakes import openai_api as oa
from tests.fakes.sink import EventSink

MAIN, LIGHT, CHEAP = "openai:gpt-5-mini", "openai:gpt-5-nano", "openai:gpt-4.1-mini"
FINDINGS = "203.0.113.7 is a Tor exit node per threat intel [s1#1]; verdict malicious."
GROUNDED = {
    "finding": "203.0.113.7 is a Tor exit node",
    "evidence": "lookup_ip: malicious, tor-exit",
    "evidence_refs": ["s1#1"],
}
INVENTED = {"finding": "198.51.100.9 also logged in", "evidence": "auth", "evidence_refs": ["s1#1"]}


def conclusion(*findings: dict[str, Any]) -> dict[str, Any]:
    return oa.structured({**CONCLUSION, "key_findings": list(findings)})


def critique(score: float, *issues: str) -> dict[str, Any]:
    criteria = dict.fromkeys(("answers_objective", "grounded", "consistent", "actionable"), score)
    return oa.structured({"score": score, "criteria": criteria, "issues": list(issues)})


def plan(*tools: str) -> dict[str, Any]:
    return oa.structured(
        {"objective": "Decide whether 203.0.113.7 got in", "steps": [step("s1", list(tools))]}
    )


def planned_script() -> dict[str, Any]:
    return {
        "classifier": [oa.structured({"needs_plan": True, "reason": "an IP to check"})],
        "planner": [
            oa.text('{"objective": "Decide whether'),  # cut off: the gateway's repair turn
            plan("check_malware"),  # an unknown tool: the engine's repair
            plan("lookup_ip"),
        ],
        "step s1": [oa.calls(("lookup_ip", {"ip": "203.0.113.7"})), oa.text(FINDINGS)],
        "reflector": [oa.structured({"achieved": True, "insights": [], "plan_updates": []})],
        "concluder": [conclusion(INVENTED, GROUNDED), conclusion(GROUNDED)],
        "critic": [critique(0.5, "key_findings[0] is not supported"), critique(0.9)],
        "direct": [oa.calls(("lookup_ip", {"ip": "203.0.113.8"})), oa.text("Also Tor.")],
    }


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> oa.OpenAIAPI:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    return oa.OpenAIAPI(respx.MockRouter(assert_all_called=False), planned_script())


def engine(db: Database, api: oa.OpenAIAPI) -> Engine:
    settings = Settings(
        limits=Limits(),
        review=ReviewSettings(),
        models={"main": MAIN, "light": LIGHT},
    )
    backend = RoutingBackend(
        settings, factories={"openai": lambda: oa.openai_backend(api, settings)}
    )
    return Engine(
        gateway=LLMGateway(backend, settings.gemini, settings.models),
        registry=registry(Lab()),
        history=History(db, settings.limits),
        investigations=InvestigationStore(db),
        settings=settings,
    )


def models_asked(api: oa.OpenAIAPI) -> list[tuple[str, str]]:
    return [
        (stage.split(" ")[0], body["model"])
        for stage, body in zip(api.stages(), api.requests, strict=True)
    ]


async def test_an_investigation_and_its_follow_up_on_openai(
    db: Database, api: oa.OpenAIAPI
) -> None:
    eng, sink = engine(db, api), EventSink()
    outcome = await eng.run(Request(conversation_id="c1", text="Did 203.0.113.7 get in?"), sink)

    assert (outcome.mode, outcome.status) == ("planned", "concluded")
    assert outcome.conclusion is not None
    assert [k.finding for k in outcome.conclusion.key_findings] == [GROUNDED["finding"]]
    assert outcome.review is not None
    assert (outcome.review.status, outcome.review.rewrites) == ("rewritten", 1)
    assert models_asked(api) == [
        ("classifier", "gpt-5-nano"),
        ("planner", "gpt-5-mini"),
        ("planner", "gpt-5-mini"),  # the gateway's repair of the cut-off JSON
        ("planner", "gpt-5-mini"),  # the engine's repair of the unknown tool
        ("step", "gpt-5-mini"),
        ("step", "gpt-5-mini"),
        ("reflector", "gpt-5-mini"),
        ("concluder", "gpt-5-mini"),
        ("critic", "gpt-5-nano"),
        ("concluder", "gpt-5-mini"),  # the review's rewrite
        ("critic", "gpt-5-nano"),
    ]
    # The tool loop: the call's id pairs the result, which the model sees with its ref.
    first, second = api.for_stage("step s1")
    call_id = second["messages"][-2]["tool_calls"][0]["id"]
    result = second["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == call_id
    assert json.loads(result["content"])["ref"] == "s1#1"
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup_ip"]
    # The structured stages asked for OpenAI's strict schema; the planner repair saw why.
    planner_repair = api.requests[3]["messages"]
    assert "unknown tools 'check_malware'" in planner_repair[-1]["content"]
    assert all(b["response_format"]["json_schema"]["strict"] for b in api.requests[:4])
    # Usage and cost per model, at OpenAI's list prices.
    called = [e for e in sink.events if isinstance(e, LLMCalled)]
    assert {e.model for e in called} == {MAIN, LIGHT}
    assert all(e.cost_usd is not None and e.cost_usd > 0 for e in called)
    critic = next(e for e in called if e.stage == "critic")
    assert critic.cost_usd == pytest.approx((120 * 0.05 + 30 * 0.40) / 1e6)  # gpt-5-nano
    assert outcome.usage["unpriced_calls"] == 0
    assert sum(outcome.usage["models"].values()) == len(api.requests)

    # A follow-up on the thread's history, on a cheaper model a policy rule chose.
    follow = Request(conversation_id="c1", text="And 203.0.113.8?", mode="direct", model=CHEAP)
    answer = await eng.run(follow, EventSink())
    assert (answer.status, answer.answer) == ("answered", "Also Tor.")
    direct = api.for_stage("direct")
    assert [b["model"] for b in direct] == ["gpt-4.1-mini", "gpt-4.1-mini"]
    assert direct[0]["temperature"] == 0.2 and "reasoning_effort" not in direct[0]
    history = json.dumps(direct[0]["messages"])
    assert "Did 203.0.113.7 get in?" in history and "Reset alice" in history
    assert len(await eng.history.messages("c1")) == 4

"""A whole investigation on Claude: the real engine, gateway, ``RoutingBackend`` (the models
named ``anthropic:…`` as an operator names them), ``AnthropicBackend`` and ``anthropic``
SDK against the wire-level fake, which refuses what the API refuses.

The fake routes on the stage as ``agent.prompts.stage_named`` reads it from the request
the API received (system text, last user text), so what is checked is what was sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.engine import Request
from agent.model.anthropic_backend import AnthropicBackend
from agent.model.providers import RoutingBackend
from agent.prompts import stage_named
from config.anthropic_settings import AnthropicSettings
from config.models_settings import ModelsSettings
from config.settings import Limits, ReviewSettings, fixed_settings
from store.db.engine import Database
from tests.agent.test_engine import CONCLUSION, Lab, registry, step
from tests.engine_support import scripted_engine
from tests.fakes.anthropic_api import AnthropicAPI, Reply, reply, text, tool_use
from tests.fakes.sink import EventSink

PLAN = {"objective": "Decide whether 203.0.113.7 got in", "steps": [step("s1", ["lookup_ip"])]}


def stage_of(body: dict[str, Any]) -> str:
    system = "".join(b["text"] for b in body.get("system") or [])
    last = next(m for m in body["messages"] if m["role"] == "user")
    task = "".join(b.get("text", "") for b in last["content"])
    return stage_named(system, task)


def script(body: dict[str, Any]) -> Reply:
    stage = stage_of(body)
    if stage == "classifier":
        needs = "Who was it?" not in json.dumps(body["messages"])
        return reply(text(json.dumps({"needs_plan": needs, "reason": "because"})))
    if stage == "planner":
        return reply(text(json.dumps(PLAN)))
    if stage == "step s1":
        if len(body["messages"]) == 1:
            return reply(tool_use("lookup_ip", {"ip": "203.0.113.7"}))
        return reply(text("finding-s1: 203.0.113.7 is a Tor exit"))
    if stage == "reflector":
        return reply(text(json.dumps({"achieved": True, "insights": [], "plan_updates": []})))
    if stage == "concluder":
        return reply(text(json.dumps(CONCLUSION)))
    if stage == "direct":
        return reply(text("It was alice, from a Tor exit."))
    raise AssertionError(f"unexpected stage {stage!r}")


async def test_an_investigation_and_a_follow_up_on_claude(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    api = AnthropicAPI(script)
    settings = fixed_settings(
        limits=Limits(),
        review=ReviewSettings(enabled=False),
        models=ModelsSettings(
            main="anthropic:claude-sonnet-4-6", light="anthropic:claude-haiku-4-5"
        ),
        anthropic=AnthropicSettings(),
    )
    claude = {
        "anthropic": lambda: AnthropicBackend.from_settings(settings, http_client=api.http_client())
    }
    backend = RoutingBackend(settings, factories=claude)
    lab = Lab()
    engine = scripted_engine(db, backend, registry(lab), settings)  # type: ignore[arg-type]
    sink = EventSink()

    outcome = await engine.run(Request(conversation_id="c1", text="Did 203.0.113.7 get in?"), sink)
    assert (outcome.mode, outcome.status) == ("planned", "concluded")
    assert outcome.conclusion is not None and outcome.conclusion.verdict == "true_positive"
    assert outcome.plan is not None and outcome.plan.steps[0].findings.startswith("finding-s1")
    assert [c[0] for c in lab.calls] == ["lookup_ip"]
    follow = await engine.run(Request(conversation_id="c1", text="Who was it?"), sink)
    assert follow.status in ("answered", "concluded") and "alice" in (follow.answer or "")
    assert list(backend.backends) == ["anthropic"]  # Gemini's backend never built
    await backend.aclose()

    assert api.refusals == []
    assert {b["model"] for b in api.requests} == {"claude-sonnet-4-6", "claude-haiku-4-5"}
    stages = [stage_of(b) for b in api.requests]
    assert stages[:6] == ["classifier", "planner", "step s1", "step s1", "reflector", "concluder"]
    step_loop = api.requests[3]["messages"]
    assert step_loop[2]["content"][0]["tool_use_id"] == step_loop[1]["content"][0]["id"]
    planner = api.requests[1]
    assert planner["thinking"]["type"] == "enabled"  # the planner thinks by default
    assert planner["output_config"]["format"]["schema"]["additionalProperties"] is False
    # the follow-up carries the first run's history (objective and conclusion) as data
    assert "Decide whether 203.0.113.7 got in" in json.dumps(api.requests[-1]["messages"])
    usage = outcome.usage
    assert set(usage["models"]) == {
        "anthropic:claude-sonnet-4-6",
        "anthropic:claude-haiku-4-5-20251001",
    }
    assert usage["unpriced_calls"] == 0 and usage["cost_usd"] > 0
    assert usage["cached_tokens"] > 0  # the step's second call read its first from the cache

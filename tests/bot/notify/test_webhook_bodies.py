"""Every event's body, as built from socbot's own objects, matches the published schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from agent.engine import Request
from bot.decisions.playbook_review import PROPOSAL_FIELDS
from bot.notify.notifier import body, investigation_data
from core.events import NullSink
from store.db.engine import Database
from tests.engine_support import scripted_engine
from tests.fakes.model import ScriptedModel, call_response, json_response, text_response
from tests.playbook_support import bullet
from tools.base import RunContext, Tool, ToolRegistry

SCHEMA = json.loads(
    (Path(__file__).parents[3] / "docs" / "schemas" / "socbot-webhook-v1.json").read_text()
)
KEY = "0123456789abcdef0123456789abcdef"


async def lookup_ip(ctx: RunContext[None], ip: str) -> dict[str, Any]:
    """Threat intelligence on an IP address."""
    return {"ip": ip, "flagged": True}


def valid(event: str, data: dict[str, Any]) -> dict[str, Any]:
    sent = json.loads(body("cases", event, data, KEY))  # type: ignore[arg-type]
    jsonschema.validate(sent, SCHEMA)
    return dict(sent)


async def test_a_concluded_run(db: Database) -> None:
    conclusion = {
        "verdict": "true_positive",
        "severity": "high",
        "confidence": "medium",
        "summary": "Tor exit login.",
        "key_findings": [{"finding": "flagged", "evidence": "s1#1"}],
        "uncertainties": [],
        "recommendations": ["reset"],
    }
    step = {
        "id": "s1",
        "description": "d",
        "tools": ["lookup_ip"],
        "expected": "e",
        "depends_on": [],
    }
    model = ScriptedModel(
        {
            "classifier": [json_response({"needs_plan": True, "reason": "r"})],
            "planner": [json_response({"objective": "o", "steps": [step]})],
            "step s1": [call_response(("lookup_ip", {"ip": "185.220.101.42"})), text_response("x")],
            "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
            "concluder": [json_response(conclusion)],
        }
    )
    registry = ToolRegistry()
    registry.add(Tool(lookup_ip))
    engine = scripted_engine(db, model, registry)
    outcome = await engine.run(Request(conversation_id="slack:C1:1.2", text="go"), NullSink())
    event = investigation_data(outcome, None, "C1", "1.2")
    assert event is not None
    name, data, facts = event
    sent = valid(name, data)
    assert (name, facts.verdict, facts.severity) == ("concluded", "true_positive", "high")
    assert sent["data"]["conclusion"]["summary"] == "Tor exit login."


def test_feedback_and_a_playbook_proposal() -> None:
    valid("feedback", {"investigation_id": "inv-1", "user": "U1", "correct": False})
    proposal = bullet("Scans from 203.0.113.0/24 are Qualys", status="proposed")
    sent = valid("playbook_proposal", proposal.model_dump(mode="json", include=PROPOSAL_FIELDS))
    assert sent["data"]["content"] == "Scans from 203.0.113.0/24 are Qualys"

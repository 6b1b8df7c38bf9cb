"""Helpers for the playbook tests: a small engine with a scripted model and real stores."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.engine import Engine, Outcome, Request
from agent.history import History
from agent.model.gateway import LLMGateway
from agent.playbook.learning.service import Learner, ReviewPoster
from agent.prompts import Prompts
from alerts.parse import Alert, parse_alert
from config.settings import Settings
from core.events import NullSink
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookBullet, PlaybookStore, Triggers, new_id
from store.playbook.feedback import FeedbackStore
from store.playbook.learning import LearningStore
from tests.fakes.model import ModelRequest, ScriptedModel, json_response
from tests.fakes.model import text_response as text
from tools.base import RunContext, Tool, ToolRegistry

ALERTS = Path(__file__).parent / "fixtures" / "alerts"


def load_alert(name: str) -> Alert:
    """A genuine sample alert from tests/fixtures/alerts (see the NOTICE there)."""
    return parse_alert(json.loads((ALERTS / name).read_text()))


async def lookup_ip(ctx: RunContext[None], ip: str) -> dict[str, Any]:
    """Threat intelligence verdict for an IP address."""
    return {"ip": ip, "verdict": "unknown"}


async def query_logs(ctx: RunContext[None], sql: str) -> dict[str, Any]:
    """Run one read-only SQL query over the log tables."""
    return {"rows": [{"n": 3}]}


def registry() -> ToolRegistry:
    reg = ToolRegistry(result_chars=2000)
    reg.add(Tool(lookup_ip, None))
    reg.add(Tool(query_logs, None))
    return reg


CONCLUSION: dict[str, Any] = {
    "verdict": "true_positive",
    "severity": "high",
    "confidence": "medium",
    "summary": "The instance queried a drop-point domain.",
    "key_findings": [{"finding": "DNS query to a drop point", "evidence": "GuardDuty finding"}],
    "uncertainties": [],
    "recommendations": ["Isolate the instance"],
}


# a Curator operation, as the scripted model returns it (invented)
QUALYS_OP: dict[str, Any] = {
    "op": "add",
    "content": "Port scans from 203.0.113.0/24 are the Qualys scanner; they are expected.",
    "kind": "fact",
    "scope": "source:guardduty",
    "triggers": {"sources": ["guardduty"]},
    "reason": "analyst correction",
}
CRITIQUE: dict[str, Any] = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.9},
    "issues": [],
}


def planned_script(
    *, plan_cites: list[str] | None = None, conclusion: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One step (intel lookup), one reflection, one conclusion."""
    plan = {
        "objective": "Decide whether the instance talked to a malicious host",
        "steps": [
            {
                "id": "s1",
                "description": "Look up the remote IP",
                "tools": ["lookup_ip"],
                "expected": "a verdict",
                "depends_on": [],
            }
        ],
        "used_bullets": plan_cites or [],
    }
    return {
        "classifier": [json_response({"needs_plan": True, "reason": "investigate"})],
        "planner": [json_response(plan)],
        "step": lambda _r: text("checked the IP: unknown"),
        "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
        "concluder": [json_response(conclusion or CONCLUSION)],
        "critic": lambda _r: json_response(CRITIQUE),
    }


@dataclass
class Lab:
    db: Database
    settings: Settings
    store: PlaybookStore
    investigations: InvestigationStore

    def engine(self, model: ScriptedModel) -> Engine:
        return Engine(
            gateway=LLMGateway(model, self.settings.gemini),
            registry=registry(),
            history=History(self.db, self.settings.limits),
            investigations=self.investigations,
            settings=self.settings,
            playbook=self.store,
        )

    def learner(self, model: ScriptedModel, review: ReviewPoster | None = None) -> Learner:
        return Learner(
            gateway=LLMGateway(model, self.settings.gemini),
            prompts=Prompts(),
            playbook=self.store,
            investigations=self.investigations,
            feedback=FeedbackStore(self.db),
            runs=LearningStore(self.db),
            settings=self.settings,
            review=review,
        )

    async def investigate(
        self,
        alert: Alert | None,
        script: dict[str, Any] | None = None,
        *,
        text: str = "Investigate this alert",
        conversation_id: str = "slack:CSOC00001:1700000100.000100",
    ) -> tuple[Outcome, ScriptedModel]:
        model = ScriptedModel(script or planned_script())
        request = Request(conversation_id=conversation_id, text=text, alert=alert)
        outcome = await self.engine(model).run(request, NullSink())
        return outcome, model


def prompt_text(request: ModelRequest) -> str:
    """The whole prompt of one call: system instruction and every content part."""
    parts = [p.text or "" for c in request.contents for p in c.parts or []]
    return request.system + "\n" + "\n".join(parts)


def bullet(content: str, **fields: Any) -> PlaybookBullet:
    """An active bullet (override with ``status=...``, ``triggers=Triggers(...)``...)."""
    values: dict[str, Any] = {
        "id": new_id(),
        "content": content,
        "status": "active",
        "triggers": Triggers(),
    }
    values.update(fields)
    return PlaybookBullet(**values)


def insight(key: str, error: str = "none") -> dict[str, str]:
    """One seed-001 Insight as the scripted Reflector returns it."""
    return {
        "reasoning": "The run treated the scan as hostile.",
        "error_identification": error,
        "root_cause_analysis": "socbot did not know the team's scanner range.",
        "correct_approach": "Check the source range against the scanner before escalating.",
        "key_insight": key,
    }


def learner_model(
    insights: list[dict[str, str]],
    operations: list[dict[str, Any]],
    evaluations: list[dict[str, str]] | None = None,
) -> ScriptedModel:
    """A scripted Reflector + Curator."""
    return ScriptedModel(
        {
            "playbook_reflector": [
                json_response({"insights": insights, "bullet_evaluations": evaluations or []})
            ],
            "playbook_curator": [json_response({"operations": operations})],
        }
    )

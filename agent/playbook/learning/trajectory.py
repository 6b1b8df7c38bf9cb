"""What the Reflector reads: an investigation's trajectory and its ground truth.

``Trajectory.from_record`` takes the stored investigation record (``Outcome.record``):
request, alert, objective, steps with their findings, the conclusion and the playbook
bullets it was given and cited. ``GroundTruth`` is what the analysts said: whether
the verdict was right, the verdict they say is right, and their words. All of it is
untrusted text and reaches the model inside data fences.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

FINDINGS_CHARS = 1500


class Trajectory(BaseModel):
    investigation_id: str
    source: str | None = None
    request: str = ""
    alert: dict[str, Any] | None = None
    objective: str | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)
    conclusion: dict[str, Any] | None = None
    bullets: list[dict[str, str]] = Field(default_factory=list)  # loaded: id, kind, content
    used: list[str] = Field(default_factory=list)

    @classmethod
    def from_record(
        cls, investigation_id: str, record: dict[str, Any], bullets: list[dict[str, str]]
    ) -> Trajectory:
        """The trajectory of a stored record; ``bullets`` are the loaded bullets' texts."""
        plan = record.get("plan") or {}
        alert = record.get("alert")
        book = record.get("playbook") or {}
        return cls(
            investigation_id=investigation_id,
            source=alert.get("source") if isinstance(alert, dict) else None,
            request=str(record.get("request") or ""),
            alert=alert if isinstance(alert, dict) else None,
            objective=record.get("objective"),
            steps=[
                {
                    "id": s.get("id"),
                    "description": s.get("description"),
                    "status": s.get("status"),
                    "findings": str(s.get("findings") or "")[:FINDINGS_CHARS],
                }
                for s in plan.get("steps") or []
            ],
            conclusion=record.get("conclusion"),
            bullets=bullets,
            used=list(book.get("used") or []),
        )

    def as_text(self) -> str:
        """The trajectory as indented JSON for a data block."""
        return json.dumps(self.model_dump(exclude={"bullets", "used"}), indent=1, default=str)


class GroundTruth(BaseModel):
    """The analysts' judgement of one investigation's verdict."""

    socbot_verdict: str | None
    correct: bool
    analyst_verdict: str | None = None
    comments: list[str] = Field(default_factory=list)

    def as_text(self) -> str:
        lines = [
            f"socbot's verdict: {self.socbot_verdict}",
            "analysts say the verdict was " + ("RIGHT" if self.correct else "WRONG"),
        ]
        if self.analyst_verdict:
            lines.append(f"the right verdict, per the analysts: {self.analyst_verdict}")
        lines += [f"analyst's words: {c}" for c in self.comments]
        return "\n".join(lines)

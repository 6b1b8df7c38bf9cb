"""What one scenario run leaves behind, and the run folder that keeps them.

A run folder holds ``run.json`` (pack, model, when: ``store.eval_reports.RunMeta``)
and ``results/<id>__r<k>.json``, one ``Attempt`` per scenario and repeat, written as
soon as it ends: a run stopped half-way (Ctrl-C, ``--max-cost``) continues from there,
and a run can be scored again after a scorer change without a model call. Its report
(``report.json``) is written beside them (``store.eval_reports``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from store.eval_reports import RunMeta


class Attempt(BaseModel):
    """One scenario, one repeat: the engine's answer and what it cost."""

    scenario: str
    repeat: int = 0
    status: str = Field(description="concluded, answered, failed, cancelled")
    investigation_id: str | None = None
    conclusion: dict[str, Any] | None = None
    review_findings: int | None = None
    review_verified: int | None = None
    evidence: dict[str, str] = Field(
        default_factory=dict, description="each successful tool call by its ref: args and result"
    )
    error: str | None = None
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # calls on a model without a price: cost_usd is a floor
    latency_s: float = 0.0
    calls: int = 0
    tokens: int = 0
    model: str = ""
    judge_score: float | None = None
    judge_criteria: dict[str, float] | None = None
    judge_notes: str = ""
    judge_cost_usd: float = 0.0


BASELINE = "alert_only"  # a run folder's subfolder of alert-only attempts (--alert-only)


class RunFolder:
    """A run's folder on disk (created on first write)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results = path / "results"

    def meta(self) -> RunMeta | None:
        file = self.path / "run.json"
        return RunMeta.model_validate_json(file.read_text("utf-8")) if file.is_file() else None

    def write_meta(self, meta: RunMeta) -> None:
        self.results.mkdir(parents=True, exist_ok=True)
        _write(self.path / "run.json", meta.model_dump_json(indent=2))

    def attempts(self) -> list[Attempt]:
        if not self.results.is_dir():
            return []
        return [
            Attempt.model_validate_json(f.read_text("utf-8"))
            for f in sorted(self.results.glob("*.json"))
        ]

    def done(self) -> set[tuple[str, int]]:
        return {(a.scenario, a.repeat) for a in self.attempts()}

    def save(self, attempt: Attempt) -> None:
        self.results.mkdir(parents=True, exist_ok=True)
        _write(
            self.results / f"{attempt.scenario}__r{attempt.repeat}.json", attempt.model_dump_json()
        )

    def baseline(self) -> RunFolder:
        """The folder of this run's alert-only attempts."""
        return RunFolder(self.path / BASELINE)

    def clear(self) -> None:
        """Forget every attempt, the alert-only baseline's too."""
        for results in (self.results, self.path / BASELINE / "results"):
            for f in results.glob("*.json") if results.is_dir() else []:
                f.unlink()


def _write(path: Path, text: str) -> None:
    """Write whole or not at all (a run killed mid-write leaves no torn file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


def load_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))

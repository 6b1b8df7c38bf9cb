"""Eval run reports on disk: the format ``socbot eval`` writes and the web pages read.

A run folder (``socbot eval run --out``, default ``var/eval/<pack>-<model>``) holds
``run.json`` (``RunMeta``), ``results/`` (the attempts, ``evals.results``) and, once
scored, ``report.json``: the report ``evals.report`` builds (``EvalReport``), written
by ``socbot eval run`` and ``socbot eval report``; ``socbot eval compare A B`` adds
to B's report its comparison with the baseline A. The format lives on this floor so
that the pages (``bot/web``) read it without importing ``evals``.

``EvalRuns(root)`` lists the run folders under ``root`` that hold a report, and loads
one by its folder name: a plain name, never a path (``..``, ``/`` or a link leading
out of ``root`` is no report).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

REPORT = "report.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}")

log = logging.getLogger(__name__)


class RunMeta(BaseModel):
    """``run.json``: what a run was (the pack, the model, when, the settings it ran with)."""

    pack: str
    model: str
    started: str
    settings: dict[str, Any] = Field(default_factory=dict)


class Gates(BaseModel):
    verdict: bool
    severity: bool | None
    recall: bool | None
    verified: bool | None = None
    length: bool | None = None
    technique: bool | None
    forbidden: bool


class Score(BaseModel):
    """One attempt, scored (what ``--json``'s ``results`` holds per scenario)."""

    id: str
    repeat: int
    category: str
    expected_verdict: str
    accepted_verdicts: list[str] = Field(default_factory=list)
    attack: bool = False
    given_verdict: str | None
    given_severity: str | None
    gates: Gates
    passed: bool
    recall: float | None
    missing: list[str]
    techniques_claimed: list[str]
    technique_precision: float | None = None
    forbidden_made: list[str]
    verified_share: float | None
    answer_chars: int | None = None
    status: str
    error: str | None
    cost_usd: float
    latency_s: float
    calls: int
    tokens: int
    investigation_id: str | None
    unpriced_calls: int = 0
    judge_score: float | None = None
    judge_cost_usd: float = 0.0

    def failed_gates(self) -> list[str]:
        return [name for name, held in self.gates.model_dump().items() if held is False]


class Rates(BaseModel):
    verdict_accuracy: float | None = None
    tp_recall: float | None = None
    fp_rejection: float | None = None
    pass_rate: float | None = None
    severity_accuracy: float | None = None


class Baseline(Rates):
    """A baseline's figures: the alert-only run, or the keyword guess (guessability)."""

    attempts: int = 0
    cost_usd: float = 0.0


class Category(Rates):
    scenarios: int = 0


class Summary(Rates):
    """The ``summary`` object (``evals.aggregate.summary``)."""

    scenarios: int = 0
    attempts: int = 0
    repeats: int = 0
    cost_usd: float = 0.0
    cost_per_scenario_usd: float | None = None
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    model_calls: int = 0
    tokens: int = 0
    failed_runs: int = 0
    judge_cost_usd: float = 0.0
    judge_score: float | None = None
    pass_hat_k: float | None = None
    verdict_hat_k: float | None = None
    per_category: dict[str, Category] = Field(default_factory=dict)
    intervals: dict[str, list[float] | None] = Field(default_factory=dict)
    guessability: Baseline | None = None
    alert_only: Baseline | None = None


class Comparison(BaseModel):
    """This run (B) against its baseline (A), paired by scenario (``evals.compare``)."""

    a: dict[str, Any] = Field(default_factory=dict)
    paired_scenarios: int = 0
    verdict_accuracy_a: float | None = None
    verdict_accuracy_b: float | None = None
    accuracy_diff: float | None = None
    accuracy_diff_interval: list[float] | None = None
    pass_rate_diff: float | None = None
    guessability: dict[str, Any] | None = None
    alert_only_a: dict[str, Any] | None = None
    alert_only_b: dict[str, Any] | None = None
    regressions: list[str] = Field(default_factory=list)
    improvements: list[str] = Field(default_factory=list)
    worse: bool = False
    better: bool = False


class EvalReport(BaseModel):
    """``report.json``."""

    schema_version: int = Field(1, alias="schema")
    run: RunMeta | None = None
    summary: Summary
    results: list[Score] = Field(default_factory=list)
    baseline: Comparison | None = None


@dataclass(frozen=True)
class ListedRun:
    name: str
    report: EvalReport


class EvalRuns:
    """The run folders under ``root`` (e.g. ``var/eval``) that hold a report."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def listed(self) -> list[ListedRun]:
        """Every readable report, newest run first (a folder without one is left out)."""
        if not self.root.is_dir():
            return []
        found = [
            ListedRun(child.name, report)
            for child in self.root.iterdir()
            if (report := self.load(child.name)) is not None
        ]
        return sorted(found, key=lambda r: r.report.run.started if r.report.run else "")[::-1]

    def load(self, name: str) -> EvalReport | None:
        """The report of the run folder ``name`` (a name, not a path), or ``None``."""
        if not NAME.fullmatch(name):
            return None
        file = self.root / name / REPORT
        try:
            if not file.resolve().is_relative_to(self.root.resolve()) or not file.is_file():
                return None
            return EvalReport.model_validate_json(file.read_bytes())
        except (OSError, ValidationError) as error:
            log.warning("eval report %s unreadable: %s", name, type(error).__name__)
            return None


def write_report(folder: Path, report: dict[str, Any]) -> EvalReport:
    """Check ``report`` against the format and write it as the folder's ``report.json``
    (whole or not at all)."""
    checked = EvalReport.model_validate(report)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{REPORT}.tmp"
    tmp.write_text(checked.model_dump_json(by_alias=True, indent=2), "utf-8")
    os.replace(tmp, folder / REPORT)
    return checked

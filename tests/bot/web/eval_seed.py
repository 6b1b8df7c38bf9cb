"""An eval run folder with a report, for the Evals pages' tests (invented figures, labelled
so: the shape ``socbot eval run`` writes, with hostile strings where a scenario's text goes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.eval_reports import EvalReport, write_report

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def score(sid: str, *, passed: bool, given: str, error: str | None = None) -> dict[str, Any]:
    return {
        "id": sid,
        "repeat": 0,
        "category": "identity",
        "expected_verdict": "true_positive",
        "given_verdict": given,
        "given_severity": "high",
        "gates": {
            "verdict": given == "true_positive",
            "severity": True,
            "recall": passed,
            "technique": None,
            "forbidden": True,
        },
        "passed": passed,
        "recall": 1.0 if passed else 0.5,
        "missing": [] if passed else [HOSTILE],
        "techniques_claimed": ["T1110.003"],
        "forbidden_made": [],
        "verified_share": 1.0,
        "status": "concluded",
        "error": error,
        "cost_usd": 0.0123,
        "latency_s": 12.5,
        "calls": 7,
        "tokens": 15000,
        "investigation_id": "inv-1",
    }


def write_run(root: Path, name: str, *, baseline: bool = False) -> EvalReport:
    """A run folder ``root/name`` holding a report of two scenarios (one hostile)."""
    report: dict[str, Any] = {
        "schema": 1,
        "run": {"pack": "core", "model": f"gemini-2.5-flash {HOSTILE}", "started": "2026-11-25"},
        "summary": {
            "scenarios": 2,
            "attempts": 2,
            "repeats": 1,
            "verdict_accuracy": 0.5,
            "tp_recall": 0.5,
            "fp_rejection": None,
            "pass_rate": 0.5,
            "cost_usd": 0.0246,
            "cost_per_scenario_usd": 0.0123,
            "latency_p50_s": 12.5,
            "latency_p95_s": 12.5,
            "model_calls": 14,
            "tokens": 30000,
            "failed_runs": 0,
            "per_category": {HOSTILE: {"scenarios": 2, "verdict_accuracy": 0.5}},
            "intervals": {"verdict_accuracy": [0.0, 1.0], "pass_rate": None},
        },
        "results": [
            score("okta-password-spray", passed=True, given="true_positive"),
            score(f"x-{HOSTILE}", passed=False, given="benign", error=HOSTILE),
        ],
    }
    if baseline:
        report["baseline"] = {
            "a": {"model": "gemini-2.5-flash-lite"},
            "paired_scenarios": 2,
            "verdict_accuracy_a": 1.0,
            "verdict_accuracy_b": 0.5,
            "accuracy_diff": -0.5,
            "accuracy_diff_interval": [-1.0, 0.0],
            "regressions": [f"x-{HOSTILE}"],
            "improvements": [],
            "worse": False,
            "better": False,
        }
    return write_report(root / name, report)

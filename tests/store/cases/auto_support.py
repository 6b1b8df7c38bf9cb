"""Cases on alerts a policy rule let through, with or without its ``auto_resolve``."""

from __future__ import annotations

from random import Random
from typing import Any

from alerts.policy.auto_resolve import record
from alerts.policy.rules import Rule
from store.cases.auto import AutoResolution
from store.cases.opening import open_for_run
from store.db.engine import Database
from store.schema import CaseRow
from store.triage.policy import PolicyStore
from tests.store.cases.case_support import concluded


def a_rule(rule_id: str = "gd-noise", **body: Any) -> Rule:
    return Rule.model_validate({"id": rule_id, "action": "investigate", **body})


async def let_through(
    db: Database, alert_id: str, rule: Rule, outcome: str = "investigated"
) -> None:
    """The policy's record: ``rule`` decided ``alert_id`` (let it be investigated)."""
    await PolicyStore(db).record(
        alert_id,
        rule.id,
        "policy/test.toml",
        "guardduty",
        outcome,
        mode=rule.mode,
        model=rule.model,
        auto_resolve=record(rule),
    )


async def concluded_case(
    db: Database,
    n: int,
    rule: Rule | None,
    *,
    verdict: str = "false_positive",
    confidence: str = "high",
    severity: str = "low",
) -> CaseRow:
    """Alert ``alert-n`` let through by ``rule`` (None: no rule), its run concluded, its case."""
    alert_id = f"alert-{n}"
    if rule is not None:
        await let_through(db, alert_id, rule)
    run_id = f"run-{n}"
    await concluded(
        db,
        run_id,
        verdict=verdict,
        confidence=confidence,
        severity=severity,
        alert_id=alert_id,
        thread_ts=f"1700000000.{n:06d}",
    )
    case = await open_for_run(db, run_id, model="gemini-test", fmt="guardduty")
    assert case is not None
    return case


def resolver(db: Database, share: float = 0.0, seed: int | None = 7) -> AutoResolution:
    return AutoResolution(db, share, Random(seed) if seed is not None else None)


__all__ = ["a_rule", "concluded_case", "let_through", "resolver"]

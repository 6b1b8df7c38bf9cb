"""The scorer's normalisation, gates and figures, on hand-made attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.aggregate import percentile, summary
from evals.normalise import contains, normalise
from evals.results import Attempt
from evals.scenario import Scenario, Truth
from evals.score import score
from evals.techniques import claimed_techniques, technique_match


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("Traffic to 185.220.101[.]42 on 443", "185.220.101.42", True),
        ("see hxxps://evil[.]example/x", "https://evil.example/x", True),
        ("mail from attacker[@]evil(.)com", "attacker@evil.com", True),
        ("host 2001:DB8:0:0:0:0:0:1 scanned", "2001:db8::1", True),
        ("from ::ffff:192.0.2.7", "192.0.2.7", True),
        ("User J.DOE@Example.com signed in", "j.doe@example.com", True),
        ("1,204 failed logins", "1204", True),
        ("120 failed logins", "12", False),
        ("10.0.0.15 and more", "10.0.0.1", False),
        ("C:\\ProgramData\\SAM copied", "c:\\programdata\\sam", True),
    ],
)
def test_values_are_found_in_any_common_form(text: str, value: str, found: bool) -> None:
    assert contains(normalise(text), value) is found


def scenario(**truth: Any) -> Scenario:
    base: dict[str, Any] = {"verdict": "true_positive", "severity": ("high", "critical")}
    return Scenario(
        id="s1",
        title="t",
        category="cloud",
        origin="test (invented)",
        licence="-",
        synthetic=True,
        truth=Truth(**{**base, **truth}),
        folder=Path("."),
    )


def attempt(**conclusion: Any) -> Attempt:
    base = {"verdict": "true_positive", "severity": "high", "summary": "", "key_findings": []}
    return Attempt(
        scenario="s1",
        status="concluded",
        conclusion={**base, **conclusion},
        review_findings=4,
        review_verified=3,
        cost_usd=0.01,
        latency_s=2.0,
    )


def test_every_gate_holds_for_a_right_answer() -> None:
    s = scenario(
        must_establish=["185.220.101.42", "alice"], techniques=["T1110"], forbidden=["ransomware"]
    )
    a = attempt(
        summary="Spray from 185.220.101[.]42.",
        key_findings=[{"finding": "ALICE signed in", "evidence": "3 rows"}],
        techniques=[
            {"id": "t1110.003", "name": "Password Spraying", "tactic": "credential-access"}
        ],
    )
    result = score(s, a)
    assert result.passed and result.recall == 1.0 and result.verified_share == 0.75
    assert result.techniques_claimed == ["T1110.003"]


@pytest.mark.parametrize(
    ("truth", "conclusion", "failed"),
    [
        ({}, {"verdict": "false_positive"}, "verdict"),
        ({}, {"severity": "low"}, "severity"),
        ({"must_establish": ["alice", "bob"]}, {"summary": "alice only"}, "recall"),
        ({"techniques": ["T1110.003"]}, {}, "technique"),  # none claimed
        ({"techniques": ["T1110.003"]}, {"techniques": [{"id": "T1110.001"}]}, "technique"),
        ({"forbidden": ["ransomware"]}, {"summary": "Looks like Ransomware."}, "forbidden"),
    ],
)
def test_each_gate_fails_alone(
    truth: dict[str, Any], conclusion: dict[str, Any], failed: str
) -> None:
    result = score(scenario(**truth), attempt(**conclusion))
    gates = result.gates.model_dump()
    assert gates.pop(failed) is False
    assert all(g is not False for g in gates.values()) and not result.passed


def test_accepted_alternative_verdict_and_a_lower_recall_bar() -> None:
    s = scenario(
        verdict="benign",
        accept=["false_positive"],
        severity=("info", "low"),
        must_establish=["a", "b"],
        min_recall=0.5,
    )
    result = score(s, attempt(verdict="false_positive", severity="info", summary="a"))
    assert result.passed and result.recall == 0.5


def test_failed_run_fails_every_verdict_gate() -> None:
    result = score(scenario(), Attempt(scenario="s1", status="failed", error="model down"))
    assert not result.passed and result.given_verdict is None and result.gates.severity is False


def test_techniques_match_parent_and_sub_technique_only() -> None:
    assert technique_match(["T1110"], ["T1110.003"]) and technique_match(["T1110.003"], ["T1110"])
    assert not technique_match(["T1110.003"], ["T1110.001"])
    assert claimed_techniques({"verdict": "benign"}) == []


def test_summary_with_repeats_gives_pass_hat_k_and_intervals() -> None:
    s = scenario()
    right, wrong = attempt(), attempt(verdict="benign")
    scores = []
    for sid, outcomes in (("a", [right, right]), ("b", [right, wrong]), ("c", [wrong, wrong])):
        for k, a in enumerate(outcomes):
            scored = score(s, a.model_copy(update={"repeat": k}))
            scores.append(scored.model_copy(update={"id": sid}))
    result = summary(scores)
    assert result["scenarios"] == 3 and result["repeats"] == 2
    assert result["verdict_accuracy"] == 0.5 and result["pass_hat_k"] == round(1 / 3, 4)
    low, high = result["intervals"]["verdict_accuracy"]
    assert 0 <= low <= 0.5 <= high <= 1
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5


@pytest.mark.parametrize(
    "conclusion",
    [
        {"key_findings": [{"finding": "Ransomware staged on the host", "evidence": "s1#1"}]},
        {"key_findings": [{"finding": "a file was staged", "evidence": "ransomware note"}]},
        {"summary": "Ransomware.", "key_findings": [{"finding": "x", "evidence": "s1#1"}]},
    ],
    ids=["in-a-finding", "in-its-evidence", "in-the-summary"],
)
def test_a_forbidden_claim_anywhere_in_the_conclusion_fails_the_gate(
    conclusion: dict[str, Any],
) -> None:
    result = score(scenario(forbidden=["ransomware", "wiper"]), attempt(**conclusion))
    assert (result.gates.forbidden, result.forbidden_made, result.passed) == (
        False,
        ["ransomware"],
        False,
    )
    assert result.gates.verdict is True and result.gates.severity is True

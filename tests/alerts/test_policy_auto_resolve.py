"""A policy rule's ``auto_resolve`` (alerts/policy/rules.py) and the gate deciding whether
socbot may close its own conclusion (alerts/policy/auto_resolve.py): each refusal exact."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alerts.policy.auto_resolve import Asked, read, record, refusal
from alerts.policy.load import Loaded, parse_rules
from alerts.policy.rules import AutoResolve, Rule

DEFAULTS = AutoResolve()


def rule(**body: Any) -> Rule:
    return Rule.model_validate({"id": "gd-noise", "action": "investigate", **body})


def test_off_unless_a_rule_says_so() -> None:
    assert rule().auto_resolve is None
    assert rule(auto_resolve=False).auto_resolve is None
    assert record(rule()) is None


def test_true_is_the_documented_defaults() -> None:
    option = rule(auto_resolve=True).auto_resolve
    assert option == DEFAULTS
    assert (option.verdicts, option.confidence, option.audit_share) == (
        ["false_positive", "benign"],
        "high",
        None,
    )


@pytest.mark.parametrize(
    "option",
    [
        {"verdicts": ["true_positive"]},
        {"verdicts": ["inconclusive"]},
        {"verdicts": []},
        {"confidence": "certain"},
        {"audit_share": 1.5},
        {"audit_share": -0.1},
        {"share": 0.2},  # unknown key
    ],
)
def test_what_a_rule_may_not_ask(option: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        rule(auto_resolve=option)


def test_a_rule_file_with_auto_resolve_loads() -> None:
    out = Loaded()
    text = (
        '[[rule]]\nid = "gd"\naction = "route"\nchannel = "C0NOISE1"\n'
        '[rule.auto_resolve]\nconfidence = "medium"\nverdicts = ["benign"]\naudit_share = 0.25\n'
    )
    parse_rules(text, "policy/a.toml", out, set())
    assert out.errors == []
    [compiled] = out.rules
    assert compiled.rule.auto_resolve == AutoResolve(
        verdicts=["benign"], confidence="medium", audit_share=0.25
    )


def test_record_and_read_round_trip() -> None:
    kept = record(rule(auto_resolve={"confidence": "medium"}, allow_critical=True))
    assert kept == {
        "verdicts": ["false_positive", "benign"],
        "confidence": "medium",
        "audit_share": None,
        "allow_critical": True,
    }
    assert read(kept) == Asked(AutoResolve(confidence="medium"), allow_critical=True)
    assert read(record(rule(auto_resolve=True))) == Asked(DEFAULTS, allow_critical=False)


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "yes",
        ["false_positive"],
        {"verdicts": ["true_positive"]},
        {"confidence": "extreme"},
        {"audit_share": 2},
    ],
)
def test_a_record_that_does_not_parse_asks_for_nothing(stored: object) -> None:
    assert read(stored) is None


def test_allow_critical_must_be_true_itself() -> None:
    assert read({"allow_critical": "yes"}) == Asked(DEFAULTS, allow_critical=False)
    assert read({"allow_critical": 1}) == Asked(DEFAULTS, allow_critical=False)


def test_the_share_is_the_rules_own_else_the_setting() -> None:
    assert Asked(DEFAULTS).share(0.1) == 0.1
    assert Asked(AutoResolve(audit_share=0.0)).share(0.1) == 0.0
    assert Asked(AutoResolve(audit_share=0.5)).share(0.1) == 0.5


HIGH = Asked(DEFAULTS)
MEDIUM = Asked(AutoResolve(confidence="medium"))
LOW = Asked(AutoResolve(confidence="low"))
BENIGN_ONLY = Asked(AutoResolve(verdicts=["benign"]))


@pytest.mark.parametrize(
    ("asked", "verdict", "confidence", "severities", "says"),
    [
        (None, "false_positive", "high", (), "its rule does not auto-resolve"),
        (HIGH, "true_positive", "high", (), "verdict 'true_positive' is not one its rule closes"),
        (HIGH, "inconclusive", "high", (), "verdict 'inconclusive' is not one its rule closes"),
        (HIGH, None, "high", (), "verdict None is not one its rule closes"),
        (HIGH, "FALSE_POSITIVE", "high", (), "verdict 'FALSE_POSITIVE' is not one its rule closes"),
        (
            BENIGN_ONLY,
            "false_positive",
            "high",
            (),
            "verdict 'false_positive' is not one its rule closes",
        ),
        (HIGH, "benign", "medium", (), "confidence 'medium' is below 'high'"),
        (HIGH, "benign", "low", (), "confidence 'low' is below 'high'"),
        (MEDIUM, "benign", "low", (), "confidence 'low' is below 'medium'"),
        (HIGH, "benign", None, (), "confidence None is below 'high'"),
        (HIGH, "benign", "", (), "confidence '' is below 'high'"),
        (LOW, "benign", "certain", (), "confidence 'certain' is below 'low'"),
        (LOW, "benign", "HIGH", (), "confidence 'HIGH' is below 'low'"),
        (
            HIGH,
            "benign",
            "high",
            ("low", "critical"),
            "the alert is critical and its rule does not set allow_critical",
        ),
        (
            HIGH,
            "benign",
            "high",
            (" Critical ", None),
            "the alert is critical and its rule does not set allow_critical",
        ),
    ],
)
def test_the_gate_refuses(
    asked: Asked | None,
    verdict: str | None,
    confidence: str | None,
    severities: tuple[str | None, ...],
    says: str,
) -> None:
    assert refusal(asked, verdict, confidence, severities) == says


@pytest.mark.parametrize(
    ("asked", "verdict", "confidence", "severities"),
    [
        (HIGH, "false_positive", "high", ("low", None)),
        (HIGH, "benign", "high", ("high", "medium")),
        (MEDIUM, "benign", "medium", ()),
        (MEDIUM, "false_positive", "high", ()),
        (LOW, "benign", "low", ()),
        (BENIGN_ONLY, "benign", "high", ()),
        (Asked(DEFAULTS, allow_critical=True), "benign", "high", ("critical",)),
    ],
)
def test_the_gate_lets_through(
    asked: Asked, verdict: str, confidence: str, severities: tuple[str | None, ...]
) -> None:
    assert refusal(asked, verdict, confidence, severities) is None


def test_a_quiet_rule_records_nothing_even_if_built_around_validation() -> None:
    quiet = Rule.model_construct(id="q", action="ignore", auto_resolve=DEFAULTS)
    assert record(quiet) is None

"""The policy's matching, condition by condition at its edges, over the GuardDuty sample
(tests/fixtures/alerts/NOTICE; event time Monday 2025-01-20 14:00 UTC): what the view
reads of an alert, time windows at their first and last minute, typed field values,
case and line breaks in patterns, addresses from entities and indicators, and what
each condition says in ``socbot policy test``. Rule values are invented for the tests."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from alerts.model import Alert, Entity, Indicator
from alerts.parse import parse_alert
from alerts.policy.decide import CompiledRule, Decision, RuleSet, Trial, rule_set
from alerts.policy.match import AlertView, Seen, compile_match
from alerts.policy.rules import Match, Rule

SAMPLE = Path(__file__).parents[1] / "fixtures" / "alerts" / "warren-guardduty.json"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def sample(**update: Any) -> Alert:
    found = parse_alert(json.loads(SAMPLE.read_text()), None)
    return found.model_copy(update=update)


def holds(match: dict[str, Any], alert: Alert | None = None) -> bool:
    view = AlertView.of(alert or sample(), NOW)
    return all(check.test(view) for check in compile_match(Match(**match)))


def says(match: dict[str, Any]) -> list[str]:
    return [check.says for check in compile_match(Match(**match))]


def test_the_view_of_an_alert_with_gaps() -> None:
    bare = sample(format=None, description=None, severity=None, event_time=None)
    view = AlertView.of(bare, NOW)
    assert (view.source, view.format, view.severity, view.when) == ("guardduty", "", "", NOW)
    assert view.text == bare.title + "\n"
    assert view.entities["ip"] == [
        Seen("ip", "172.31.24.50", "target"),
        Seen("ip", "198.51.100.23", "target"),
    ]
    assert holds({"format": ""}, bare) and not holds({"text": "that is associated"}, bare)


def test_addresses_come_from_ip_entities_and_ip_indicators_past_a_bad_one() -> None:
    ip = Indicator(kind="ipv4", value="203.0.113.9")
    only_indicator = sample(entities=[], indicators=[ip])
    assert holds({"ip": "203.0.113.0/24"}, only_indicator)
    domain_only = sample(entities=[], indicators=[Indicator(kind="domain", value="203.0.113.9")])
    assert not holds({"ip": "203.0.113.0/24"}, domain_only)
    garbled = sample(
        entities=[Entity(kind="ip", value="not-an-ip"), Entity(kind="ip", value="203.0.113.9")],
        indicators=[],
    )
    assert AlertView.of(garbled, NOW).addresses == [(ip_of("203.0.113.9"), None)]
    assert holds({"ip": "203.0.113.0/24"}, garbled)


def ip_of(text: str) -> Any:
    import ipaddress

    return ipaddress.ip_address(text)


def test_a_network_written_with_host_bits_is_its_network() -> None:
    assert holds({"ip": "198.51.100.99/24"})  # 198.51.100.0/24
    assert not holds({"ip": "198.51.101.99/24"})


def test_entities_by_value_role_and_kind() -> None:
    assert holds({"entity": [{"kind": "ip", "value": "198.51.100.*"}]})  # a glob, no cidr
    assert not holds({"entity": [{"kind": "ip", "value": "203.0.113.*"}]})
    assert not holds({"user": "*"})  # no user entity at all: no match, no error
    assert holds({"entity": [{"kind": "resource", "role": "TARGET"}]})
    no_role = sample(entities=[Entity(kind="user", value="alice")])
    assert holds({"user": "ALICE"}, no_role)
    assert not holds({"entity": [{"kind": "user", "role": "actor"}]}, no_role)


def test_patterns_ignore_case_and_span_lines() -> None:
    assert holds({"title": "ec2 INSTANCE *"})
    assert holds({"text": "KNOWN COMMAND AND CONTROL"})
    two_lines = sample(title="Port probe\non 22")
    assert holds({"title": "port probe*22"}, two_lines)
    assert holds({"text": "re:PROBE.ON"}, two_lines)


@pytest.mark.parametrize(
    ("want", "expected"),
    [
        (8, True),
        (5, False),  # another number of the same type
        (8.0, False),  # the same number, another type: not this rule's value
        (True, False),
        ("8", False),  # a string pattern never matches a number
        ([5, 8], True),
    ],
)
def test_field_values_match_by_value_and_type(want: Any, expected: bool) -> None:
    assert holds({"fields": {"detail.severity": want}}) is expected


def test_a_field_that_is_a_list_matches_when_any_item_does() -> None:
    path = "detail.resource.instanceDetails.networkInterfaces[].publicIp"
    assert holds({"fields": {path: "198.51.100.*"}})
    assert not holds({"fields": {path: "10.*"}})
    assert not holds({"fields": {"detail.missing": 8}})  # nothing there: not 8, no error


# (hours, days, event time (UTC unless given), matches?)
WINDOWS: list[tuple[str | None, list[str] | None, datetime, bool]] = [
    ("09:00-17:00", None, datetime(2025, 1, 20, 8, 59, tzinfo=UTC), False),
    ("09:00-17:00", None, datetime(2025, 1, 20, 9, 0, tzinfo=UTC), True),
    ("09:30-17:00", None, datetime(2025, 1, 20, 9, 29, tzinfo=UTC), False),
    ("09:30-17:00", None, datetime(2025, 1, 20, 9, 30, tzinfo=UTC), True),
    ("09:00-16:45", None, datetime(2025, 1, 20, 16, 44, tzinfo=UTC), True),
    ("09:00-16:45", None, datetime(2025, 1, 20, 16, 45, tzinfo=UTC), False),
    ("09:00-17:00", ["tue"], datetime(2025, 1, 20, 10, 0, tzinfo=UTC), False),
    ("09:00-09:00", None, datetime(2025, 1, 20, 9, 0, tzinfo=UTC), False),  # empty
    ("09:00-09:00", None, datetime(2025, 1, 20, 3, 0, tzinfo=UTC), False),
    ("00:00-24:00", None, datetime(2025, 1, 20, 23, 59, tzinfo=UTC), True),
    ("23:59-24:00", None, datetime(2025, 1, 20, 23, 59, tzinfo=UTC), True),
    # 22:30-06:15 on Mondays: Monday 22:30 up to Tuesday 06:14
    ("22:30-06:15", ["mon"], datetime(2025, 1, 20, 22, 29, tzinfo=UTC), False),
    ("22:30-06:15", ["mon"], datetime(2025, 1, 20, 22, 30, tzinfo=UTC), True),
    ("22:30-06:15", ["mon"], datetime(2025, 1, 21, 6, 14, tzinfo=UTC), True),
    ("22:30-06:15", ["mon"], datetime(2025, 1, 21, 6, 15, tzinfo=UTC), False),
    ("22:30-06:15", ["mon"], datetime(2025, 1, 20, 6, 0, tzinfo=UTC), False),  # Sunday's
    ("22:30-06:15", ["sun"], datetime(2025, 1, 20, 6, 0, tzinfo=UTC), True),
    # the alert's own offset is read in UTC: 01:00+02:00 is Sunday 23:00 UTC
    (
        "22:30-06:15",
        ["sun"],
        datetime(2025, 1, 20, 1, 0, tzinfo=timezone(timedelta(hours=2))),
        True,
    ),
    (None, ["mon"], datetime(2025, 1, 20, 1, 0, tzinfo=timezone(timedelta(hours=2))), False),
    ("13:00-14:00", None, datetime(2025, 1, 20, 15, 30, tzinfo=timezone(timedelta(hours=2))), True),
]


@pytest.mark.parametrize(("hours", "days", "when", "expected"), WINDOWS)
def test_windows_at_their_edges(
    hours: str | None, days: list[str] | None, when: datetime, expected: bool
) -> None:
    window = {k: v for k, v in (("hours", hours), ("days", days)) if v is not None}
    assert holds({"window": window}, sample(event_time=when)) is expected


@pytest.mark.parametrize(
    ("hours", "error"),
    [
        ("9:00-17:00", "hours must be HH:MM-HH:MM, got '9:00-17:00'"),
        ("24:00-06:00", "hours out of range: '24:00-06:00'"),
        ("22:00-25:00", "hours out of range: '22:00-25:00'"),
        ("09:60-17:00", "hours out of range: '09:60-17:00'"),
        ("09:00-17:60", "hours out of range: '09:00-17:60'"),
    ],
)
def test_a_bad_window_is_refused_with_why(hours: str, error: str) -> None:
    with pytest.raises(ValueError) as info:
        compile_match(Match(window={"hours": hours}))
    assert str(info.value) == error


def test_the_last_minutes_of_the_clock_are_valid_hours() -> None:
    for hours in ("23:59-24:00", "00:59-23:59", "23:00-00:00"):
        assert len(compile_match(Match(window={"hours": hours}))) == 1


def test_each_condition_says_what_it_checks() -> None:
    match = {
        "source": ["GuardDuty"],
        "format": "GuardDuty",
        "severity": "high",
        "title": "EC2 *",
        "text": ["command", "control"],
        "ip": "198.51.100.0/24",
        "user": "svc-*",
        "entity": [{"kind": "ip", "cidr": "10.0.0.0/8", "role": "source"}],
        "fields": {"detail.severity": [8, "high"]},
        "window": {"hours": "09:00-17:00", "days": ["mon"]},
    }
    assert says(match) == [
        "source in ['guardduty']",
        "format in ['guardduty']",
        "severity in ['high']",
        "title like ['EC2 *']",
        "title or description contains ['command', 'control']",
        "ip entity in ['198.51.100.0/24']",
        "user entity like ['svc-*']",
        "ip entity in ['10.0.0.0/8'] as ['source']",
        "detail.severity is [8, 'high']",
        "at 09:00-17:00 UTC on ['mon']",
    ]
    assert says({"window": {}}) == ["at any time UTC on any day"]


def compiled(origin: str, **rule: Any) -> CompiledRule:
    return CompiledRule.of(Rule(**rule), origin)


def test_the_decision_carries_the_rule_its_origin_and_why() -> None:
    rules = RuleSet(
        [
            compiled("policy/10-a.toml", id="a", action="investigate", match={"source": "okta"}),
            compiled("slack", id="b", action="route", channel="C0SOC001", match={"title": "EC2*"}),
            compiled("policy/20-c.toml", id="c", action="investigate"),
        ]
    )
    decision = rules.decide(sample(), NOW)
    assert decision == Decision(rules.rules[1].rule, "slack", ("title like ['EC2*']",))
    everything = RuleSet([rules.rules[2]])
    assert everything.decide(sample(), NOW).because == ("matches every alert",)
    assert rules.trials(sample(), NOW) == [
        Trial("a", "policy/10-a.toml", False, "not: source in ['okta']"),
        Trial("b", "slack", True, "title like ['EC2*']"),
        Trial("c", "policy/20-c.toml", True, "matches every alert"),
    ]


def test_an_expiry_is_over_at_its_instant_and_names_the_rule_and_origin() -> None:
    rule = {
        "id": "quiet-ec2",
        "action": "suppress",
        "expires": NOW,
        "reason": "maintenance",
        "owner": "U0ALICE1",
        "match": {"title": "EC2*", "source": "guardduty"},
    }
    rules = RuleSet([compiled("slack", **rule)])
    assert rules.decide(sample(), NOW).rule is None
    assert rules.trials(sample(), NOW) == [
        Trial("quiet-ec2", "slack", False, "expired at 2026-11-25T12:00:00+00:00")
    ]
    before = NOW - timedelta(microseconds=1)
    assert (
        rules.decide(sample(), before).because
        == (
            "title like ['EC2*']",
            "source in ['guardduty']",
        )[::-1]
    )
    missed = RuleSet([compiled("slack", **{**rule, "match": {"source": "okta"}})])
    assert missed.trials(sample(), NOW) == [  # the missing condition is said first
        Trial("quiet-ec2", "slack", False, "not: source in ['okta']")
    ]
    assert rules.trials(sample(), before) == [
        Trial("quiet-ec2", "slack", True, "source in ['guardduty']; title like ['EC2*']")
    ]


@pytest.fixture
def machine_in_new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("machine_in_new_york")
def test_windows_are_utc_whatever_the_machines_zone() -> None:
    at_14_utc = sample()  # Monday 14:00 UTC is 09:00 in New York
    assert holds({"window": {"hours": "14:00-15:00", "days": ["mon"]}}, at_14_utc)
    assert not holds({"window": {"hours": "09:00-10:00"}}, at_14_utc)


def test_slack_suppressions_then_files_in_order() -> None:
    slack = [compiled("slack", id="s1", action="investigate", match={"source": "okta"})]
    files = [
        compiled("policy/10.toml", id="f1", action="investigate"),
        compiled("policy/20.toml", id="f2", action="ignore"),
    ]
    rules = rule_set([slack, files])
    assert [r.id for r in rules.rules] == ["s1", "f1", "f2"]
    assert rules.decide(sample(), NOW).rule_id == "f1"

"""Smoke run of bench/bench_policy.py: its generated rules load without an error and
lead every genuine fixture past all of them to the catch-all (timings not asserted)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alerts.parse import parse_alert
from bench.bench_policy import FIXTURES, policy


def test_generated_policy_loads_and_no_rule_but_the_last_matches_a_fixture() -> None:
    rule_set, _ = policy(60)
    assert len(rule_set) == 60
    for path in sorted(FIXTURES.glob("*.json")):
        alert = parse_alert(json.loads(path.read_text()), None)
        trials = rule_set.trials(alert, datetime.now(UTC))
        assert [t.rule_id for t in trials if t.matched] == ["catch-all"], path.name

"""The alert policy's speed (issue 22): time to decide one alert with 500 rules.

::

    .venv/bin/python -m bench.bench_policy                 # 500 rules, 200 rounds
    .venv/bin/python -m bench.bench_policy --rules 2000 --rounds 50

The rules are generated as TOML and loaded the way ``policy.dir`` is
(``alerts.policy.load``): a mix of what teams write — source + title glob, source +
CIDR, user and host globs, title regexes without a source, entity roles, JMESPath
field tests over the raw payload, time windows — none of which matches the alerts,
so every alert is tried against all of them (the worst case: the verdict is "no rule
matches"), then a last catch-all rule. The alerts are the genuine payloads of
``tests/fixtures/alerts`` parsed by the catalogue. Reported: per-alert time (median,
p99, max) over every alert and round, and the one-off load time of the rule files.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime
from pathlib import Path

from alerts.parse import parse_alert
from alerts.policy.decide import RuleSet
from alerts.policy.load import Loaded, parse_rules
from bench.common import percentile, print_table, write_json

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "alerts"
SOURCES = ("guardduty", "scc", "okta", "falco", "wazuh", "crowdstrike", "sentinel", "generic")


def rule_text(n: int) -> str:
    """Rule ``n`` of the generated policy (matches none of the fixtures)."""
    source = SOURCES[n % len(SOURCES)]
    kind = n % 10
    head = f'[[rule]]\nid = "r{n}"\naction = "ignore"\n[rule.match]\n'
    body = {
        0: f'source = "{source}"\ntitle = "Recon:EC2/Port* {n}"',
        1: f'source = "{source}"\nip = ["10.{n % 250}.0.0/16", "192.0.2.{n % 250}/32"]',
        2: f'user = "svc-ci-{n}-*"',
        3: f'host = "scanner-{n}-*"',
        4: f'title = "re:.*nightly job {n} (failed|retried).*"',
        5: f'source = ["{source}", "x{n}"]\nseverity = ["info", "low"]\ntext = "canary-{n}"',
        6: f'entity = [{{kind = "ip", cidr = "203.0.113.{n % 250}/32", role = "source"}}]',
        7: f'fields = {{"detail.type" = "Custom:Rule{n}/*"}}',
        8: f'resource = "arn:aws:iam::{n:012d}:role/*"',
        9: f'source = "{source}"\ntitle = "*maintenance*"\n'
        f'window = {{hours = "03:00-03:{(n % 50) + 1:02d}", days = ["sun"]}}',
    }[kind]
    return head + body + "\n"


def policy(rules: int) -> tuple[RuleSet, float]:
    text = "\n".join(rule_text(n) for n in range(rules - 1))
    text += '\n[[rule]]\nid = "catch-all"\naction = "investigate"\n'
    started = time.perf_counter()
    out = Loaded()
    parse_rules(text, "bench.toml", out, set())
    elapsed = time.perf_counter() - started
    assert not out.errors, out.errors[:3]
    return RuleSet(out.rules), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    rule_set, load_s = policy(args.rules)
    alerts = [parse_alert(json.loads(p.read_text()), None) for p in sorted(FIXTURES.glob("*.json"))]
    now = datetime.now(UTC)
    for alert in alerts:  # warm up, and check: every alert reaches the catch-all
        assert rule_set.decide(alert, now).rule_id == "catch-all", alert.source
    times: list[float] = []
    for _ in range(args.rounds):
        for alert in alerts:
            started = time.perf_counter()
            rule_set.decide(alert, now)
            times.append(time.perf_counter() - started)
    times.sort()
    result = {
        "rules": len(rule_set),
        "alerts": len(alerts),
        "decisions": len(times),
        "load_ms": round(load_s * 1000, 1),
        "median_ms": round(percentile(times, 0.5) * 1000, 3),
        "p99_ms": round(percentile(times, 0.99) * 1000, 3),
        "max_ms": round(times[-1] * 1000, 3),
    }
    print_table("alert policy: one decision", [list(result.values())], list(result))
    write_json("policy", result)


if __name__ == "__main__":
    main()

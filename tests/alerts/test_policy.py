"""The alert policy over genuine payloads (tests/fixtures/alerts/NOTICE): what each kind
of condition matches, the order rules are tried in, expiry, the critical guard, and
rule files that load, fail one line at a time and reload on change."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from alerts.model import Alert
from alerts.parse import parse_alert
from alerts.policy.decide import RuleSet
from alerts.policy.load import Loaded, RuleFiles, load_folder, parse_rules
from config.settings import DEFAULT_PRICES

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def alert(name: str) -> Alert:
    return parse_alert(json.loads((ALERTS / name).read_text()), None)


def rules(text: str) -> RuleSet:
    out = Loaded()
    parse_rules(text, "test.toml", out, set())
    assert out.errors == []
    return RuleSet(out.rules)


def decided(text: str, name: str, now: datetime = NOW) -> str | None:
    return rules(text).decide(alert(name), now).rule_id


# (rule match TOML, fixture, matches?) — every kind of condition, both ways
MATCHES: list[tuple[str, str, bool]] = [
    ('source = "guardduty"', "warren-guardduty.json", True),
    ('source = ["scc", "okta"]', "warren-guardduty.json", False),
    ('format = "falco"', "warren-falco.json", True),
    ('title = "EC2 instance * command and control server."', "warren-guardduty.json", True),
    ('title = "Drop Point*"', "warren-guardduty.json", False),
    ('title = "re:malware: (bad|evil) domain on .*"', "warren-scc.json", True),
    ('text = "SSH Hardening"', "wazuh-rootcheck.json", True),
    ('severity = ["low", "info"]', "wazuh-rootcheck.json", True),
    ('severity = "high"', "wazuh-rootcheck.json", False),
    ('ip = "198.51.100.0/24"', "warren-guardduty.json", True),
    ('ip = ["10.0.0.0/8"]', "warren-guardduty.json", False),
    ('ip = "2001:db8::/32"', "warren-guardduty.json", False),
    ('user = "admin@*"', "okta-event-hook.json", True),
    ('user = "root"', "okta-event-hook.json", False),
    ('host = "k8s-worker-node-*"', "warren-falco.json", True),
    ('resource = "*/instances/suspicious-instance"', "warren-scc.json", True),
    (
        'entity = [{kind = "ip", cidr = "12.97.85.0/24", role = "source"}]',
        "okta-event-hook.json",
        True,
    ),
    (
        'entity = [{kind = "ip", cidr = "12.97.85.0/24", role = "target"}]',
        "okta-event-hook.json",
        False,
    ),
    ('entity = [{kind = "user", value = "www-*", role = "actor"}]', "warren-falco.json", True),
    ('fields = {"detail.type" = "Backdoor:EC2/C&CActivity.B!DNS"}', "warren-guardduty.json", True),
    ('fields = {"detail.severity" = [8, 8.0]}', "warren-guardduty.json", True),
    ('fields = {"detail.type" = "Recon:*"}', "warren-guardduty.json", False),
    ('fields = {"missing.path" = "x"}', "warren-guardduty.json", False),
    ('window = {hours = "13:00-15:00"}', "warren-guardduty.json", True),  # 14:00 UTC
    ('window = {hours = "22:00-06:00"}', "warren-guardduty.json", False),
    ('window = {hours = "22:00-06:00", days = ["sat"]}', "wazuh-rootcheck.json", False),
    ('window = {days = ["mon"]}', "warren-guardduty.json", True),  # 2025-01-20 was a Monday
]


@pytest.mark.parametrize(("match", "fixture", "expected"), MATCHES)
def test_each_condition(match: str, fixture: str, expected: bool) -> None:
    text = f'[[rule]]\nid = "r"\naction = "investigate"\n[rule.match]\n{match}\n'
    assert (decided(text, fixture) == "r") is expected


def test_night_window_belongs_to_the_day_it_began() -> None:
    text = """
[[rule]]
id = "ci-night"
action = "ignore"
match = { window = { hours = "22:00-06:00", days = ["sun"] } }
"""
    found = alert("warren-guardduty.json")  # Monday 14:00
    monday_3am = found.model_copy(update={"event_time": datetime(2025, 1, 20, 3, tzinfo=UTC)})
    monday_23 = found.model_copy(update={"event_time": datetime(2025, 1, 20, 23, tzinfo=UTC)})
    assert rules(text).decide(monday_3am, NOW).rule_id == "ci-night"
    assert rules(text).decide(monday_23, NOW).rule_id is None


def test_first_matching_rule_wins_in_file_order() -> None:
    text = """
[[rule]]
id = "scc-only"
action = "ignore"
match = { source = "scc" }

[[rule]]
id = "guardduty-route"
action = "route"
channel = "C0NOISE"
match = { source = "guardduty" }

[[rule]]
id = "everything"
action = "investigate"
"""
    assert decided(text, "warren-guardduty.json") == "guardduty-route"
    assert decided(text, "warren-scc.json") == "scc-only"
    assert decided(text, "wazuh-rootcheck.json") == "everything"


def test_critical_alert_is_not_ignored_unless_the_rule_says_so() -> None:
    text = """
[[rule]]
id = "quiet-falco"
action = "ignore"
match = { source = "falco" }

[[rule]]
id = "falco-explicit"
action = "suppress"
allow_critical = true
expires = 2027-01-01T00:00:00Z
reason = "lab cluster reverse shells are red-team drills"
owner = "secops@example.com"
match = { source = "falco" }
"""
    falco = alert("warren-falco.json")
    assert falco.severity == "critical"
    decision = rules(text).decide(falco, NOW)
    assert decision.rule_id == "falco-explicit"
    trials = rules(text).trials(falco, NOW)
    assert trials[0].matched is False and "critical" in trials[0].why


def test_expired_suppression_stops_matching_by_itself() -> None:
    text = """
[[rule]]
id = "wazuh-ssh-audit"
action = "suppress"
expires = 2026-12-01T00:00:00Z
reason = "known hardening gap, ticket SEC-12"
owner = "alice"
match = { source = "wazuh", title = "SSH Hardening*" }
"""
    assert decided(text, "wazuh-rootcheck.json", NOW) == "wazuh-ssh-audit"
    assert decided(text, "wazuh-rootcheck.json", NOW + timedelta(days=7)) is None
    trial = rules(text).trials(alert("wazuh-rootcheck.json"), NOW + timedelta(days=7))[0]
    assert trial.why.startswith("expired at 2026-12-01")


def test_trials_say_why_each_rule_did_or_did_not_match() -> None:
    text = """
[[rule]]
id = "a"
action = "ignore"
match = { source = "guardduty", severity = "low" }

[[rule]]
id = "b"
action = "investigate"
severity = "medium"
match = { source = "guardduty", ip = "198.51.100.0/24" }
"""
    trials = rules(text).trials(alert("warren-guardduty.json"), NOW)
    assert [(t.rule_id, t.matched) for t in trials] == [("a", False), ("b", True)]
    assert trials[0].why == "not: severity in ['low']"
    assert "ip entity in ['198.51.100.0/24']" in trials[1].why


BAD_RULES: list[tuple[str, str]] = [
    ('id = "x"\naction = "explode"', "rule 'x': action"),
    ('id = "x"\naction = "suppress"', "rule 'x': Value error, a suppress rule needs expires"),
    ('id = "x"\naction = "route"', "rule 'x': Value error, a route rule needs channel"),
    ('id = "x"\naction = "ignore"\nseverity = "low"', "ignore investigates nothing"),
    (
        'id = "x"\naction = "suppress"\nexpires = 2027-01-01T00:00:00\nreason = "r"\nowner = "o"',
        "time zone",
    ),
    ('id = "x"\naction = "investigate"\nmode = "quick"', "rule 'x': mode"),
    ('id = "x"\naction = "ignore"\nmatch = { title = "re:(" }', "rule 'x': bad regex"),
    ('id = "x"\naction = "ignore"\nmatch = { ip = "10.0.0.300/8" }', "rule 'x': "),
    (
        'id = "x"\naction = "ignore"\nmatch = { fields = { "a[" = 1 } }',
        "fields: bad expression 'a['",
    ),
    ('id = "x"\naction = "ignore"\nmatch = { colour = "red" }', "match.colour: Extra inputs"),
    ('id = "x"\naction = "ignore"\nmatch = { window = { hours = "25:00-26:00" } }', "range"),
    ('action = "ignore"', "rule #1: id: Field required"),
    ('id = "x"\naction = "investigate"\nbudget = { per = "hour" }', "a budget needs"),
]


@pytest.mark.parametrize(("body", "says"), BAD_RULES)
def test_a_bad_rule_is_one_line_naming_file_and_rule(body: str, says: str) -> None:
    out = Loaded()
    parse_rules(f"[[rule]]\n{body}\n", "policy/bad.toml", out, set())
    assert out.rules == []
    assert len(out.errors) == 1 and "\n" not in out.errors[0]
    assert out.errors[0].startswith("policy/bad.toml: ")
    assert says in out.errors[0]


def test_a_bad_file_never_disables_the_others(tmp_path: Path) -> None:
    (tmp_path / "10-good.toml").write_text(
        '[[rule]]\nid = "ok"\naction = "ignore"\nmatch = { source = "wazuh" }\n'
        '[[rule]]\nid = "broken"\naction = "nope"\n'
        '[[rule]]\nid = "ok2"\naction = "investigate"\n'
    )
    (tmp_path / "20-broken.toml").write_text("[[rule]\nid = \n")
    (tmp_path / "30-dup.toml").write_text('[[rule]]\nid = "ok"\naction = "investigate"\n')
    loaded = load_folder(tmp_path)
    assert [r.id for r in loaded.rules] == ["ok", "ok2"]
    assert len(loaded.errors) == 3
    assert loaded.errors[0].startswith(f"{tmp_path / '10-good.toml'}: rule 'broken': action")
    assert loaded.errors[1].startswith(f"{tmp_path / '20-broken.toml'}: not TOML")
    assert "id already used" in loaded.errors[2]


def test_rule_files_reload_on_change(tmp_path: Path) -> None:
    files = RuleFiles(tmp_path, reload_s=0)
    assert files.current().rules == []
    path = tmp_path / "rules.toml"
    path.write_text('[[rule]]\nid = "one"\naction = "ignore"\n')
    assert [r.id for r in files.current().rules] == ["one"]
    loads = files.loads
    assert [r.id for r in files.current().rules] == ["one"] and files.loads == loads  # unchanged
    path.write_text('[[rule]]\nid = "two"\naction = "investigate"\n')
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert [r.id for r in files.current().rules] == ["two"]
    path.unlink()
    assert files.current().rules == []


def test_missing_folder_has_no_rules(tmp_path: Path) -> None:
    loaded = load_folder(tmp_path / "absent")
    assert loaded.rules == [] and loaded.errors == []


CHEAP_MODEL = 'id = "cheap"\naction = "investigate"\nmode = "direct"\nmodel = "{model}"'


def test_a_rule_model_must_be_in_the_price_table() -> None:
    out = Loaded()
    good = CHEAP_MODEL.format(model="gemini-2.5-flash-lite")
    parse_rules(f"[[rule]]\n{good}\n", "policy/m.toml", out, set(), DEFAULT_PRICES)
    assert [r.rule.model for r in out.rules] == ["gemini-2.5-flash-lite"] and out.errors == []

    out = Loaded()
    typo = CHEAP_MODEL.format(model="gemini-2.5-flahs-lite")
    parse_rules(f"[[rule]]\n{typo}\n", "policy/m.toml", out, set(), DEFAULT_PRICES)
    assert out.rules == []
    assert out.errors == [
        "policy/m.toml: rule 'cheap': model: Value error, 'gemini-2.5-flahs-lite' has no "
        "price in gemini.prices (a typo?)"
    ]


def test_a_quiet_rule_names_no_model() -> None:
    out = Loaded()
    body = 'id = "q"\naction = "ignore"\nmodel = "gemini-2.5-flash-lite"'
    parse_rules(f"[[rule]]\n{body}\n", "policy/q.toml", out, set(), DEFAULT_PRICES)
    assert out.rules == []
    assert "severity, mode, model, budget and auto_resolve apply" in out.errors[0]


def test_rule_files_check_models_against_the_prices_they_are_given(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        "[[rule]]\n" + CHEAP_MODEL.format(model="gemini-9-ultra") + "\n"
    )
    files = RuleFiles(tmp_path, reload_s=0, prices=DEFAULT_PRICES)
    assert files.current().rules == []
    assert files.current().errors[0].startswith(f"{tmp_path / 'm.toml'}: rule 'cheap': model:")

"""``socbot policy test`` and ``socbot policy list`` on genuine payloads, the example
rules (examples/policy) and a database with hits and Slack suppressions."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from store.triage.policy import PolicyStore
from store.triage.suppressions import SuppressionStore

REPO = Path(__file__).parents[2]
ALERTS = REPO / "tests" / "fixtures" / "alerts"
EXAMPLES = REPO / "examples" / "policy"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.setenv("SOCBOT_POLICY__DIR", str(EXAMPLES))
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)  # no config/socbot.toml here: defaults
    return url


async def seed(url: str) -> None:
    db = Database(url)
    await db.create()
    try:
        hits = PolicyStore(db)
        await hits.record("a1", "scc-to-cloud-team", "x.toml", "scc", "routed")
        await hits.record("a2", "scc-to-cloud-team", "x.toml", "scc", "routed")
        store = SuppressionStore(db)
        asked = await store.propose(
            {"match": {"source": "wazuh", "title": "SSH Hardening*"}},
            reason="hardening gap tracked in SEC-12",
            expires_at=datetime.now(UTC) + timedelta(days=7),
            proposed_by="U0ALICE",
        )
        assert await store.decide(asked.id, approve=True, by="U0BOB")
    finally:
        await db.close()


def test_policy_test_says_how_the_alert_is_parsed_and_which_rule_matches(env: str) -> None:
    result = CliRunner().invoke(app, ["policy", "test", str(ALERTS / "warren-scc.json")])
    assert result.exit_code == 0, result.output
    assert "parsed: format scc, source scc" in result.output
    assert "title: Malware: Bad Domain on suspicious-instance" in result.output
    assert "-     scanner-port-probes" in result.output
    assert "not: source in ['guardduty']" in result.output
    assert "MATCH scc-to-cloud-team" in result.output
    assert "decision: route by rule scc-to-cloud-team (the first match)" in result.output


def test_policy_test_json_with_an_approved_slack_suppression_first(env: str) -> None:
    asyncio.run(seed(env))
    result = CliRunner().invoke(
        app, ["policy", "test", str(ALERTS / "wazuh-rootcheck.json"), "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["alert"]["source"] == "wazuh" and out["alert"]["severity"] == "low"
    assert out["decision"] == {"rule": "slack-1", "action": "suppress"}
    assert [r["rule_id"] for r in out["rules"]][:2] == ["slack-1", "scanner-port-probes"]
    assert out["rules"][0]["origin"] == "slack" and out["rules"][0]["matched"]
    budget = next(r for r in out["rules"] if r["rule_id"] == "wazuh-budget")
    assert budget["matched"]  # it would have matched, but the suppression comes first


def test_policy_list_shows_hits_last_hit_and_the_suppressions_record(env: str) -> None:
    asyncio.run(seed(env))
    result = CliRunner().invoke(app, ["policy", "list", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    rows = {r["id"]: r for r in out["rules"]}
    assert list(rows) == [
        "slack-1",
        "scanner-port-probes",
        "ci-role-nightly",
        "scc-to-cloud-team",
        "wazuh-budget",
    ]
    assert rows["scc-to-cloud-team"]["hits"] == 2 and rows["scc-to-cloud-team"]["last_hit"]
    assert rows["wazuh-budget"]["hits"] == 0 and rows["wazuh-budget"]["last_hit"] is None
    (asked,) = out["suppressions"]
    assert (asked["status"], asked["proposed_by"], asked["decided_by"]) == (
        "approved",
        "U0ALICE",
        "U0BOB",
    )
    assert asked["reason"] == "hardening gap tracked in SEC-12"
    text = CliRunner().invoke(app, ["policy", "list"]).output
    assert "5 rules, in the order tried" in text and "approved by U0BOB" in text


def test_policy_lift_ends_a_suppression_and_keeps_its_record(env: str) -> None:
    asyncio.run(seed(env))
    result = CliRunner().invoke(app, ["policy", "lift", "slack-1", "--by", "carol"])
    assert result.exit_code == 0, result.output
    out = json.loads(CliRunner().invoke(app, ["policy", "list", "--json"]).output)
    assert "slack-1" not in [r["id"] for r in out["rules"]]
    assert out["suppressions"][0]["status"] == "lifted"
    assert out["suppressions"][0]["lifted_by"] == "carol"
    again = CliRunner().invoke(app, ["policy", "lift", "slack-1"])
    assert again.exit_code == 2 and "no approved suppression slack-1" in again.output


def test_a_broken_rule_is_reported_on_one_line(env: str, tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "a.toml").write_text('[[rule]]\nid = "bad"\naction = "ignore"\nmatch = {ip = "x"}\n')
    result = CliRunner().invoke(
        app, ["policy", "test", str(ALERTS / "warren-scc.json"), "--dir", str(folder)]
    )
    assert result.exit_code == 0
    assert f"rule not loaded: {folder / 'a.toml'}: rule 'bad': " in result.output
    assert "decision: no rule matches" in result.output


def test_socbot_usage_counts_what_the_policy_did(env: str) -> None:
    asyncio.run(seed(env))
    out = json.loads(CliRunner().invoke(app, ["usage", "--json"]).output)
    assert out["policy"] == {
        "ignored": 0,
        "suppressed": 0,
        "routed": 2,
        "investigated": 0,
        "deferred": 0,
    }
    text = CliRunner().invoke(app, ["usage"]).output
    assert "alerts the policy decided: 0 ignored, 0 suppressed, 2 routed" in text

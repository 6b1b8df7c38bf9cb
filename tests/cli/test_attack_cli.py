"""ATT&CK techniques in the terminal: ``investigate`` (Markdown and ``--json``) and ``show``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.cli.test_cli import ALERTS, CONCLUSION, CRITIQUE, db_url, use_model
from tests.cli.test_show_trace import PLAN
from tests.fakes.model import ScriptedModel, call_response, json_response, text_response

__all__ = ["db_url"]  # the fixture

TECHNIQUES = [{"id": "T1098.001", "name": "invented by the model"}, {"id": "T1086"}]
KEPT = {
    "id": "T1098.001",
    "name": "Additional Cloud Credentials",
    "tactic": "Persistence, Privilege Escalation",
}
NOTE = "ATT&CK: T1086 (PowerShell) is revoked in ATT&CK Enterprise v18.1; use T1059.001; dropped"


def model() -> ScriptedModel:
    return ScriptedModel(
        {
            "planner": [json_response(PLAN)],
            "step s1": [
                call_response(("search_past_alerts", {"text": "Tor"})),
                text_response("The IP is a Tor exit node."),
            ],
            "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
            "concluder": [json_response({**CONCLUSION, "techniques": TECHNIQUES})],
            "critic": [json_response(CRITIQUE)],
        }
    )


def test_json_record_and_show_carry_the_catalogued_techniques(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, model())
    runner = CliRunner()
    result = runner.invoke(app, ["investigate", "--json", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["conclusion"]["techniques"] == [KEPT]
    assert record["review"]["technique_notes"] == [NOTE]

    stored = runner.invoke(app, ["show", record["investigation_id"], "--json"])
    assert json.loads(stored.stdout)["conclusion"]["techniques"] == [KEPT]
    text = runner.invoke(app, ["show", record["investigation_id"]])
    assert text.exit_code == 0, text.output
    assert (
        "ATT&CK: T1098.001 Additional Cloud Credentials (Persistence, Privilege Escalation)"
        in text.stdout
    )


def test_markdown_shows_techniques_and_the_dropped_ids(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_model(monkeypatch, model())
    result = CliRunner().invoke(app, ["investigate", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    assert (
        "**ATT&CK:** T1098.001 Additional Cloud Credentials (Persistence, Privilege Escalation)"
        in result.stdout
    )
    assert f"- ⚠️ {NOTE}" in result.stdout
    assert "invented by the model" not in result.stdout

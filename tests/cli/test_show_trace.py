"""The full record (--json, socbot show) and the timeline (socbot trace) of an investigation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from cli.show_cmd import clean
from config.settings import config_notice
from tests.cli.test_cli import ALERTS, CONCLUSION, CRITIQUE, db_url, use_model
from tests.fakes.model import ScriptedModel, call_response, json_response, text_response

__all__ = ["db_url"]  # the fixture

PLAN = {
    "objective": "Decide whether the SCC finding is a real intrusion",
    "steps": [
        {
            "id": "ip",
            "description": "Assess the source IP",
            "tools": ["search_past_alerts"],
            "expected": "reputation",
            "depends_on": [],
        }
    ],
}


def model_with_a_failing_tool() -> ScriptedModel:
    return ScriptedModel(
        {
            "planner": [json_response(PLAN)],
            "step s1": [
                call_response(
                    ("search_past_alerts", {"text": "Tor"}),
                    ("search_past_alerts", {"text": "Tor", "limit": 500}),  # over the maximum
                ),
                text_response("The IP is a Tor exit node."),
            ],
            "reflector": [json_response({"achieved": True, "insights": [], "plan_updates": []})],
            "concluder": [json_response(CONCLUSION)],
            "critic": [json_response(CRITIQUE)],
        }
    )


@pytest.fixture
def investigated(db_url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], str]:
    """An investigation with one good and one failed tool call: (--json record, stderr)."""
    use_model(monkeypatch, model_with_a_failing_tool())
    result = CliRunner().invoke(app, ["investigate", "--json", str(ALERTS / "leveret-scc.json")])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_json_record_has_each_steps_tool_calls(investigated: tuple[dict[str, Any], str]) -> None:
    record, _ = investigated
    calls = record["steps"][0]["tool_calls"]  # in the order they ended (they ran at once)
    bad, good = sorted(calls, key=lambda c: bool(c["ok"]))
    assert (good["tool"], good["args"], good["ok"]) == ("search_past_alerts", {"text": "Tor"}, True)
    assert (bad["tool"], bad["args"], bad["ok"]) == (
        "search_past_alerts",
        {"text": "Tor", "limit": 500},
        False,
    )
    assert good["error"] is None and good["result_chars"] > 0
    assert 0 < good["duration_ms"] <= record["timings"]["total_ms"]
    assert "limit" in bad["error"]
    assert record["tool_calls"] == []  # no calls outside a step


def test_terminal_shows_the_failed_tools_reason_in_one_line(
    investigated: tuple[dict[str, Any], str],
) -> None:
    _, stderr = investigated
    failed = [
        line for line in stderr.splitlines() if "search_past_alerts" in line and "error" in line
    ]
    assert len(failed) == 1
    assert "limit" in failed[0]


def test_show_prints_the_stored_record(investigated: tuple[dict[str, Any], str]) -> None:
    record, _ = investigated
    runner = CliRunner()
    shown = runner.invoke(app, ["show", record["investigation_id"], "--json"])
    assert shown.exit_code == 0, shown.output
    stored = json.loads(shown.stdout)
    for key in ("investigation_id", "conversation_id", "status", "mode", "objective", "conclusion"):
        assert stored[key] == record[key], key
    assert stored["steps"][0]["tool_calls"] == record["steps"][0]["tool_calls"]

    text = runner.invoke(app, ["show", record["investigation_id"]])
    assert text.exit_code == 0, text.output
    assert f"investigation {record['investigation_id']}" in text.stdout
    assert "→ search_past_alerts(text='Tor') ok" in text.stdout
    assert "error:" in text.stdout and "verdict: true_positive" in text.stdout


def test_trace_prints_the_timeline(investigated: tuple[dict[str, Any], str]) -> None:
    record, _ = investigated
    result = CliRunner().invoke(app, ["trace", record["investigation_id"]])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["+0.000s", "started"]
    assert sum("tool_called" in line for line in lines) == 2
    assert any(line.split()[1] == "concluded" for line in lines)
    events = json.loads(
        CliRunner().invoke(app, ["trace", record["investigation_id"], "--json"]).stdout
    )
    assert len(events) == len(lines)


def test_unknown_investigation_is_one_line(db_url: str) -> None:
    for command in ("show", "trace"):
        result = CliRunner().invoke(app, [command, "nope"])
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            config_notice(db_url),  # the settings in use, then why there is nothing to show
            "error: no investigation 'nope' in this database",
        ]


def test_control_characters_never_reach_the_terminal() -> None:
    assert clean("a\x1b[31mred\x1b]0;title\x07\x9bX\tb") == "a[31mred]0;titleX\tb"

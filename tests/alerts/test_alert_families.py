"""Alert families whose genuine samples arrive in another shape than the table's
(tests/alerts/test_alert_formats.py): a GuardDuty finding re-posted by a Slack notifier
(read from the Slack message), and a Sentinel incident inside the Logic Apps trigger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from alerts.parse import parse_alert
from bot.intake.alert_channels import alert_from_message

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ALERTS / name).read_text())
    return data


def test_guardduty_finding_reposted_by_a_slack_notifier_keeps_source_and_severity() -> None:
    parsed = alert_from_message(load("derived-guardduty-to-slack.json"))
    assert parsed is not None
    alert = parse_alert(*parsed)
    assert (alert.source, alert.format, alert.severity) == ("guardduty", "guardduty_slack", "high")
    assert alert.title == "Drop Point domain name queried by EC2 instance i-99999999."
    assert "Trojan:EC2/DropPoint!DNS" in (alert.description or "")


def test_other_notifier_spellings_of_severity() -> None:
    event = load("derived-guardduty-to-slack.json")
    fields = event["attachments"][0]["fields"]
    for value, expected in (
        ("High", "high"),
        ("`5.0`", "medium"),
        ("2", "low"),
        ("9.2", "critical"),
    ):
        fields[1]["value"] = value
        parsed = alert_from_message(event)
        assert parsed is not None
        assert parse_alert(*parsed).severity == expected, value


def test_a_slack_message_no_format_knows_stays_generic() -> None:
    event = load("derived-guardduty-to-slack.json")
    event["attachments"][0]["fields"] = [{"title": "Status", "value": "degraded"}]
    parsed = alert_from_message(event)
    assert parsed is not None
    alert = parse_alert(*parsed)
    assert (alert.source, alert.format) == ("generic", "generic")


def test_sentinel_incident_inside_the_logic_apps_trigger() -> None:
    # the envelope is the trigger's documented shape, built here around the genuine
    # ARM incident (not a captured trigger body)
    body = {
        "eventUniqueId": "e0a4b2f4-0000-0000-0000-000000000000",
        "objectSchemaType": "Incident",
        "objectEventType": "Create",
        "workspaceId": "00000000-0000-0000-0000-000000000000",
        "object": load("arm-sentinel-incident.json"),
    }
    alert = parse_alert(body)
    assert (alert.source, alert.format) == ("sentinel", "sentinel_incident")
    assert (alert.title, alert.severity) == ("My incident", "high")

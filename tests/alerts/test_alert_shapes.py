"""Shapes the front door must read right (tests/fixtures/alerts/NOTICE): a GuardDuty
finding inside SNS as a JSON string, an EventBridge event without ``source``, and a
Defender XDR AlertInfo row as the streaming API sends it; then hostile variants of
each, read as "not understood" or generically, never a crash.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from alerts import envelopes
from alerts.model import MAX_TITLE
from alerts.parse import Alert, parse_alert
from cli.main import app

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"
GD_TITLE = "SAMPLE Unprotected port on EC2 instance i-123123123 is being probed"
DEFENDER_TITLE = "Regsvr32 Rundll32 Image Loads Abnormal Extension"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ALERTS / name).read_text())
    return data


def indicators(alert: Alert) -> set[tuple[str, str]]:
    return {(i.kind, i.value) for i in alert.indicators}


def sns_with(message: str) -> dict[str, Any]:
    """The genuine Lambda SNS event with its Message replaced."""
    event = load("notifyslack-guardduty-sns.json")
    event["Records"][0]["Sns"]["Message"] = message
    return event


def sns_nested(depth: int) -> dict[str, Any]:
    """The genuine EventBridge event inside ``depth`` SNS notifications, each a JSON string."""
    notification = load("notifyslack-guardduty-sns.json")["Records"][0]["Sns"]
    message = json.dumps(load("notifyslack-guardduty-finding-high.json"))
    for _ in range(depth):
        message = json.dumps(dict(notification, Message=message))
    nested: dict[str, Any] = json.loads(message)
    return nested


def event_hubs(*rows: dict[str, Any]) -> dict[str, Any]:
    """An Event Hubs message of the Defender XDR streaming API: rows in ``records``."""
    return {"records": list(rows)}


def alertinfo(**properties: Any) -> dict[str, Any]:
    row = load("panther-defender-alertinfo.json")
    row["properties"].update(properties)
    return row


# payload → source, format, title, severity, event time, the indicators exactly
CASES: list[tuple[str, dict[str, Any], str, str, str, str, str, set[tuple[str, str]]]] = [
    (
        "sns-lambda-event",
        load("notifyslack-guardduty-sns.json"),
        "guardduty",
        "guardduty",
        GD_TITLE,
        "critical",  # 9: GuardDuty's 9.0-10.0 Critical
        "2020-01-02T01:02:03+00:00",  # service.eventFirstSeen, not the SNS Timestamp (1970)
        set(),  # the sample holds no address, domain or hash
    ),
    (
        "eventbridge-no-source-high",
        load("notifyslack-guardduty-finding-high.json"),
        "guardduty",
        "guardduty",
        GD_TITLE,
        "critical",
        "2020-01-02T01:02:03+00:00",
        set(),
    ),
    (
        "eventbridge-no-source-low",
        load("notifyslack-guardduty-finding-low.json"),
        "guardduty",
        "guardduty",
        GD_TITLE,
        "low",  # 2
        "2020-01-02T01:02:03+00:00",
        set(),
    ),
    (
        "sns-in-sns",
        sns_nested(2),
        "guardduty",
        "guardduty",
        GD_TITLE,
        "critical",
        "2020-01-02T01:02:03+00:00",
        set(),
    ),
    (
        "defender-alertinfo",
        load("panther-defender-alertinfo.json"),
        "sentinel",  # ServiceSource "Microsoft Sentinel", as graph_alert reads it
        "defender_alertinfo",
        DEFENDER_TITLE,
        "high",
        "2025-04-21T20:51:04.058183+00:00",  # properties.Timestamp, not the row's time
        set(),  # AlertInfo names no entity; tenantId and AlertId are not indicators
    ),
    (
        "defender-alertinfo-event-hubs",
        event_hubs(alertinfo(ServiceSource="Microsoft Defender for Endpoint", Severity="Low")),
        "defender",
        "defender_alertinfo",
        DEFENDER_TITLE,
        "low",
        "2025-04-21T20:51:04.058183+00:00",
        set(),
    ),
]


@pytest.mark.parametrize(
    ("payload", "source", "fmt", "title", "severity", "time", "found"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_genuine_shapes_read_right(
    payload: dict[str, Any],
    source: str,
    fmt: str,
    title: str,
    severity: str,
    time: str,
    found: set[tuple[str, str]],
) -> None:
    alert = parse_alert(payload)
    assert (alert.source, alert.format, alert.title, alert.severity) == (
        source,
        fmt,
        title,
        severity,
    )
    assert alert.event_time is not None and alert.event_time.isoformat() == time
    assert indicators(alert) == found


def test_sns_raw_is_the_event_it_carried() -> None:
    alert = parse_alert(load("notifyslack-guardduty-sns.json"))
    assert alert.raw["detail-type"] == "GuardDuty Finding"  # what is stored and shown
    assert alert.description == (
        "EC2 instance has an unprotected port which is being probed by a known malicious host."
    )


@pytest.mark.parametrize(
    ("score", "severity"),
    [
        (0.5, "info"),
        (1, "low"),
        (3.9, "low"),
        (4, "medium"),
        (6.9, "medium"),
        (7, "high"),
        (8.9, "high"),
        (9, "critical"),
        (10, "critical"),
    ],
)
def test_one_guardduty_scale_for_every_shape(score: float, severity: str) -> None:
    bare = load("leveret-guardduty-finding.json")  # the API's PascalCase finding
    bare["Severity"] = score
    event = load("notifyslack-guardduty-finding-low.json")
    event["detail"]["severity"] = score
    wrapped = sns_with(json.dumps(event))
    assert {parse_alert(p).severity for p in (bare, event, wrapped)} == {severity}
    assert {parse_alert(p).format for p in (bare, event, wrapped)} == {"guardduty"}


def test_cli_parse_reads_the_sns_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG", raising=False)
    for name, expected in [
        ("notifyslack-guardduty-sns.json", "format: guardduty"),
        ("panther-defender-alertinfo.json", "format: defender_alertinfo"),
    ]:
        result = CliRunner().invoke(app, ["alerts", "parse", str(ALERTS / name)])
        assert result.exit_code == 0, result.output
        assert expected in result.output and "severity: (unknown)" not in result.output


# Hostile variants: each is read as "not understood" (format None) with a bounded
# title, or by the right format with what could be read; none raises.
UNKNOWN_SNS = "GuardDuty Finding"  # the notification's Subject, the fallback's title

HOSTILE: list[tuple[str, dict[str, Any], str | None, str]] = [
    ("sns-text-message", sns_with("GuardDuty: port probe on i-123"), None, UNKNOWN_SNS),
    ("sns-json-list", sns_with("[1, 2]"), None, UNKNOWN_SNS),
    ("sns-json-null", sns_with("null"), None, UNKNOWN_SNS),
    ("sns-empty", sns_with(""), None, UNKNOWN_SNS),
    (
        "sns-truncated-json",
        sns_with('{"detail-type": "GuardDuty Finding", "detail": {'),
        None,
        UNKNOWN_SNS,
    ),
    ("sns-deep-json", sns_with("[" * 10_000 + "]" * 10_000), None, UNKNOWN_SNS),
    ("sns-nested-past-the-bound", sns_nested(envelopes.MAX_DEPTH + 4), None, UNKNOWN_SNS),
    (
        "detail-type-not-text",
        {**load("notifyslack-guardduty-finding-high.json"), "detail-type": ["GuardDuty Finding"]},
        None,
        GD_TITLE,
    ),
    (
        "detail-not-object",
        {"detail-type": "GuardDuty Finding", "detail": "x"},
        None,
        "GuardDuty Finding",  # the fallback reads detail-type
    ),
    ("records-empty", event_hubs(), None, "Unrecognised alert"),
    ("records-not-objects", {"records": [1, "x", None]}, None, "Unrecognised alert"),
    (
        "alertinfo-properties-not-object",
        {**alertinfo(), "properties": "x"},
        None,
        "Unrecognised alert",
    ),
    # an evidence row is one of an alert's many pieces, not the alert
    ("alertevidence-row", load("panther-defender-alertevidence.json"), None, DEFENDER_TITLE),
]


@pytest.mark.parametrize(
    ("payload", "fmt", "title"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_shapes_are_not_understood_never_a_crash(
    payload: dict[str, Any], fmt: str | None, title: str
) -> None:
    alert = parse_alert(payload)
    assert (alert.format, alert.title) == (fmt, title)
    assert alert.severity is None


def test_a_message_over_the_decoding_bound_is_not_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = json.dumps(load("notifyslack-guardduty-finding-high.json"))
    monkeypatch.setattr(envelopes, "MAX_DECODED", len(message) - 1)
    alert = parse_alert(sns_with(message))
    assert (alert.format, alert.title) == (None, UNKNOWN_SNS)


def test_huge_strings_are_cut_not_carried() -> None:
    event = load("notifyslack-guardduty-finding-high.json")
    event["detail"]["title"] = "probe " * 40_000  # 240 kB, under the 256 KiB front door
    alert = parse_alert(sns_with(json.dumps(event)))
    assert alert.format == "guardduty" and len(alert.title) <= MAX_TITLE
    row = alertinfo(Title="T" * 200_000, ServiceSource="../../" * 1_000)
    info = parse_alert(row)
    assert (info.format, info.source, len(info.title) <= MAX_TITLE) == (
        "defender_alertinfo",
        "defender",
        True,
    )


@pytest.mark.parametrize(
    "value", ["NaN", "-Infinity", "1e999", 10**400, True, -1, {"score": 9}, "", "Bogus"]
)
def test_a_severity_that_is_no_severity_is_unknown(value: Any) -> None:
    event = copy.deepcopy(load("notifyslack-guardduty-finding-high.json"))
    event["detail"]["severity"] = value
    info = alertinfo(Severity=value)
    readings = [parse_alert(p) for p in (event, info)]
    assert [(a.format, a.severity) for a in readings] == [
        ("guardduty" if value != "" else "generic", None),
        ("defender_alertinfo", None),
    ]


def test_records_beside_other_keys_are_not_an_event_hubs_message() -> None:
    alert = parse_alert({"records": [load("panther-defender-alertinfo.json")], "next": "x"})
    assert alert.format is None

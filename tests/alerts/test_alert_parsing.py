"""parse_alert: known alert formats map to title, severity, source, time, indicators."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from alerts.parse import Alert, normalize_severity, parse_alert, parse_time

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"
GD_TITLE = "Drop Point domain name queried by EC2 instance i-99999999."
SCC_TITLE = "Execution: Cryptocurrency Mining Hash Match on web-server-prod-01"

# An EventBridge event as GuardDuty sends it: the finding in ``detail``, lowerCamel keys.
EVENTBRIDGE = {
    "version": "0",
    "id": "c8c4daa7-a20c-2f03-0070-b7393dd542ad",
    "detail-type": "GuardDuty Finding",
    "source": "aws.guardduty",
    "account": "123456789012",
    "time": "2024-03-01T10:15:09Z",
    "region": "us-east-1",
    "resources": [],
    "detail": {
        "schemaVersion": "2.0",
        "accountId": "123456789012",
        "region": "us-east-1",
        "partition": "aws",
        "id": "16afba5c5c43e07c9e3e5e2e544e95df",
        "arn": "arn:aws:guardduty:us-east-1:123456789012:detector/123456789012/finding/"
        "16afba5c5c43e07c9e3e5e2e544e95df",
        "type": "UnauthorizedAccess:IAMUser/MaliciousIPCaller.Custom",
        "resource": {
            "resourceType": "AccessKey",
            "accessKeyDetails": {
                "accessKeyId": "ASIAEXAMPLEKEYID1234",
                "principalId": "AIDAEXAMPLEPRINCIPAL",
                "userType": "IAMUser",
                "userName": "ci-deployer",
            },
        },
        "service": {
            "serviceName": "guardduty",
            "detectorId": "123456789012",
            "action": {
                "actionType": "AWS_API_CALL",
                "awsApiCallAction": {
                    "api": "GetObject",
                    "serviceName": "s3.amazonaws.com",
                    "remoteIpDetails": {
                        "ipAddressV4": "185.220.101.42",
                        "organization": {"asn": "60729", "asnOrg": "Stiftung Erneuerbare Freiheit"},
                        "country": {"countryName": "Germany"},
                    },
                },
            },
            "eventFirstSeen": "2024-03-01T09:58:12Z",
            "eventLastSeen": "2024-03-01T10:09:41Z",
            "archived": False,
            "count": 4,
        },
        "severity": 5,
        "createdAt": "2024-03-01T10:09:58.318Z",
        "updatedAt": "2024-03-01T10:09:58.318Z",
        "title": "API GetObject was invoked from an IP address on a custom threat list.",
        "description": "API GetObject was invoked from IP address 185.220.101.42 on a custom list.",
    },
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ALERTS / name).read_text())
    return data


def kinds(alert: Alert) -> set[tuple[str, str]]:
    return {(i.kind, i.value) for i in alert.indicators}


@pytest.mark.parametrize("name", ["leveret-guardduty-finding.json", "leveret-guardduty.json"])
def test_guardduty_finding_and_findings_list(name: str) -> None:
    data = load(name)
    alert = parse_alert(data)
    assert alert.source == "guardduty"
    assert alert.title == GD_TITLE
    assert alert.severity == "high"  # GuardDuty 8 = high (7.0-8.9)
    assert alert.event_time == datetime(2023, 4, 16, 6, 11, 53, tzinfo=UTC)
    assert ("domain", "3322.org") in kinds(alert)
    assert alert.raw == data


def test_findings_list_with_several_findings_says_so() -> None:
    data = load("leveret-guardduty.json")
    data["Findings"].append(dict(data["Findings"][0], Title="second"))
    assert parse_alert(data).title == GD_TITLE + " (+1 more finding)"


def test_eventbridge_envelope() -> None:
    alert = parse_alert(EVENTBRIDGE)
    assert alert.source == "guardduty"
    assert alert.title == "API GetObject was invoked from an IP address on a custom threat list."
    assert alert.severity == "medium"
    assert alert.event_time == datetime(2024, 3, 1, 9, 58, 12, tzinfo=UTC)
    assert {("ipv4", "185.220.101.42"), ("principal", "ci-deployer")} <= kinds(alert)


@pytest.mark.parametrize("name", ["leveret-scc.json", "leveret-scc_mini.json"])
def test_scc_notification(name: str) -> None:
    alert = parse_alert(load(name))
    assert alert.source == "scc"
    assert alert.title == SCC_TITLE
    assert alert.severity == "critical"
    assert alert.event_time == datetime(2025, 11, 8, 5, 23, 47, 891000, tzinfo=UTC)
    assert {
        ("ipv4", "185.220.101.42"),
        ("domain", "pool.minexmr.com"),
        ("principal", "attacker@external-domain.com"),
    } <= kinds(alert)


def test_bare_scc_finding() -> None:
    finding = load("leveret-scc.json")["finding"]
    alert = parse_alert(finding)
    assert alert.source == "scc"
    assert alert.title == SCC_TITLE  # resource from resourceName
    assert alert.severity == "critical"


def test_scc_in_pubsub_push_envelope() -> None:
    payload = load("leveret-scc_mini.json")
    envelope = {
        "message": {
            "data": base64.b64encode(json.dumps(payload).encode()).decode(),
            "messageId": "9876543210",
            "publishTime": "2025-11-08T05:23:53Z",
        },
        "subscription": "projects/p/subscriptions/scc-findings",
    }
    alert = parse_alert(envelope)
    assert alert.source == "scc"
    assert alert.title == SCC_TITLE
    assert alert.raw == payload


def test_generic_alert() -> None:
    data = {
        "title": "Impossible travel for j.doe@example.com",
        "severity": "High",
        "timestamp": 1762579427,
        "details": {"ips": ["81.2.69.160", "175.45.176.3"]},
    }
    alert = parse_alert(data, source_hint="generic")
    assert alert.source == "generic"
    assert alert.title == data["title"]
    assert alert.severity == "high"
    assert alert.event_time == datetime.fromtimestamp(1762579427, UTC)
    assert kinds(alert) == {
        ("email", "j.doe@example.com"),
        ("ipv4", "81.2.69.160"),
        ("ipv4", "175.45.176.3"),
    }


def test_unknown_payload_is_kept_with_best_effort_title() -> None:
    data = {"event": {"message": "Suspicious login\nfrom 45.33.32.156", "level": "warn"}}
    alert = parse_alert(data)
    assert alert.source == "unknown"
    assert alert.title == "Suspicious login from 45.33.32.156"
    assert alert.severity is None
    assert alert.raw == data
    assert kinds(alert) == {("ipv4", "45.33.32.156")}


def test_unknown_payload_without_text_and_unknown_hint() -> None:
    alert = parse_alert({"a": 1, "b": [2, 3]}, source_hint="Splunk")
    assert alert.source == "splunk"
    assert alert.title == "Unrecognised splunk alert"  # never a bare key name
    assert parse_alert({}).title == "Unrecognised alert"


def test_hint_picks_the_parser_but_shape_still_decides() -> None:
    # A generic payload hinted as guardduty is still parsed as generic.
    alert = parse_alert({"title": "x", "severity": 3}, source_hint="guardduty")
    assert (alert.source, alert.severity) == ("generic", "low")
    # An SCC payload with a generic-looking title field is SCC when hinted.
    scc = load("leveret-scc_mini.json")
    scc["title"] = "forwarded"
    assert parse_alert(scc, source_hint="gcp").source == "scc"


def test_a_generic_alert_that_merely_has_type_and_service_is_not_guardduty() -> None:
    data = {"title": "Disk almost full", "type": "ops", "severity": 2, "service": {"name": "db"}}
    assert parse_alert(data).source == "generic"


def test_long_titles_are_one_line_and_bounded() -> None:
    alert = parse_alert({"title": "word " * 100})
    assert "\n" not in alert.title and len(alert.title) == 200


def test_ids_are_fresh_uuid_hex() -> None:
    a, b = parse_alert({"title": "t"}), parse_alert({"title": "t"})
    assert a.id != b.id and len(a.id) == 32 and int(a.id, 16) >= 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("CRITICAL", "critical"),
        ("High", "high"),
        ("moderate", "medium"),
        ("informational", "info"),
        ("SEVERITY_UNSPECIFIED", None),
        (0.5, "info"),
        (2, "low"),
        (4.0, "medium"),
        (8.9, "high"),
        (9.0, "critical"),
        ("7", "high"),
        (85, "high"),
        (250, None),
        ("NaN", None),  # was critical: NaN compares false with every bound
        (float("nan"), None),
        (True, None),
        (None, None),
    ],
)
def test_severity_normalisation(value: Any, expected: str | None) -> None:
    assert normalize_severity(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-11-08T05:23:47.891Z", datetime(2025, 11, 8, 5, 23, 47, 891000, tzinfo=UTC)),
        ("2025-11-08T07:23:47+02:00", datetime(2025, 11, 8, 5, 23, 47, tzinfo=UTC)),
        ("2025-11-08 05:23:47", datetime(2025, 11, 8, 5, 23, 47, tzinfo=UTC)),
        (1762579427000, datetime(2025, 11, 8, 5, 23, 47, tzinfo=UTC)),
        ("1762579427", datetime(2025, 11, 8, 5, 23, 47, tzinfo=UTC)),
        ("yesterday", None),
        (None, None),
    ],
)
def test_time_parsing(value: Any, expected: datetime | None) -> None:
    assert parse_time(value) == expected

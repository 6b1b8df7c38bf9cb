"""Shared pieces of the pack builders: tables, timestamps, alert shapes, writing a folder."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evals.writer import Draft, TableRows, write_scenario

SYNTHETIC_ORIGIN = "written for socbot's eval pack (synthetic: invented people, hosts and events)"
SYNTHETIC_LICENCE = "Apache-2.0 (this repository)"


@dataclass
class Table:
    name: str
    description: str
    rows: list[dict[str, Any]]
    time_column: str = "event_time"
    columns: dict[str, str] = field(default_factory=dict)


@dataclass
class Case:
    id: str
    title: str
    category: str
    verdict: str
    severity: tuple[str, str]
    alert: dict[str, Any]
    tables: list[Table]
    must: list[str] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    accept: list[str] = field(default_factory=list)
    intel: list[dict[str, Any]] = field(default_factory=list)
    origin: str = SYNTHETIC_ORIGIN
    licence: str = SYNTHETIC_LICENCE
    synthetic: bool = True


def digest(*parts: object, size: int = 32) -> str:
    """A stable hex id from ``parts`` (the same on every run of the builder)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:size]


def at(base: str, seconds: float = 0) -> str:
    """``base`` (ISO, UTC) plus ``seconds``, as ISO with a Z."""
    start = datetime.fromisoformat(base.replace("Z", "+00:00")).astimezone(UTC)
    return (start + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def write_case(pack: Path, case: Case) -> None:
    truth: dict[str, object] = {"verdict": case.verdict}
    if case.accept:
        truth["accept"] = case.accept
    truth |= {
        "severity": list(case.severity),
        "must_establish": case.must,
        "techniques": case.techniques,
        "forbidden": case.forbidden,
    }
    draft = Draft(
        title=case.title,
        category=case.category,
        origin=case.origin,
        licence=case.licence,
        synthetic=case.synthetic,
        truth=truth,
        alert=case.alert,
        tables=[
            TableRows(t.name, t.description, t.rows, t.time_column, t.columns) for t in case.tables
        ],
        intel=case.intel,
    )
    write_scenario(pack / case.id, draft, replace=True)


# ---------------------------------------------------------------- alert shapes


def guardduty(
    *,
    type_: str,
    title: str,
    description: str,
    severity: float,
    when: str,
    resource: dict[str, Any],
    action: dict[str, Any],
    account: str = "111122223333",
    region: str = "eu-west-1",
) -> dict[str, Any]:
    """A GuardDuty finding in the shape of the finding JSON (as in leveret's sample)."""
    fid = digest(type_, title, when)
    return {
        "AccountId": account,
        "Arn": f"arn:aws:guardduty:{region}:{account}:detector/d1/finding/{fid}",
        "CreatedAt": when,
        "Description": description,
        "Id": fid,
        "Partition": "aws",
        "Region": region,
        "Resource": resource,
        "SchemaVersion": "2.0",
        "Service": {
            "Action": action,
            "Archived": False,
            "Count": 1,
            "DetectorId": "d1",
            "EventFirstSeen": when,
            "EventLastSeen": when,
            "ResourceRole": "TARGET",
            "ServiceName": "guardduty",
        },
        "Severity": severity,
        "Title": title,
        "Type": type_,
        "UpdatedAt": when,
    }


def okta_hook(
    *,
    event_type: str,
    message: str,
    actor: str,
    ip: str,
    when: str,
    result: str = "SUCCESS",
    severity: str = "WARN",
    reason: str | None = None,
    country: str = "United States",
) -> dict[str, Any]:
    """An Okta event hook request carrying one System Log event (Okta's documented shape)."""
    return {
        "eventType": "com.okta.event_hook",
        "eventTypeVersion": "1.0",
        "cloudEventsVersion": "0.1",
        "contentType": "application/json",
        "eventId": digest(event_type, actor, when, size=36),
        "eventTime": when,
        "source": "https://example.okta.com/api/v1/eventHooks/who0eval",
        "data": {
            "events": [
                {
                    "version": "0",
                    "severity": severity,
                    "client": {
                        "zone": "OFF_NETWORK",
                        "ipAddress": ip,
                        "geographicalContext": {"country": country},
                        "userAgent": {"rawUserAgent": "Mozilla/5.0"},
                    },
                    "actor": {"type": "User", "alternateId": actor, "displayName": actor},
                    "outcome": {"result": result, **({"reason": reason} if reason else {})},
                    "published": when,
                    "eventType": event_type,
                    "displayMessage": message,
                }
            ]
        },
    }


def graph_alert(
    *,
    title: str,
    severity: str,
    category: str,
    when: str,
    description: str,
    service: str = "azureAdIdentityProtection",
    evidence: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Microsoft Graph security alert (alerts_v2) as the Graph API returns it."""
    return {
        "@odata.type": "#microsoft.graph.security.alert",
        "id": "da" + digest(title, when, size=18),
        "title": title,
        "severity": severity,
        "category": category,
        "status": "new",
        "serviceSource": service,
        "detectionSource": service,
        "createdDateTime": when,
        "firstActivityDateTime": when,
        "description": description,
        "evidence": evidence or [],
    }


def siem_rule(
    *,
    title: str,
    severity: str,
    when: str,
    host: str | None = None,
    user: str | None = None,
    details: dict[str, Any] | None = None,
    product: str = "SIEM correlation rule",
) -> dict[str, Any]:
    """A generic SIEM rule alert (no vendor format: socbot's fallback reads it)."""
    alert: dict[str, Any] = {
        "title": title,
        "severity": severity,
        "timestamp": when,
        "product": product,
    }
    if host:
        alert["host"] = {"name": host}
    if user:
        alert["user"] = {"name": user}
    alert.update(details or {})
    return alert

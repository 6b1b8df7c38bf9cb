"""Background sign-ins (Entra, Okta), SaaS audit and CloudTrail of the organisation."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from scripts.eval_pack.org.people import MAIL, OFFICES, Org, Person, public_ip, ts
from scripts.eval_pack.org.reference import Trip
from scripts.eval_pack.org.rhythm import active, any_time, days, guid, weekday, work_time

APPS = [
    "Office 365 Exchange Online",
    "Microsoft Teams",
    "SharePoint Online",
    "OneDrive",
    "Office 365",
]
OKTA_APPS = [
    "Salesforce",
    "Workday",
    "GitHub Enterprise",
    "AWS IAM Identity Center",
    "Slack",
    "Zoom",
]
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0 Safari/537.36"
UA_MOBILE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3 like Mac OS X) Mobile/15E148"
ACCOUNTS = {"prod": "412907731154", "dev": "412907731790"}


def where(
    org: Org, p: Person, when: datetime, trips: dict[str, list[Trip]], rng: random.Random
) -> tuple[str, str, str]:
    """(ip, country, city) of a person at ``when``: abroad on a trip, else office or home."""
    for t in trips.get(p.login, []):
        if t.depart <= when <= t.back:
            return (
                t.__dict__.setdefault("ip", public_ip(random.Random(t.booking))),
                t.country,
                t.city,
            )
    country, city = OFFICES[p.office]
    if weekday(when) and 7 <= when.hour < 17 and rng.random() < 0.7:
        return org.egress[p.office], country, city
    return p.home_ip, country, city


def signins(
    org: Org, trips: dict[str, list[Trip]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(21)
    entra: list[dict[str, Any]] = []
    okta: list[dict[str, Any]] = []
    for day in days():
        for p in org.people:
            if not active(rng, day):
                continue
            for _ in range(rng.randint(1, 4)):
                when = work_time(rng, day)
                ip, country, city = where(org, p, when, trips, rng)
                mobile = rng.random() < 0.2
                status, reason, mfa = (
                    0,
                    None,
                    rng.choice(["satisfied", "not required", "not required"]),
                )
                if rng.random() < 0.03:
                    status, reason, mfa = 50126, "Invalid username or password", "not required"
                entra.append(
                    {
                        "event_time": ts(when),
                        "user_principal_name": p.upn,
                        "app": rng.choice(APPS),
                        "client_app": "Mobile Apps and Desktop clients" if mobile else "Browser",
                        "ip": ip,
                        "country": country,
                        "city": city,
                        "status_code": status,
                        "failure_reason": reason,
                        "mfa": mfa,
                        "device_id": None if mobile else p.device,
                        "device_compliant": not mobile,
                        "risk_level": "none",
                        "user_agent": UA_MOBILE if mobile else UA,
                    }
                )
            when = work_time(rng, day, 7, 10)
            ip, country, city = where(org, p, when, trips, rng)
            okta += okta_login(p.upn, when, ip, country, city, rng)
    return entra, okta


def okta_login(
    upn: str,
    when: datetime,
    ip: str,
    country: str,
    city: str,
    rng: random.Random,
    push: bool = True,
) -> list[dict[str, Any]]:
    base = {"actor": upn, "client_ip": ip, "country": country, "city": city, "user_agent": UA}
    rows = [
        {
            **base,
            "event_time": ts(when),
            "event_type": "user.session.start",
            "target": None,
            "outcome": "SUCCESS",
            "reason": None,
        }
    ]
    if push:
        rows.append(
            {
                **base,
                "event_time": ts(when + timedelta(seconds=2)),
                "event_type": "system.push.send_factor_verify_push",
                "target": None,
                "outcome": "SUCCESS",
                "reason": None,
            }
        )
        rows.append(
            {
                **base,
                "event_time": ts(when + timedelta(seconds=9)),
                "event_type": "user.authentication.auth_via_mfa",
                "target": "Okta Verify",
                "outcome": "SUCCESS",
                "reason": None,
            }
        )
    for k in range(rng.randint(1, 3)):
        rows.append(
            {
                **base,
                "event_time": ts(when + timedelta(minutes=5 + 40 * k)),
                "event_type": "user.authentication.sso",
                "target": rng.choice(OKTA_APPS),
                "outcome": "SUCCESS",
                "reason": None,
            }
        )
    return rows


def mfp_noise(org: Org) -> list[dict[str, Any]]:
    """The printers' legacy IMAP account, blocked by Conditional Access every hour (noise)."""
    ip = org.egress["DE"]
    return [
        {
            "event_time": ts(d + timedelta(hours=h, minutes=3)),
            "user_principal_name": f"svc-mfp@{MAIL}",
            "app": "Office 365 Exchange Online",
            "client_app": "IMAP4",
            "ip": ip,
            "country": "Germany",
            "city": "Hamburg",
            "status_code": 53003,
            "failure_reason": "Access has been blocked by Conditional Access policies",
            "mfa": "not required",
            "device_id": None,
            "device_compliant": False,
            "risk_level": "none",
            "user_agent": "MFP-Relay/2.1",
        }
        for d in days()
        for h in range(24)
    ]


SAAS_OPS = [
    ("SharePoint", "FileAccessed"),
    ("SharePoint", "FileModified"),
    ("OneDrive", "FileUploaded"),
    ("Exchange", "Send"),
    ("Salesforce", "ReportRun"),
    ("GitHub", "git.clone"),
    ("SharePoint", "FileDownloaded"),
]


def saas(org: Org, trips: dict[str, list[Trip]]) -> list[dict[str, Any]]:
    rng = random.Random(23)
    rows = []
    for day in days():
        for p in org.people:
            if not active(rng, day):
                continue
            for _ in range(rng.randint(0, 5)):
                app, op = rng.choice(SAAS_OPS)
                if app == "GitHub" and p.dept != "ENG":
                    app, op = "SharePoint", "FileAccessed"
                when = work_time(rng, day)
                ip, _, _ = where(org, p, when, trips, rng)
                rows.append(
                    {
                        "event_time": ts(when),
                        "user": p.upn,
                        "app": app,
                        "operation": op,
                        "object": f"/sites/{p.dept.lower()}/Shared Documents/{rng.choice(['Q1', 'plans', 'contracts', 'ops'])}/{rng.randint(100, 999)}.xlsx"
                        if app != "GitHub"
                        else f"kestrel/{rng.choice(['booking-api', 'infra', 'web'])}",
                        "target": None,
                        "client_ip": ip,
                        "user_agent": UA,
                        "result": "Succeeded",
                    }
                )
            if rng.random() < 0.01:
                rows.append(
                    {
                        "event_time": ts(work_time(rng, day)),
                        "user": p.upn,
                        "app": "Exchange",
                        "operation": "New-InboxRule",
                        "object": "Move newsletters",
                        "target": "MoveToFolder: Newsletters",
                        "client_ip": org.egress[p.office],
                        "user_agent": UA,
                        "result": "Succeeded",
                    }
                )
    return rows


def cloudtrail(org: Org) -> list[dict[str, Any]]:
    rng = random.Random(29)
    rows = []
    ci = "arn:aws:sts::412907731154:assumed-role/terraform-ci/gha-{n}"
    eng = [p for p in org.people if p.dept == "ENG"][:25]
    for day in days():
        for h in range(24):  # the application's own role reading and writing its bucket
            for _ in range(rng.randint(8, 14) if 6 <= h <= 20 else rng.randint(1, 3)):
                rows.append(
                    ct(
                        day + timedelta(hours=h, seconds=rng.randint(0, 3599)),
                        "prod",
                        "s3.amazonaws.com",
                        rng.choice(["GetObject", "PutObject", "GetObject"]),
                        "AssumedRole",
                        "arn:aws:sts::412907731154:assumed-role/booking-app/i-0a41f",
                        "ASIA" + guid(rng)[:12].upper(),
                        "10.1.3.21",
                        "aws-sdk-java/2.20",
                        '{"bucketName": "kestrel-booking-docs"}',
                    )
                )
        if weekday(day):
            for n in range(rng.randint(2, 4)):
                start = work_time(rng, day, 9, 16)
                for k in range(rng.randint(15, 40)):
                    name = rng.choice(
                        [
                            "DescribeInstances",
                            "GetRole",
                            "ListAttachedRolePolicies",
                            "PutRolePolicy",
                            "UpdateFunctionCode",
                            "DescribeSecurityGroups",
                            "CreateTags",
                            "GetBucketPolicy",
                        ]
                    )
                    src = (
                        "iam"
                        if "Role" in name
                        else "ec2"
                        if "Describe" in name or "Tags" in name
                        else "lambda"
                        if "Function" in name
                        else "s3"
                    )
                    rows.append(
                        ct(
                            start + timedelta(seconds=4 * k),
                            "prod",
                            f"{src}.amazonaws.com",
                            name,
                            "AssumedRole",
                            ci.format(n=f"{day:%m%d}{n}"),
                            "ASIA" + guid(rng)[:12].upper(),
                            "3.120.77.14",
                            "APN/1.0 HashiCorp/1.0 Terraform/1.7.4",
                            '{"roleName": "booking-app"}' if "Role" in name else "{}",
                        )
                    )
            for p in rng.sample(eng, 6):
                when = work_time(rng, day)
                for name in ["ConsoleLogin", "DescribeInstances", "ListBuckets", "GetMetricData"]:
                    rows.append(
                        ct(
                            when,
                            "dev",
                            "signin.amazonaws.com"
                            if name == "ConsoleLogin"
                            else "ec2.amazonaws.com",
                            name,
                            "AssumedRole",
                            f"arn:aws:sts::412907731790:assumed-role/AWSReservedSSO_Engineer/{p.upn}",
                            "ASIA" + guid(rng)[:12].upper(),
                            org.egress[p.office],
                            UA,
                            "{}",
                        )
                    )
                    when += timedelta(seconds=rng.randint(5, 90))
        rows.append(
            ct(
                any_time(rng, day),
                "prod",
                "guardduty.amazonaws.com",
                "ListFindings",
                "AWSService",
                "guardduty.amazonaws.com",
                None,
                "guardduty.amazonaws.com",
                "guardduty.amazonaws.com",
                "{}",
            )
        )
    return rows


def ct(
    when: datetime,
    account: str,
    source: str,
    name: str,
    utype: str,
    arn: str,
    key: str | None,
    ip: str,
    agent: str,
    params: str,
    error: str | None = None,
    region: str = "eu-central-1",
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "account_id": ACCOUNTS.get(account, account),
        "aws_region": region,
        "event_source": source,
        "event_name": name,
        "user_type": utype,
        "user_arn": arn,
        "access_key_id": key,
        "source_ip": ip,
        "user_agent": agent,
        "error_code": error,
        "request_parameters": params,
    }

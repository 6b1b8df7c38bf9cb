"""Paired SaaS scenarios: mail forwarding, application consent, mass download."""

# ruff: noqa: E501, E731  (scenario data: long literal strings read better whole)

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scripts.eval_pack.common import graph_alert, siem_rule
from scripts.eval_pack.org.people import OFFICES, public_ip
from scripts.eval_pack.org.synth_base import Ctx, pair, saas, signin, ticket, z
from scripts.eval_pack.org.write import Scenario


def forwarding(c: Ctx) -> list[Scenario]:
    p = c.person("FIN", offset=11)
    t = c.when(2 + c.k * 4, 16)
    alert = graph_alert(
        title="Suspicious email forwarding activity",
        severity="medium",
        category="Exfiltration",
        when=z(t),
        service="microsoftDefenderForOffice365",
        description=f"A forwarding rule to an external address was set for {p.upn}.",
        evidence=[
            {
                "@odata.type": "#microsoft.graph.security.mailboxEvidence",
                "userAccount": {"userPrincipalName": p.upn},
            }
        ],
    )
    ip = public_ip(c.rng)
    ext = f"p.{p.login.split('.')[1]}.invoices@gmail.com"
    attack = {
        "title": "forwarding set from a foreign session",
        "verdicts": ["true_positive"],
        "rationale": f"the rule was set from {ip} (Nigeria, no MFA, unmanaged) and forwards mail containing 'invoice' to {ext}",
        "severity": ("high", "critical"),
        "techniques": ["T1114.003"],
        "techniques_accept": ["T1078.004", "T1564.008"],
        "must": [(ip, "saas_audit"), (ext, "saas_audit")],
        "inject": {
            "entra_signin": [
                signin(
                    t - timedelta(minutes=6),
                    p,
                    ip,
                    "Nigeria",
                    "Lagos",
                    mfa="not required",
                    app="Office 365 Exchange Online",
                )
            ],
            "saas_audit": [
                saas(
                    t,
                    p.upn,
                    "Exchange",
                    "New-InboxRule",
                    "Invoices",
                    ip,
                    f"SubjectContains: invoice; ForwardTo: {ext}; DeleteMessage: true",
                )
            ],
        },
    }
    partner = f"claims@{['hanseatic-insure.de', 'nordcargo-legal.nl', 'baltic-claims.eu'][c.k % 3]}"
    no = f"CHG-{4300 + c.k}"
    country, city = OFFICES[p.office]
    benign = {
        "title": "forwarding to the insurer approved for the claims project",
        "verdicts": ["benign"],
        "rationale": f"forwarding of the shared claims folder to {partner} was approved in {no}; set from the office, MFA satisfied",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), (partner, "saas_audit")],
        "inject": {
            "entra_signin": [
                signin(
                    t - timedelta(minutes=6),
                    p,
                    c.org.egress[p.office],
                    country,
                    city,
                    app="Office 365 Exchange Online",
                    device=p.device,
                    compliant=True,
                )
            ],
            "saas_audit": [
                saas(
                    t,
                    p.upn,
                    "Exchange",
                    "New-InboxRule",
                    "Claims to insurer",
                    c.org.egress[p.office],
                    f"FromFolder: Claims; ForwardTo: {partner}",
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(days=1),
                    48,
                    no,
                    p.login,
                    p.manager or c.org.in_dept("IT")[-1].login,
                    p.upn,
                    f"Forward claims correspondence to the insurer ({partner}) during the 2026 claims project",
                )
            ],
        },
    }
    return pair(f"saas-forwarding-{c.k}", "saas", alert, attack, benign)


def consent(c: Ctx) -> list[Scenario]:
    p = c.person("SAL", offset=12)
    t = c.when(3 + c.k * 4, 13)
    app = ["Doc Viewer Pro", "Mail Assistant", "PDF Signer"][c.k % 3]
    alert = siem_rule(
        title="User consented to an application with mail permissions",
        severity="medium",
        when=z(t),
        user=p.upn,
        product="Cloud app security",
        details={"application": app, "permissions": ["Mail.Read", "offline_access"]},
    )
    ip = public_ip(c.rng)
    lure = f"login-{p.login.split('.')[0]}-kestrelfreight.com.{['auth-verify.co', 'secure-docs.io', 'mail-check.app'][c.k % 3]}"
    attack = {
        "title": "consent phishing: the app then reads mail",
        "verdicts": ["true_positive"],
        "rationale": f"consent followed a visit to {lure}; the app's publisher is unverified and it read 300 messages from {ip}",
        "severity": ("high", "critical"),
        "techniques": ["T1528"],
        "techniques_accept": ["T1566.002", "T1114.002"],
        "must": [(lure, "proxy"), (ip, "saas_audit")],
        "inject": {
            "proxy": [
                {
                    "event_time": str(t - timedelta(minutes=2))[:19],
                    "user": p.upn,
                    "src_ip": p.ip,
                    "method": "GET",
                    "host": lure,
                    "path": "/oauth/start",
                    "status": 302,
                    "bytes_out": 600,
                    "bytes_in": 900,
                    "category": "Uncategorized",
                    "user_agent": "Chrome/122.0",
                    "action": "allowed",
                }
            ],
            "saas_audit": [
                saas(
                    t,
                    p.upn,
                    "AzureActiveDirectory",
                    "Consent to application",
                    app,
                    c.org.egress[p.office],
                    "publisher: unverified",
                )
            ]
            + [
                saas(
                    t + timedelta(minutes=5, seconds=i),
                    p.upn,
                    "Exchange",
                    "MailItemsAccessed",
                    f"{300} items",
                    ip,
                    app,
                    agent="python-httpx/0.27",
                )
                for i in range(3)
            ],
        },
    }
    no = f"CHG-{4400 + c.k}"
    benign = {
        "title": "app approved by IT for the sales team",
        "verdicts": ["benign"],
        "rationale": f"{app} is a verified-publisher add-in approved for sales in {no}; only the consent, from the office",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("publisher: verified", "saas_audit")],
        "inject": {
            "saas_audit": [
                saas(
                    t,
                    p.upn,
                    "AzureActiveDirectory",
                    "Consent to application",
                    app,
                    c.org.egress[p.office],
                    "publisher: verified",
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(days=2),
                    24 * 10,
                    no,
                    c.admin().login,
                    c.org.in_dept("IT")[-1].login,
                    f"app: {app}; group: sales",
                    f"Allow user consent to {app} (verified publisher) for the sales team",
                )
            ],
        },
    }
    return pair(f"saas-consent-{c.k}", "saas", alert, attack, benign)


def mass_download(c: Ctx) -> list[Scenario]:
    p = c.person("ENG", offset=13)
    t = c.when(6 + c.k * 3, 12)
    alert = siem_rule(
        title="Mass download from file storage",
        severity="medium",
        when=z(t),
        user=p.upn,
        product="Cloud app security",
        details={"files": 1200, "minutes": 20},
    )
    ip = public_ip(c.rng)
    files = lambda src, agent: [
        saas(
            t + timedelta(seconds=i),
            p.upn,
            "SharePoint",
            "FileDownloaded",
            f"/sites/eng/Shared Documents/designs/{i:04d}.dwg",
            src,
            agent=agent,
        )
        for i in range(0, 1200, 4)
    ]
    attack = {
        "title": "stolen session token downloads the design library",
        "verdicts": ["true_positive"],
        "rationale": f"the downloads came from {ip} with a scripted client on an unmanaged device while the user was in the office",
        "severity": ("high", "critical"),
        "techniques": ["T1530"],
        "techniques_accept": ["T1550.004", "T1213.002"],
        "must": [(ip, "saas_audit"), ("rclone/v1.66.0", "saas_audit")],
        "inject": {
            "saas_audit": files(ip, "rclone/v1.66.0"),
            "entra_signin": [
                signin(
                    t - timedelta(minutes=1),
                    p,
                    ip,
                    "Moldova",
                    "Chisinau",
                    mfa="not required",
                    app="SharePoint Online",
                    agent="rclone/v1.66.0",
                )
            ],
        },
    }
    no = f"CHG-{4500 + c.k}"
    dev = f"{p.device[:8]}-new"
    country, city = OFFICES[p.office]
    benign = {
        "title": "first sync of a replacement laptop",
        "verdicts": ["benign"],
        "rationale": f"the OneDrive client on the user's new compliant laptop ({dev}, change {no}) synced the library from the office",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), (dev, "entra_signin")],
        "inject": {
            "saas_audit": files(c.org.egress[p.office], "Microsoft SkyDriveSync 24.020.0128.0003"),
            "entra_signin": [
                signin(
                    t - timedelta(minutes=1),
                    p,
                    c.org.egress[p.office],
                    country,
                    city,
                    app="SharePoint Online",
                    client="Mobile Apps and Desktop clients",
                    device=dev,
                    compliant=True,
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(hours=3),
                    8,
                    no,
                    c.admin().login,
                    c.org.in_dept("IT")[-1].login,
                    f"{p.upn}; device {dev}",
                    f"Laptop replacement for {p.login}",
                )
            ],
        },
    }
    return pair(f"saas-mass-download-{c.k}", "saas", alert, attack, benign)


TEMPLATES: list[Any] = [forwarding, consent, mass_download]

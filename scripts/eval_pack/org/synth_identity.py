"""Paired identity scenarios (Entra, Okta, Windows logons): the same alert, one side an
attack, the other what the logs show to be ordinary."""

# ruff: noqa: E501, RUF005  (scenario data: long literal strings read better whole)

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scripts.eval_pack.common import graph_alert, siem_rule
from scripts.eval_pack.org.people import AD, MAIL, OFFICES, public_ip
from scripts.eval_pack.org.synth_base import Ctx, okta, pair, proc, saas, signin, ticket, z
from scripts.eval_pack.org.write import Scenario

ABROAD = [
    ("Japan", "Tokyo"),
    ("Brazil", "Sao Paulo"),
    ("Singapore", "Singapore"),
    ("United States", "Chicago"),
]


def new_country(c: Ctx) -> list[Scenario]:
    p = c.person("SAL", traveller=True)
    country, city = ABROAD[c.k % len(ABROAD)]
    ip = public_ip(c.rng)
    t = c.when(3 + c.k, 9)
    alert = graph_alert(
        title="Unfamiliar sign-in properties",
        severity="medium",
        category="InitialAccess",
        when=z(t),
        description=f"Sign-in by {p.upn} with properties not seen recently for this user.",
        evidence=[
            {
                "@odata.type": "#microsoft.graph.security.userEvidence",
                "userAccount": {"userPrincipalName": p.upn},
            },
            {"@odata.type": "#microsoft.graph.security.ipEvidence", "ipAddress": ip},
        ],
    )
    victims = [q for q in c.org.people if q.dept in ("SAL", "FIN")][:30]
    spray = [
        signin(
            t - timedelta(minutes=40 - i),
            q,
            ip,
            country,
            city,
            status=50126,
            mfa="not required",
            reason="Invalid username or password",
            agent="python-requests/2.31",
        )
        for i, q in enumerate(victims)
        if q != p
    ]
    rule = f"rss-sync-{c.k}"
    forward = f"ledger.archive{c.k}@proton.me"
    attack = {
        "title": "new-country sign-in after a password spray",
        "verdicts": ["true_positive"],
        "rationale": f"{ip} failed against {len(spray)} accounts minutes before; the session then created inbox rule {rule} forwarding to {forward}",
        "severity": ("high", "critical"),
        "techniques": ["T1110.003"],
        "techniques_accept": ["T1078.004", "T1114.003"],
        "must": [(rule, "saas_audit"), (forward, "saas_audit")],
        "inject": {
            "entra_signin": spray
            + [signin(t, p, ip, country, city, mfa="not required", agent="python-requests/2.31")],
            "saas_audit": [
                saas(
                    t + timedelta(minutes=4),
                    p.upn,
                    "Exchange",
                    "New-InboxRule",
                    rule,
                    ip,
                    f"ForwardTo: {forward}",
                )
            ],
        },
    }
    booking = f"TRV-{5200 + c.k}"
    benign = {
        "title": "new-country sign-in of a traveller",
        "verdicts": ["benign"],
        "rationale": f"travel booking {booking} puts {p.login} in {city} that day; MFA satisfied on the user's compliant device",
        "severity": ("info", "low"),
        "must": [(booking, "travel"), (p.device, "entra_signin")],
        "inject": {
            "entra_signin": [
                signin(t, p, ip, country, city, device=p.device, compliant=True),
                signin(
                    t + timedelta(hours=2),
                    p,
                    ip,
                    country,
                    city,
                    app="Microsoft Teams",
                    device=p.device,
                    compliant=True,
                ),
            ],
            "travel": [
                {
                    "depart": f"{t - timedelta(days=1):%Y-%m-%d} 07:00:00",
                    "return_date": f"{t + timedelta(days=3):%Y-%m-%d} 18:00:00",
                    "booking": booking,
                    "traveller": p.upn,
                    "country": country,
                    "city": city,
                    "purpose": "customer visit",
                }
            ],
        },
    }
    return pair(f"id-new-country-{c.k}", "identity", alert, attack, benign)


def push_burst(c: Ctx) -> list[Scenario]:
    p = c.person("OPS", offset=1)
    t = c.when(2 + c.k * 2, 21.5)
    alert = siem_rule(
        title="Repeated MFA push challenges",
        severity="medium",
        when=z(t),
        user=p.upn,
        product="Okta detection rule",
        details={"count": 9, "window_minutes": 12},
    )
    ip = public_ip(c.rng)
    pushes = [
        okta(
            t - timedelta(minutes=12 - i),
            "system.push.send_factor_verify_push",
            p.upn,
            ip,
            "Netherlands",
            "Amsterdam",
            outcome="FAILURE" if i < 8 else "SUCCESS",
            reason="USER_REJECTED" if i < 8 else None,
        )
        for i in range(9)
    ]
    attack = {
        "title": "push fatigue then an attacker session",
        "verdicts": ["true_positive"],
        "rationale": f"pushes came from {ip} (never used by {p.login}); the ninth was accepted and that session opened AWS IAM Identity Center",
        "severity": ("high", "critical"),
        "techniques": ["T1621"],
        "techniques_accept": ["T1078.004"],
        "must": [(ip, "okta_system_log")],
        "inject": {
            "okta_system_log": pushes
            + [
                okta(
                    t + timedelta(minutes=2),
                    "user.authentication.sso",
                    p.upn,
                    ip,
                    "Netherlands",
                    "Amsterdam",
                    target="AWS IAM Identity Center",
                )
            ]
        },
    }
    adm = c.admin()
    home_country, home_city = OFFICES[p.office]
    own = [
        okta(
            t - timedelta(minutes=12 - i),
            "system.push.send_factor_verify_push",
            p.upn,
            p.home_ip,
            home_country,
            home_city,
            outcome="FAILURE" if i < 8 else "SUCCESS",
            reason="INVALID_CREDENTIALS" if i < 8 else None,
        )
        for i in range(9)
    ]
    benign = {
        "title": "push burst while re-enrolling a new phone",
        "verdicts": ["benign"],
        "rationale": f"{adm.login} reset {p.login}'s factors at the helpdesk; every push came from the user's usual home address",
        "severity": ("info", "low"),
        "must": [
            (f"{adm.login}@{MAIL}", "okta_system_log"),
            ("user.mfa.factor.reset_all", "okta_system_log"),
        ],
        "inject": {
            "okta_system_log": [
                okta(
                    t - timedelta(minutes=25),
                    "user.mfa.factor.reset_all",
                    f"{adm.login}@{MAIL}",
                    c.org.egress["DE"],
                    "Germany",
                    "Hamburg",
                    target=p.upn,
                ),
                okta(
                    t - timedelta(minutes=14),
                    "user.mfa.factor.activate",
                    p.upn,
                    p.home_ip,
                    home_country,
                    home_city,
                    target="Okta Verify",
                ),
            ]
            + own
        },
    }
    return pair(f"id-push-burst-{c.k}", "identity", alert, attack, benign)


def lockout(c: Ctx) -> list[Scenario]:
    p = c.person("FIN", offset=2)
    t = c.when(4 + c.k * 3, 10)
    alert = siem_rule(
        title="Okta account locked after repeated failures",
        severity="medium",
        when=z(t),
        user=p.upn,
        product="Okta detection rule",
    )
    ip = public_ip(c.rng)
    fails = [
        okta(
            t - timedelta(seconds=10 * (25 - i)),
            "user.session.start",
            p.upn,
            ip,
            "Romania",
            "Bucharest",
            "FAILURE",
            "INVALID_CREDENTIALS",
            agent="Go-http-client/1.1",
        )
        for i in range(25)
    ]
    attack = {
        "title": "brute force stopped by the lockout",
        "verdicts": ["true_positive_no_impact"],
        "rationale": f"25 failures from {ip} (Go client) in 4 minutes, then the lock; no success from that address, so no impact",
        "severity": ("low", "medium"),
        "techniques": ["T1110.001"],
        "must": [(ip, "okta_system_log"), ("Go-http-client/1.1", "okta_system_log")],
        "inject": {
            "okta_system_log": fails
            + [okta(t, "user.account.lock", p.upn, ip, "Romania", "Bucharest")]
        },
    }
    egress = c.org.egress[p.office]
    country, city = OFFICES[p.office]
    old = [
        okta(
            t - timedelta(seconds=30 * (6 - i)),
            "user.session.start",
            p.upn,
            egress,
            country,
            city,
            "FAILURE",
            "INVALID_CREDENTIALS",
            agent="Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0)",
        )
        for i in range(6)
    ]
    benign = {
        "title": "lockout by the user's own Outlook after a password change",
        "verdicts": ["benign"],
        "rationale": f"{p.login} changed the password at {t - timedelta(minutes=40):%H:%M}; Outlook on the office network kept the old one",
        "severity": ("info", "low"),
        "must": [
            ("user.account.update_password", "okta_system_log"),
            ("Microsoft Outlook 16.0", "okta_system_log"),
        ],
        "inject": {
            "okta_system_log": [
                okta(
                    t - timedelta(minutes=40),
                    "user.account.update_password",
                    p.upn,
                    egress,
                    country,
                    city,
                )
            ]
            + old
            + [okta(t, "user.account.lock", p.upn, egress, country, city)]
        },
    }
    return pair(f"id-lockout-{c.k}", "identity", alert, attack, benign)


def legacy_blocked(c: Ctx) -> list[Scenario]:
    p = c.person("LOG", offset=3)
    t = c.when(1 + c.k * 4, 13)
    alert = graph_alert(
        title="Sign-in blocked by Conditional Access",
        severity="low",
        category="InitialAccess",
        when=z(t),
        description=f"A sign-in for {p.upn} with a legacy client was blocked by policy 'Block legacy authentication'.",
        evidence=[
            {
                "@odata.type": "#microsoft.graph.security.userEvidence",
                "userAccount": {"userPrincipalName": p.upn},
            }
        ],
    )
    ip = public_ip(c.rng)
    others = [q for q in c.org.people if q.dept == "LOG" and q != p][:12]
    spray = [
        signin(
            t - timedelta(minutes=20 - i),
            q,
            ip,
            "Vietnam",
            "Hanoi",
            status=50126,
            mfa="not required",
            client="IMAP4",
            reason="Invalid username or password",
            agent="BAV2ROPC",
        )
        for i, q in enumerate(others)
    ]
    attack = {
        "title": "legacy-auth spray: this user's password was right",
        "verdicts": ["true_positive"],
        "rationale": "53003 comes after a correct first factor: the password sprayed from that address works for this user; reset it",
        "severity": ("medium", "high"),
        "techniques": ["T1110.003"],
        "techniques_accept": ["T1078.004"],
        "must": [(ip, "entra_signin"), ("BAV2ROPC", "entra_signin")],
        "inject": {
            "entra_signin": spray
            + [
                signin(
                    t,
                    p,
                    ip,
                    "Vietnam",
                    "Hanoi",
                    status=53003,
                    mfa="not required",
                    client="IMAP4",
                    reason="Access has been blocked by Conditional Access policies",
                    agent="BAV2ROPC",
                )
            ]
        },
    }
    country, city = OFFICES[p.office]
    agent = "iOS/16.7 (20H19) dataaccessd/1.0"
    benign = {
        "title": "the user's own old phone mail app",
        "verdicts": ["benign"],
        "rationale": f"the blocked IMAP client is the user's iPhone mail app ({agent}) on their usual home address, hourly",
        "severity": ("info", "low"),
        "must": [(p.home_ip, "entra_signin"), ("dataaccessd", "entra_signin")],
        "inject": {
            "entra_signin": [
                signin(
                    t - timedelta(hours=h),
                    p,
                    p.home_ip,
                    country,
                    city,
                    status=53003,
                    mfa="not required",
                    client="IMAP4",
                    reason="Access has been blocked by Conditional Access policies",
                    agent=agent,
                )
                for h in range(0, 6)
            ]
        },
    }
    return pair(f"id-legacy-blocked-{c.k}", "identity", alert, attack, benign)


def rdp_server(c: Ctx) -> list[Scenario]:
    adm = c.admin(1)
    acct = f"adm-{adm.login}"
    server = ["SQL-01", "APP-01", "FS-01"][c.k % 3]
    t = c.when(5 + c.k, 20)
    alert = siem_rule(
        title="Interactive remote logon to a critical server",
        severity="medium",
        when=z(t),
        host=server,
        user=acct,
        product="Windows logon rule",
    )
    ws = c.person("SAL", offset=4)
    sec = lambda **kw: {"event_time": kw.pop("when"), "host": server, **kw}  # noqa: E731
    attack = {
        "title": "admin account used from a sales workstation",
        "verdicts": ["true_positive"],
        "rationale": f"the logon came from {ws.host} ({ws.ip}), not JUMP-01, after failures; then a payroll export",
        "severity": ("high", "critical"),
        "techniques": ["T1021.001"],
        "techniques_accept": ["T1078.002", "T1005"],
        "must": [(ws.ip, "windows_security"), ("C:\\Users\\Public\\pr.csv", "sysmon")],
        "inject": {
            "windows_security": [
                sec(
                    when=str(t - timedelta(minutes=3, seconds=i * 5))[:19],
                    event_id=4625,
                    target_user=acct,
                    logon_type=10,
                    ip_address=ws.ip,
                    status="0xc000006a",
                    message="An account failed to log on.",
                )
                for i in range(4)
            ]
            + [
                sec(
                    when=str(t)[:19],
                    event_id=4624,
                    target_user=acct,
                    logon_type=10,
                    ip_address=ws.ip,
                    message="An account was successfully logged on.",
                )
            ],
            "sysmon": [
                proc(
                    t + timedelta(minutes=6),
                    server,
                    f"{AD}\\{acct}",
                    "C:\\Program Files\\Microsoft SQL Server\\Client SDK\\ODBC\\170\\Tools\\Binn\\SQLCMD.EXE",
                    'sqlcmd -S localhost -Q "SELECT * FROM hr.payroll" -o C:\\Users\\Public\\pr.csv',
                    "C:\\Windows\\System32\\cmd.exe",
                )
            ],
        },
    }
    no = f"CHG-{3600 + c.k}"
    jump = c.org.servers["JUMP-01"].ip
    benign = {
        "title": "admin from the jump host in a change window",
        "verdicts": ["benign"],
        "rationale": f"{acct} came from JUMP-01 ({jump}) inside approved change {no} for {server}",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), (jump, "windows_security")],
        "inject": {
            "windows_security": [
                sec(
                    when=str(t)[:19],
                    event_id=4624,
                    target_user=acct,
                    logon_type=10,
                    ip_address=jump,
                    message="An account was successfully logged on.",
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(minutes=30),
                    3,
                    no,
                    adm.login,
                    c.org.in_dept("IT")[-1].login,
                    server,
                    f"Index maintenance and service restart on {server}",
                )
            ],
        },
    }
    return pair(f"id-rdp-server-{c.k}", "identity", alert, attack, benign)


TEMPLATES: list[Any] = [new_country, push_burst, lockout, legacy_blocked, rdp_server]

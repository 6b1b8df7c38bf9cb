"""Scenarios over the genuine recordings, each with a twin: the same alert, where the logs
show authorised IT work under an approved change instead of the recorded attack."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from scripts.eval_pack.common import siem_rule
from scripts.eval_pack.org.genuine_list import BASE, DATASETS
from scripts.eval_pack.org.otrf_map import Cast, found, load
from scripts.eval_pack.org.people import AD, MAIL, START, Org, ts
from scripts.eval_pack.org.write import Scenario

OTRF = "OTRF Security-Datasets (github.com/OTRF/Security-Datasets, MIT)"
RULES = {  # tactic -> (alert title, severity, accepted band)
    "credential_access": ("Credential access behaviour on endpoint", "high", ("high", "critical")),
    "defense_evasion": ("Defense evasion behaviour on endpoint", "medium", ("medium", "high")),
    "discovery": ("Reconnaissance commands on endpoint", "low", ("low", "medium")),
    "execution": ("Suspicious execution chain on endpoint", "medium", ("medium", "high")),
    "lateral_movement": ("Remote execution between hosts", "high", ("medium", "critical")),
    "persistence": ("Autostart or scheduled execution created", "medium", ("medium", "high")),
    "privilege_escalation": (
        "Privilege escalation behaviour on endpoint",
        "high",
        ("medium", "critical"),
    ),
    "collection": ("Device capture behaviour on endpoint", "medium", ("medium", "high")),
}
BENIGN = {  # tactic -> (image, command line, ticket summary)
    "credential_access": (
        "C:\\Windows\\System32\\reg.exe",
        "reg.exe save HKLM\\SYSTEM C:\\Windows\\Temp\\ipu\\system.hiv /y",
        "In-place upgrade preparation: system-state export on {host}",
    ),
    "defense_evasion": (
        "C:\\Windows\\System32\\auditpol.exe",
        'auditpol.exe /set /subcategory:"Filtering Platform Connection" /success:disable',
        "Apply audit baseline v7 (drop WFP connection auditing) on {host}",
    ),
    "discovery": (
        "C:\\Windows\\System32\\net.exe",
        "net.exe localgroup administrators",
        "Quarterly local-admin access review on {host}",
    ),
    "execution": (
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        "powershell.exe -ExecutionPolicy Bypass -File \\\\FS-01\\it$\\scripts\\Install-PrinterDrivers.ps1",
        "Printer driver roll-out on {host}",
    ),
    "lateral_movement": (
        "C:\\Windows\\PSEXESVC.exe",
        "C:\\Windows\\PSEXESVC.exe",
        "Remote repair of the monitoring agent on {host} from JUMP-01",
    ),
    "persistence": (
        "C:\\Windows\\System32\\schtasks.exe",
        'schtasks.exe /Create /TN "Kestrel\\AgentHealth" /TR "C:\\Program Files\\Kestrel\\agent-health.exe" /SC DAILY /RU SYSTEM',
        "Install agent health task on {host}",
    ),
    "privilege_escalation": (
        "C:\\Windows\\System32\\sc.exe",
        'sc.exe config Fax binPath= "C:\\Windows\\system32\\fxssvc.exe" start= disabled',
        "Harden {host}: disable unused Fax service",
    ),
    "collection": (
        "C:\\Windows\\System32\\SoundRecorder.exe",
        "SoundRecorder.exe /FILE C:\\Users\\Public\\mic-test.wav /DURATION 00:00:10",
        "Headset and microphone troubleshooting on {host}",
    ),
}


def slot(n: int) -> datetime:
    """The n-th recording's start: working hours on a weekday, spread over the window."""
    day = [d for d in range(14) if (START + timedelta(days=d)).weekday() < 5][n % 10]
    return START + timedelta(days=day, hours=8 + (n * 3) % 9, minutes=(n * 17) % 60)


def genuine(org: Org, otrf: Path) -> list[Scenario]:
    people = [p for p in org.people if not p.admin]
    admins = [p for p in org.people if p.admin]
    out = []
    for n, (name, tactic, techniques, needles) in enumerate(DATASETS):
        folder = otrf / name
        if not folder.is_dir():
            print(f"skip {name}: not unpacked", file=sys.stderr)
            continue
        victim, peer, peer2 = (
            people[(n * 7) % len(people)],
            people[(n * 7 + 3) % len(people)],
            people[(n * 7 + 5) % len(people)],
        )
        dc = org.servers["DC-01"]
        cast = Cast(
            {
                "victim": (victim.host, victim.ip),
                "peer": (peer.host, peer.ip),
                "peer2": (peer2.host, peer2.ip),
                "dc": (dc.name, dc.ip),
                "fs": ("FS-01", org.servers["FS-01"].ip),
            },
            {
                "victim": victim.login,
                "peer": peer.login,
                "peer2": peer2.login,
                "admin": f"adm-{admins[n % len(admins)].login}",
            },
        )
        rows = load(folder, cast, slot(n))
        hits = [(needle, hit) for needle in needles if (hit := found(rows, needle))]
        if not hits:
            print(f"skip {name}: no needle found", file=sys.stderr)
            continue
        first = min((h for _, h in hits), key=lambda h: h[1]["event_time"])
        host, when = first[1]["host"], first[1]["event_time"]
        title, sev, band = RULES[tactic]
        alert = siem_rule(
            title=title,
            severity=sev,
            when=when.replace(" ", "T")[:19] + "Z",
            host=host,
            product="Endpoint detection rule",
            details={
                "rule": {
                    "id": f"EDR-{tactic[:4].upper()}-{n:03d}",
                    "tactic": tactic.replace("_", " "),
                }
            },
        )
        must: list[tuple[str, str | None]] = [(needle, hit[0]) for needle, hit in hits]
        if (
            found({"t": rows.get("sysmon", []) + rows.get("windows_security", [])}, victim.login)
            and victim.host != host
        ):
            must.append((victim.login, None))
        sid = f"g{n:02d}-{tactic.replace('_', '-')}"
        contested = name == "psh_input_capture_promptforcreds"
        attack = Scenario(
            id=f"{sid}-a",
            title=f"{name} recorded on {host}",
            category="endpoint",
            alert=alert,
            verdicts=["true_positive", "inconclusive"] if contested else ["true_positive"],
            rationale=(
                f"the recording shows {', '.join(v for v, _ in must)} on {host} with no change ticket covering it"
                + (
                    "; whether credentials were typed into the prompt is not logged, so inconclusive is also right"
                    if contested
                    else ""
                )
            ),
            severity=band,
            must=must,
            inject={k: v for k, v in rows.items() if v},
            techniques=techniques,
            forbidden=[{"verdict": "benign"}],
            pair=f"{sid}-b",
            genuine=True,
            origin=f"{OTRF} {BASE.format(tactic=tactic, name=name)}",
            licence="MIT (logs); Apache-2.0 (alert)",
            notes=f"lab hosts mapped to {host}/{peer.host}/DC-01, lab users to {victim.login}/{peer.login}; times shifted to {slot(n):%Y-%m-%d %H:%M}",
        )
        out += [
            attack,
            benign_twin(
                org, attack, tactic, host, when, admins[(n + 1) % len(admins)].login, 3000 + n
            ),
        ]
    return out


def benign_twin(
    org: Org, attack: Scenario, tactic: str, host: str, when: str, admin: str, ticket_no: int
) -> Scenario:
    image, cmd, summary = BENIGN[tactic]
    t = datetime.fromisoformat(when)
    acct = f"adm-{admin}"
    jump = org.servers["JUMP-01"].ip
    ticket = f"CHG-{ticket_no}"
    sysmon = [
        {
            "event_time": ts(t),
            "host": host,
            "event_id": 1,
            "user": f"{AD}\\{acct}",
            "process_id": 4100 + ticket_no % 900,
            "image": image,
            "command_line": cmd,
            "parent_image": "C:\\Windows\\System32\\cmd.exe"
            if tactic != "lateral_movement"
            else "C:\\Windows\\System32\\services.exe",
            "parent_command_line": "cmd.exe"
            if tactic != "lateral_movement"
            else "C:\\Windows\\system32\\services.exe",
        }
    ]
    security: list[dict[str, Any]] = [
        {
            "event_time": ts(t - timedelta(minutes=2)),
            "host": host,
            "event_id": 4624,
            "target_user": acct,
            "logon_type": 3 if tactic == "lateral_movement" else 10,
            "ip_address": jump,
            "message": "An account was successfully logged on.",
        },
        {
            "event_time": ts(t - timedelta(minutes=2)),
            "host": host,
            "event_id": 4672,
            "subject_user": acct,
            "message": "Special privileges assigned to new logon.",
        },
    ]
    tickets = [
        {
            "window_start": ts(t - timedelta(minutes=30)),
            "window_end": ts(t + timedelta(hours=2)),
            "ticket": ticket,
            "requester": f"{admin}@{MAIL}",
            "approver": f"{org.in_dept('IT')[-1].login}@{MAIL}",
            "status": "approved",
            "targets": host,
            "summary": summary.format(host=host),
        }
    ]
    sid = attack.pair or ""
    return Scenario(
        id=sid,
        title=f"twin of {attack.id}: authorised IT work",
        category="endpoint",
        alert=attack.alert,
        verdicts=["benign"],
        rationale=f"{acct} ran {image.rsplit(chr(92), 1)[-1]} on {host} from JUMP-01 inside approved change {ticket}",
        severity=("info", "low"),
        must=[(ticket, "change_tickets"), (acct, "windows_security")],
        inject={"sysmon": sysmon, "windows_security": security, "change_tickets": tickets},
        forbidden=[{"verdict": "true_positive"}],
        pair=attack.id,
        genuine=False,
        notes=f"twin of {attack.id}: same alert; the logs show approved IT work instead",
    )

"""Background Sysmon and Windows Security events: office work, updates, the configuration
manager's scripts, the endpoint protection's scans, backups, admins on the jump host."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from scripts.eval_pack.org.people import AD, Org, Person, ts
from scripts.eval_pack.org.rhythm import active, days, weekday, work_time

P = "C:\\Program Files\\"
PX = "C:\\Program Files (x86)\\"
W = "C:\\Windows\\System32\\"
APPS = {
    "*": [
        P + "Microsoft Office\\root\\Office16\\OUTLOOK.EXE",
        P + "Google\\Chrome\\Application\\chrome.exe",
        "C:\\Users\\{u}\\AppData\\Local\\Microsoft\\Teams\\current\\Teams.exe",
        P + "Microsoft Office\\root\\Office16\\EXCEL.EXE",
    ],
    "FIN": [
        P + "Microsoft Office\\root\\Office16\\EXCEL.EXE",
        PX + "SAP\\FrontEnd\\SapGui\\saplogon.exe",
    ],
    "ENG": [
        P + "Git\\cmd\\git.exe",
        "C:\\Users\\{u}\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe",
        P + "Docker\\Docker\\Docker Desktop.exe",
        P + "Python311\\python.exe",
        W + "WindowsPowerShell\\v1.0\\powershell.exe",
    ],
    "LEG": [
        P + "Microsoft Office\\root\\Office16\\WINWORD.EXE",
        P + "Adobe\\Acrobat DC\\Acrobat\\Acrobat.exe",
    ],
    "IT": [W + "WindowsPowerShell\\v1.0\\powershell.exe", W + "mstsc.exe", W + "cmd.exe"],
}
ENG_CMDS = [
    "git pull --rebase",
    "python -m pytest -q",
    "docker compose up -d",
    "git push origin HEAD",
    "npm run build",
]


def sysmon_row(
    when: datetime,
    host: str,
    user: str,
    image: str,
    cmd: str,
    parent: str,
    rng: random.Random,
    event_id: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "host": host,
        "event_id": event_id,
        "user": user,
        "process_id": rng.randint(800, 15000),
        "image": image,
        "command_line": cmd,
        "parent_image": parent,
        **extra,
    }


def workstation_day(p: Person, day: datetime, rng: random.Random) -> list[dict[str, Any]]:
    user = f"{AD}\\{p.login}"
    start = work_time(rng, day, 6.5, 9.5)
    rows = [
        sysmon_row(
            start,
            p.host,
            user,
            W.replace("System32\\", "") + "explorer.exe",
            "C:\\Windows\\Explorer.EXE",
            W + "userinit.exe",
            rng,
        )
    ]
    apps = APPS["*"] + APPS.get(p.dept, [])
    for _ in range(rng.randint(6, 14)):
        when = work_time(rng, day)
        image = rng.choice(apps).format(u=p.login)
        cmd = f'"{image}"'
        if image.endswith(("git.exe", "python.exe", "powershell.exe")) and p.dept == "ENG":
            cmd = rng.choice(ENG_CMDS)
        rows.append(sysmon_row(when, p.host, user, image, cmd, "C:\\Windows\\explorer.exe", rng))
        if image.endswith("chrome.exe") or image.endswith("OUTLOOK.EXE"):
            rows.append(
                sysmon_row(
                    when + timedelta(seconds=2),
                    p.host,
                    user,
                    image,
                    None,
                    None,
                    rng,
                    3,
                    destination_ip=rng.choice(["52.97.146.2", "142.250.74.110", "13.107.42.14"]),
                    destination_port=443,
                )
            )
    if rng.random() < 0.6:  # the configuration manager's inventory script (noisy, harmless)
        when = day + timedelta(hours=rng.choice([10, 14]), minutes=rng.randint(0, 59))
        rows.append(
            sysmon_row(
                when,
                p.host,
                "NT AUTHORITY\\SYSTEM",
                W + "WindowsPowerShell\\v1.0\\powershell.exe",
                "powershell.exe -NoProfile -ExecutionPolicy Bypass -File C:\\Windows\\CCM\\SystemTemp\\inventory.ps1",
                "C:\\Windows\\CCM\\CcmExec.exe",
                rng,
            )
        )
    if rng.random() < 0.5:  # endpoint protection opening lsass for its scan (noisy, harmless)
        rows.append(
            sysmon_row(
                work_time(rng, day),
                p.host,
                "NT AUTHORITY\\SYSTEM",
                None,
                None,
                None,
                rng,
                10,
                source_image="C:\\ProgramData\\Microsoft\\Windows Defender\\Platform\\4.18.24010.12-0\\MsMpEng.exe",
                target_image=W + "lsass.exe",
                granted_access="0x1410",
            )
        )
    if rng.random() < 0.3:
        rows.append(
            sysmon_row(
                work_time(rng, day),
                p.host,
                "NT AUTHORITY\\SYSTEM",
                PX + "Google\\Update\\GoogleUpdate.exe",
                None,
                None,
                rng,
                13,
                target_object="HKLM\\SOFTWARE\\WOW6432Node\\Google\\Update\\ClientState\\{8A69D345}\\ap",
                details="x64-stable",
            )
        )
    return rows


def security_day(org: Org, p: Person, day: datetime, rng: random.Random) -> list[dict[str, Any]]:
    when = work_time(rng, day, 6.5, 9.5)
    rows = [
        {
            "event_time": ts(when),
            "host": p.host,
            "event_id": 4624,
            "subject_user": None,
            "target_user": p.login,
            "logon_type": 2,
            "ip_address": "127.0.0.1",
            "process_name": W + "svchost.exe",
            "message": "An account was successfully logged on.",
        },
        {
            "event_time": ts(when - timedelta(seconds=1)),
            "host": "DC-0" + str(1 + rng.randint(0, 1)),
            "event_id": 4768,
            "subject_user": None,
            "target_user": p.login,
            "ip_address": p.ip,
            "status": "0x0",
            "message": "A Kerberos authentication ticket (TGT) was requested.",
        },
    ]
    for _ in range(rng.randint(1, 3)):
        t = work_time(rng, day)
        rows.append(
            {
                "event_time": ts(t),
                "host": "FS-01",
                "event_id": 4624,
                "target_user": p.login,
                "logon_type": 3,
                "ip_address": p.ip,
                "message": "An account was successfully logged on.",
            }
        )
        rows.append(
            {
                "event_time": ts(t),
                "host": "FS-01",
                "event_id": 5140,
                "target_user": p.login,
                "ip_address": p.ip,
                "share_name": f"\\\\*\\{p.dept.lower()}",
                "message": "A network share object was accessed.",
            }
        )
    if rng.random() < 0.04:
        rows.append(
            {
                "event_time": ts(when - timedelta(seconds=20)),
                "host": p.host,
                "event_id": 4625,
                "target_user": p.login,
                "logon_type": 2,
                "status": "0xc000006a",
                "ip_address": "127.0.0.1",
                "message": "An account failed to log on. Bad password.",
            }
        )
    if p.admin and weekday(day):
        t = work_time(rng, day)
        rows.append(
            {
                "event_time": ts(t),
                "host": "JUMP-01",
                "event_id": 4624,
                "target_user": f"adm-{p.login}",
                "logon_type": 10,
                "ip_address": p.ip,
                "message": "An account was successfully logged on.",
            }
        )
        rows.append(
            {
                "event_time": ts(t),
                "host": "JUMP-01",
                "event_id": 4672,
                "subject_user": f"adm-{p.login}",
                "message": "Special privileges assigned to new logon.",
            }
        )
    return rows


def servers_day(org: Org, day: datetime, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    for h in range(1, 4):  # nightly backup
        rows.append(
            sysmon_row(
                day + timedelta(hours=h),
                "BACKUP-01",
                f"{AD}\\svc-backup",
                P + "Veeam\\Backup and Replication\\Backup\\Veeam.Backup.Manager.exe",
                f"Veeam.Backup.Manager.exe -JobId {{job-{h}}} -Incremental",
                P + "Veeam\\Backup and Replication\\Backup\\Veeam.Backup.Service.exe",
                rng,
            )
        )
    for name in ("DC-01", "DC-02", "SQL-01", "APP-01", "APP-02", "FS-01"):
        for _ in range(rng.randint(4, 9)):
            rows.append(
                sysmon_row(
                    day + timedelta(seconds=rng.randint(0, 86399)),
                    name,
                    "NT AUTHORITY\\SYSTEM",
                    W
                    + rng.choice(
                        ["svchost.exe", "wbem\\WmiPrvSE.exe", "taskhostw.exe", "conhost.exe"]
                    ),
                    None,
                    W + "services.exe",
                    rng,
                )
            )
    return rows


def endpoint(org: Org) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(41)
    sysmon: list[dict[str, Any]] = []
    security: list[dict[str, Any]] = []
    for day in days():
        for p in org.people:
            if active(rng, day):
                sysmon += workstation_day(p, day, rng)
                security += security_day(org, p, day, rng)
        sysmon += servers_day(org, day, rng)
    return sysmon, security

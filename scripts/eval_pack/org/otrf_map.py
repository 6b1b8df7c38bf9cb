"""Genuine Windows recordings (OTRF Security-Datasets, MIT) mapped into the organisation:
host names, accounts, domains and private addresses replaced consistently, times shifted
into the window, the rows that would give the capture away dropped (log cleared, Sysmon
configuration changes), and the columns cut to the shared tables' schema."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scripts.eval_pack.org.people import AD, ts

DROP = {("security", 1102), ("sysmon", 4), ("sysmon", 16), ("sysmon", 255)}
SYSMON = {
    "User": "user",
    "ProcessId": "process_id",
    "Image": "image",
    "CommandLine": "command_line",
    "ParentImage": "parent_image",
    "ParentCommandLine": "parent_command_line",
    "TargetImage": "target_image",
    "SourceImage": "source_image",
    "GrantedAccess": "granted_access",
    "TargetObject": "target_object",
    "Details": "details",
    "TargetFilename": "target_filename",
    "ImageLoaded": "image_loaded",
    "DestinationIp": "destination_ip",
    "DestinationPort": "destination_port",
    "DestinationHostname": "destination_hostname",
    "QueryName": "query_name",
    "Hashes": "hashes",
}
SECURITY = {
    "SubjectUserName": "subject_user",
    "TargetUserName": "target_user",
    "LogonType": "logon_type",
    "IpAddress": "ip_address",
    "NewProcessName": "process_name",
    "ObjectName": "object_name",
    "ServiceName": "service_name",
    "ShareName": "share_name",
    "Status": "status",
}
INTS = {"process_id", "destination_port", "logon_type"}
LAB_HOSTS = {  # recording host (short, lower) -> role in the scenario
    "workstation5": "victim",
    "pedro01": "victim",
    "pedro-computer": "victim",
    "it001": "victim",
    "workstation6": "peer",
    "hr001": "peer",
    "workstation7": "peer2",
    "acct001": "peer2",
    "mordordc": "dc",
    "dc01": "dc",
    "hfdc01": "dc",
    "file001": "fs",
}
LAB_DOMAINS = [
    "theshire.local",
    "mordor.local",
    "shire.com",
    "pandalab.com",
    "azsentinel.local",
    "blacksmith.local",
]
LAB_NETBIOS = ["THESHIRE", "MORDOR", "SHIRE", "PANDALAB"]
LAB_USERS = {
    "pgustavo": "victim",
    "wardog": "victim",
    "pedro": "victim",
    "it01-pedro": "victim",
    "pedro-admin": "admin",
    "sbeavers": "peer",
    "nmartha": "peer2",
}


@dataclass
class Cast:
    """Who plays each lab role: host names, their addresses and account logins."""

    hosts: dict[str, tuple[str, str]]  # role -> (host, ip)
    users: dict[str, str]  # role -> login


def _when(r: dict[str, Any]) -> datetime | None:
    raw = str(r.get("@timestamp") or r.get("UtcTime") or r.get("TimeCreated") or "")
    if not raw:
        return None
    raw = raw.replace("Z", "").replace("T", " ")[:26]
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


def replacer(cast: Cast) -> Any:
    pairs: dict[str, str] = {}
    for lab, role in LAB_HOSTS.items():
        host = cast.hosts.get(role, cast.hosts["dc"])[0]
        for dom in LAB_DOMAINS:
            pairs[f"{lab}.{dom}"] = f"{host.lower()}.kestrel.internal"
        pairs[f"{lab}$"] = f"{host}$"
        pairs[lab] = host
    for lab, role in sorted(LAB_USERS.items(), key=lambda kv: -len(kv[0])):
        pairs[lab] = cast.users.get(role, cast.users["victim"])
    for dom in LAB_DOMAINS:
        pairs[dom] = "kestrel.internal"
    for nb in LAB_NETBIOS:
        pairs[nb] = AD
    pairs["atomicredteam"] = "Tools"
    pairs["atomic testing"] = "tcp-450-in"
    pairs["cyb3rward0g"] = "AgentUpd"
    pairs["172.18.39.5"] = cast.hosts["victim"][1]
    pairs["172.18.39.6"] = cast.hosts["peer"][1]
    pairs["172.18.38.5"] = cast.hosts["dc"][1]
    pairs["172.18.39.5"] = cast.hosts["victim"][1]
    keys = sorted(pairs, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![A-Za-z0-9.-])(" + "|".join(re.escape(k) for k in keys) + r")(?![A-Za-z0-9-])", re.I
    )
    lower = {k.lower(): v for k, v in pairs.items()}
    other = re.compile(r"\b(?:172\.18|10\.10\.10|192\.168\.\d{1,3})\.\d{1,3}(?:\.\d{1,3})?\b")

    leftover = re.compile(r"mordor|theshire|atomic", re.I)

    def sub(text: str) -> str:
        text = pattern.sub(lambda m: lower[m.group(0).lower()], text)
        text = leftover.sub("Kestrel", text)
        return other.sub(
            lambda m: "10.1.9." + str(10 + sum(map(int, re.findall(r"\d+", m.group(0)))) % 200),
            text,
        )

    return sub


def load(folder: Path, cast: Cast, start: datetime) -> dict[str, list[dict[str, Any]]]:
    """The recording's Sysmon and Security rows, mapped, first event at ``start``."""
    raw = []
    for file in sorted(folder.glob("*.json")):
        for line in file.read_text("utf-8", errors="replace").splitlines():
            try:
                raw.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    timed = [(w, r) for r in raw if (w := _when(r)) is not None]
    if not timed:
        return {}
    first = min(w for w, _ in timed)
    sub = replacer(cast)
    out: dict[str, list[dict[str, Any]]] = {"sysmon": [], "windows_security": []}
    for when, r in timed:
        channel = str(r.get("Channel") or "")
        table = (
            "sysmon"
            if "Sysmon" in channel
            else "security"
            if channel.lower() == "security"
            else None
        )
        if table is None or (table, int(r.get("EventID") or 0)) in DROP:
            continue
        host = sub(str(r.get("Hostname") or "").split(".")[0])
        row: dict[str, Any] = {
            "event_time": ts(start + (when - first)),
            "host": host,
            "event_id": int(r.get("EventID") or 0),
        }
        for key, col in (SYSMON if table == "sysmon" else SECURITY).items():
            value = r.get(key)
            if value in (None, "", "-"):
                continue
            if col in INTS:
                try:
                    row[col] = int(str(value), 0)
                except ValueError:
                    continue
            else:
                row[col] = sub(str(value))
        if table == "security":
            row["message"] = sub(str(r.get("Message") or ""))[:300]
        out["sysmon" if table == "sysmon" else "windows_security"].append(row)
    return out


def found(rows: dict[str, list[dict[str, Any]]], needle: str) -> tuple[str, dict[str, Any]] | None:
    """The first (table, row) holding ``needle`` in any text column (case-insensitive)."""
    low = needle.lower()
    hits = [
        (t, r)
        for t, rs in rows.items()
        for r in rs
        if any(isinstance(v, str) and low in v.lower() for k, v in r.items() if k != "event_time")
    ]
    return min(hits, key=lambda h: h[1]["event_time"]) if hits else None


_ = (UTC, timedelta)

"""The org pack's tables: what the model reads (name, description, columns) and the one
Parquet schema per table that background and injected rows share."""

# ruff: noqa: E741  (I is the INTEGER type name)

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

S, I, B, T, F, BOOL = "VARCHAR", "INTEGER", "BIGINT", "TIMESTAMP", "DOUBLE", "BOOLEAN"


@dataclass(frozen=True)
class Spec:
    id: str
    name: str
    description: str
    columns: dict[str, str]  # column -> DuckDB type, in order
    time_column: str = "event_time"
    notes: dict[str, str] = field(default_factory=dict)


SPECS = [
    Spec(
        "sysmon",
        "corp.endpoint.sysmon",
        "Sysmon events of every Windows workstation and server: event_id 1 process "
        "creation, 3 network connection, 7 image load, 8 remote thread, 10 process access, "
        "11 file create, 12/13 registry, 22 DNS query. host is the short host name.",
        {
            "event_time": T,
            "host": S,
            "event_id": I,
            "user": S,
            "process_id": B,
            "image": S,
            "command_line": S,
            "parent_image": S,
            "parent_command_line": S,
            "target_image": S,
            "source_image": S,
            "granted_access": S,
            "target_object": S,
            "details": S,
            "target_filename": S,
            "image_loaded": S,
            "destination_ip": S,
            "destination_port": I,
            "destination_hostname": S,
            "query_name": S,
            "hashes": S,
        },
    ),
    Spec(
        "windows_security",
        "corp.endpoint.windows_security",
        "Windows Security event log of every host: 4624/4625 logon success/failure "
        "(logon_type, ip_address), 4672 special privileges, 4688 process, 4697/7045 service "
        "installed, 4720/4732 account and group changes, 4768/4769 Kerberos, 5140/5145 share "
        "access. message is the event's text, cut.",
        {
            "event_time": T,
            "host": S,
            "event_id": I,
            "subject_user": S,
            "target_user": S,
            "logon_type": I,
            "ip_address": S,
            "process_name": S,
            "object_name": S,
            "service_name": S,
            "share_name": S,
            "status": S,
            "message": S,
        },
    ),
    Spec(
        "entra_signin",
        "corp.identity.entra_signin",
        "Microsoft Entra ID sign-in log: user_principal_name, app, client_app (Browser, "
        "Mobile Apps and Desktop clients, IMAP4, Exchange ActiveSync...), ip, country, city, "
        "status_code (0 = success, else the AADSTS error code), failure_reason, mfa "
        "(satisfied, not required, failed), device_id, device_compliant, risk_level.",
        {
            "event_time": T,
            "user_principal_name": S,
            "app": S,
            "client_app": S,
            "ip": S,
            "country": S,
            "city": S,
            "status_code": I,
            "failure_reason": S,
            "mfa": S,
            "device_id": S,
            "device_compliant": BOOL,
            "risk_level": S,
            "user_agent": S,
        },
    ),
    Spec(
        "okta_system_log",
        "corp.identity.okta_system_log",
        "Okta System Log: event_type (user.session.start, user.authentication.sso, "
        "user.authentication.auth_via_mfa, system.push.send_factor_verify_push, "
        "user.account.lock, user.account.privilege.grant, ...), actor (login), target, "
        "client_ip, country, city, outcome (SUCCESS, FAILURE, DENY, CHALLENGE) and reason.",
        {
            "event_time": T,
            "event_type": S,
            "actor": S,
            "target": S,
            "client_ip": S,
            "country": S,
            "city": S,
            "user_agent": S,
            "outcome": S,
            "reason": S,
        },
    ),
    Spec(
        "firewall",
        "corp.network.firewall",
        "Firewall session log of the office, data-centre and DMZ firewalls: src_ip, "
        "src_port, dst_ip, dst_port, proto, action (allow, deny), bytes_out (sent by src), "
        "bytes_in, duration_s, app (the identified application), rule.",
        {
            "event_time": T,
            "src_ip": S,
            "src_port": I,
            "dst_ip": S,
            "dst_port": I,
            "proto": S,
            "action": S,
            "bytes_out": B,
            "bytes_in": B,
            "duration_s": F,
            "app": S,
            "rule": S,
        },
    ),
    Spec(
        "dns",
        "corp.network.dns",
        "DNS resolver query log (both internal resolvers): client_ip, query, qtype, "
        "answer (first answer), rcode.",
        {"event_time": T, "client_ip": S, "query": S, "qtype": S, "answer": S, "rcode": S},
    ),
    Spec(
        "proxy",
        "corp.network.proxy",
        "Web proxy log of outbound HTTP(S): user, src_ip, method, host, path, status, "
        "bytes_out (request), bytes_in (response), category, user_agent, action.",
        {
            "event_time": T,
            "user": S,
            "src_ip": S,
            "method": S,
            "host": S,
            "path": S,
            "status": I,
            "bytes_out": B,
            "bytes_in": B,
            "category": S,
            "user_agent": S,
            "action": S,
        },
    ),
    Spec(
        "cloudtrail",
        "corp.cloud.cloudtrail",
        "AWS CloudTrail events of the company's AWS accounts: account_id, aws_region, who "
        "(user_type, user_arn, access_key_id) called which API (event_source, event_name) "
        "from where (source_ip, user_agent), error_code when it failed, request_parameters.",
        {
            "event_time": T,
            "account_id": S,
            "aws_region": S,
            "event_source": S,
            "event_name": S,
            "user_type": S,
            "user_arn": S,
            "access_key_id": S,
            "source_ip": S,
            "user_agent": S,
            "error_code": S,
            "request_parameters": S,
        },
    ),
    Spec(
        "saas_audit",
        "corp.saas.audit_log",
        "Audit log of the SaaS suite (mail, file storage, CRM, code hosting): user, app, "
        "operation (FileDownloaded, SharingSet, New-InboxRule, Consent to application, "
        "Export, ...), object, target, client_ip, user_agent, result.",
        {
            "event_time": T,
            "user": S,
            "app": S,
            "operation": S,
            "object": S,
            "target": S,
            "client_ip": S,
            "user_agent": S,
            "result": S,
        },
    ),
    Spec(
        "assets",
        "corp.inventory.assets",
        "Asset inventory (CMDB): hostname, ip, os, owner, department, role, criticality, "
        "notes (e.g. maintenance or scan windows).",
        {
            "updated": T,
            "hostname": S,
            "ip": S,
            "os": S,
            "owner": S,
            "department": S,
            "role": S,
            "criticality": S,
            "notes": S,
        },
        time_column="updated",
    ),
    Spec(
        "directory",
        "corp.inventory.directory",
        "People and accounts directory: account (login), display_name, department, title, "
        "manager, country, office, account_type (person, admin, service), enabled, created.",
        {
            "updated": T,
            "account": S,
            "display_name": S,
            "department": S,
            "title": S,
            "manager": S,
            "country": S,
            "office": S,
            "account_type": S,
            "enabled": BOOL,
            "created": T,
        },
        time_column="updated",
    ),
    Spec(
        "change_tickets",
        "corp.itsm.change_tickets",
        "Approved and requested IT changes: ticket, requester, approver, status, "
        "window_start, window_end, targets (hosts, accounts or resources), summary.",
        {
            "window_start": T,
            "window_end": T,
            "ticket": S,
            "requester": S,
            "approver": S,
            "status": S,
            "targets": S,
            "summary": S,
        },
        time_column="window_start",
    ),
    Spec(
        "travel",
        "corp.hr.travel_bookings",
        "Business travel booked through the travel desk: booking, traveller (login), "
        "depart, return_date, country, city, purpose.",
        {
            "depart": T,
            "return_date": T,
            "booking": S,
            "traveller": S,
            "country": S,
            "city": S,
            "purpose": S,
        },
        time_column="depart",
    ),
]
BY_ID = {s.id: s for s in SPECS}


def write_parquet(path: Path, table: str, rows: list[dict[str, Any]]) -> None:
    """``rows`` (dicts; missing columns null) as zstd Parquet with ``table``'s schema,
    in the given order, reproducibly (one thread)."""
    spec = BY_ID[table]
    unknown = {k for r in rows for k in r} - set(spec.columns)
    assert not unknown, f"{table}: unknown columns {sorted(unknown)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "rows.jsonl"
        with src.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({c: r.get(c) for c in spec.columns}, default=str) + "\n")
        cols = ", ".join(f"'{c}': '{t}'" for c, t in spec.columns.items())
        con = duckdb.connect()
        try:
            con.execute("SET threads=1")
            con.execute(
                f"COPY (SELECT * FROM read_json('{src}', format='newline_delimited', "
                f"columns={{{cols}}})) "
                f"TO '{path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)"
            )
        finally:
            con.close()

"""Table shapes of the synthetic scenarios (descriptions say SYNTHETIC) and row helpers."""

from __future__ import annotations

from typing import Any

from scripts.eval_pack.common import Table, at

SYN = " SYNTHETIC data written for socbot's eval pack."


def cloudtrail(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.aws.cloudtrail",
        "AWS CloudTrail events of the account: who (user_arn, user_type, access_key_id) called "
        "which API (event_source, event_name) from where (source_ip, user_agent), and "
        "error_code when it failed." + SYN,
        rows,
    )


def ct(
    when: str,
    name: str,
    arn: str,
    ip: str,
    *,
    source: str = "iam.amazonaws.com",
    agent: str = "aws-cli/2.15",
    error: str | None = None,
    params: str = "{}",
    user_type: str = "IAMUser",
) -> dict[str, Any]:
    return {
        "event_time": when,
        "event_name": name,
        "event_source": source,
        "source_ip": ip,
        "user_type": user_type,
        "user_arn": arn,
        "user_agent": agent,
        "error_code": error,
        "request_parameters": params,
    }


def gcp_audit(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.gcp.audit_logs",
        "GCP Cloud Audit Logs (admin activity): principal_email, caller_ip, method_name, "
        "resource_name, request_summary; status_code 0 = OK." + SYN,
        rows,
    )


def audit(
    when: str, who: str, ip: str, method: str, resource: str, summary: str, status: int = 0
) -> dict[str, Any]:
    return {
        "event_time": when,
        "principal_email": who,
        "caller_ip": ip,
        "method_name": method,
        "resource_name": resource,
        "request_summary": summary,
        "status_code": status,
    }


def okta_log(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.okta.system_log",
        "Okta System Log: event_type (user.session.start, user.authentication.auth_via_mfa, "
        "system.push.send_factor_verify_push, user.account.privilege.grant...), actor (login), "
        "client_ip, country, outcome (SUCCESS/FAILURE/DENY) and reason." + SYN,
        rows,
    )


def okta(
    when: str,
    event: str,
    actor: str,
    ip: str,
    outcome: str = "SUCCESS",
    reason: str | None = None,
    country: str = "United States",
    target: str | None = None,
) -> dict[str, Any]:
    return {
        "event_time": when,
        "event_type": event,
        "actor": actor,
        "client_ip": ip,
        "country": country,
        "outcome": outcome,
        "reason": reason,
        "target": target,
    }


def signins(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.entra.signin_logs",
        "Microsoft Entra ID sign-in logs: user_principal_name, app, client_app (Browser, "
        "IMAP4, ...), ip, country, city, status_code (0 = success, else the AADSTS error), "
        "mfa (satisfied/none), device_id, device_compliant." + SYN,
        rows,
    )


def signin(
    when: str,
    upn: str,
    ip: str,
    country: str,
    *,
    city: str = "",
    status: int = 0,
    app: str = "Office 365",
    client: str = "Browser",
    mfa: str = "satisfied",
    device: str | None = None,
    compliant: bool = False,
) -> dict[str, Any]:
    return {
        "event_time": when,
        "user_principal_name": upn,
        "app": app,
        "client_app": client,
        "ip": ip,
        "country": country,
        "city": city,
        "status_code": status,
        "mfa": mfa,
        "device_id": device,
        "device_compliant": compliant,
    }


def edr(host: str, rows: list[dict[str, Any]]) -> Table:
    return Table(
        f"eval.edr.{host.lower().replace('-', '_')}_events",
        f"EDR / Sysmon events of host {host}: event_id 1 process creation (image, "
        "command_line, parent_image, user), 3 network connection (destination_ip, "
        "destination_port), 10 process access (target_image, granted_access)." + SYN,
        rows,
    )


def proc(
    when: str, host: str, user: str, image: str, cmd: str, parent: str, **extra: Any
) -> dict[str, Any]:
    return {
        "event_time": when,
        "host": host,
        "event_id": extra.pop("event_id", 1),
        "user": user,
        "image": image,
        "command_line": cmd,
        "parent_image": parent,
        **extra,
    }


def flows(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.net.conn_logs",
        "Zeek-style connection logs at the network edge: src_ip, src_port, dst_ip, dst_port, "
        "proto, bytes_out (from src), bytes_in, duration_s, service." + SYN,
        rows,
    )


def conn(
    when: str,
    src: str,
    dst: str,
    port: int,
    *,
    out: int = 800,
    inn: int = 4000,
    dur: float = 1.2,
    service: str = "ssl",
    sport: int = 51000,
) -> dict[str, Any]:
    return {
        "event_time": when,
        "src_ip": src,
        "src_port": sport,
        "dst_ip": dst,
        "dst_port": port,
        "proto": "tcp",
        "bytes_out": out,
        "bytes_in": inn,
        "duration_s": dur,
        "service": service,
    }


def dns_log(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.net.dns_logs",
        "DNS resolver logs: client_ip, query, qtype, answer, rcode." + SYN,
        rows,
    )


def dns(
    when: str,
    client: str,
    query: str,
    qtype: str = "A",
    answer: str | None = None,
    rcode: str = "NOERROR",
) -> dict[str, Any]:
    return {
        "event_time": when,
        "client_ip": client,
        "query": query,
        "qtype": qtype,
        "answer": answer,
        "rcode": rcode,
    }


def assets(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "eval.cmdb.assets",
        "Asset inventory (CMDB): ip, hostname, owner team, role and notes." + SYN,
        rows,
        time_column="updated",
    )


def asset(ip: str, host: str, team: str, role: str, notes: str = "") -> dict[str, Any]:
    return {
        "updated": "2025-10-01T00:00:00Z",
        "ip": ip,
        "hostname": host,
        "team": team,
        "role": role,
        "notes": notes,
    }


def spread(base: str, count: int, step: float, make: Any) -> list[dict[str, Any]]:
    """``count`` rows ``make(i, when)`` every ``step`` seconds from ``base``."""
    return [make(i, at(base, i * step)) for i in range(count)]

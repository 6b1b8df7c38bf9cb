"""Row makers and the pair helper for the invented paired scenarios."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scripts.eval_pack.org.identity_bg import UA, ct
from scripts.eval_pack.org.people import MAIL, START, Org, Person, ts
from scripts.eval_pack.org.write import Scenario

NOT_ATTACK = ("benign", "false_positive", "inconclusive")


@dataclass
class Ctx:
    org: Org
    k: int  # instance number of the template
    rng: random.Random

    def person(
        self, dept: str | None = None, *, traveller: bool = False, offset: int = 0
    ) -> Person:
        pool = [
            p
            for p in self.org.people
            if (dept is None or p.dept == dept) and not p.admin and (p.traveller or not traveller)
        ]
        return pool[(self.k * 11 + offset * 5 + len(dept or "")) % len(pool)]

    def admin(self, offset: int = 0) -> Person:
        pool = [p for p in self.org.people if p.admin]
        return pool[(self.k + offset) % len(pool)]

    def when(self, day: int, hour: float) -> datetime:
        return START + timedelta(days=day, hours=hour, minutes=(self.k * 13) % 50)


def z(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def signin(
    when: datetime,
    p: Person | str,
    ip: str,
    country: str,
    city: str,
    *,
    status: int = 0,
    mfa: str = "satisfied",
    app: str = "Office 365",
    client: str = "Browser",
    device: str | None = None,
    compliant: bool = False,
    reason: str | None = None,
    risk: str = "none",
    agent: str = UA,
) -> dict[str, Any]:
    upn = p.upn if isinstance(p, Person) else p
    return {
        "event_time": ts(when),
        "user_principal_name": upn,
        "app": app,
        "client_app": client,
        "ip": ip,
        "country": country,
        "city": city,
        "status_code": status,
        "failure_reason": reason,
        "mfa": mfa,
        "device_id": device,
        "device_compliant": compliant,
        "risk_level": risk,
        "user_agent": agent,
    }


def okta(
    when: datetime,
    event: str,
    actor: str,
    ip: str,
    country: str,
    city: str = "",
    outcome: str = "SUCCESS",
    reason: str | None = None,
    target: str | None = None,
    agent: str = UA,
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "event_type": event,
        "actor": actor,
        "target": target,
        "client_ip": ip,
        "country": country,
        "city": city,
        "user_agent": agent,
        "outcome": outcome,
        "reason": reason,
    }


def saas(
    when: datetime,
    user: str,
    app: str,
    op: str,
    obj: str,
    ip: str,
    target: str | None = None,
    agent: str = UA,
    result: str = "Succeeded",
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "user": user,
        "app": app,
        "operation": op,
        "object": obj,
        "target": target,
        "client_ip": ip,
        "user_agent": agent,
        "result": result,
    }


def fw(
    when: datetime,
    src: str,
    dst: str,
    port: int,
    out: int,
    inn: int,
    dur: float,
    app: str = "ssl",
    action: str = "allow",
    rule: str = "office-to-internet",
    sport: int = 50123,
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "src_ip": src,
        "src_port": sport,
        "dst_ip": dst,
        "dst_port": port,
        "proto": "tcp",
        "action": action,
        "bytes_out": out,
        "bytes_in": inn,
        "duration_s": dur,
        "app": app,
        "rule": rule,
    }


def proc(
    when: datetime,
    host: str,
    user: str,
    image: str,
    cmd: str | None,
    parent: str | None,
    event_id: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "event_time": ts(when),
        "host": host,
        "event_id": event_id,
        "user": user,
        "process_id": 5000 + when.second * 37,
        "image": image,
        "command_line": cmd,
        "parent_image": parent,
        **extra,
    }


def ticket(
    start: datetime,
    hours: float,
    no: str,
    requester: str,
    approver: str,
    targets: str,
    summary: str,
) -> dict[str, Any]:
    return {
        "window_start": ts(start),
        "window_end": ts(start + timedelta(hours=hours)),
        "ticket": no,
        "requester": f"{requester}@{MAIL}",
        "approver": f"{approver}@{MAIL}",
        "status": "approved",
        "targets": targets,
        "summary": summary,
    }


def pair(
    base: str, category: str, alert: dict[str, Any], attack: dict[str, Any], other: dict[str, Any]
) -> list[Scenario]:
    """Two scenarios with the same alert: ``attack`` and ``other`` hold each side's
    verdicts, rationale, severity, must, inject, techniques (and optional fields)."""
    a, b = f"{base}-a", f"{base}-b"
    out = []
    for sid, twin, side in ((a, b, attack), (b, a, other)):
        forbidden = side.pop("forbidden", None)
        if forbidden is None:
            forbidden = (
                [{"verdict": "benign"}]
                if side["verdicts"][0].startswith("true_positive")
                else [{"verdict": "true_positive"}]
            )
        out.append(
            Scenario(id=sid, category=category, alert=alert, pair=twin, forbidden=forbidden, **side)
        )
    return out


_ = ct

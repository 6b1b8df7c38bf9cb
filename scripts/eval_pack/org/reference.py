"""Reference tables: assets, directory, change tickets and travel bookings (background)."""

# ruff: noqa: E501  (scenario data: long literal strings read better whole)

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scripts.eval_pack.org.people import DEPTS, MAIL, OFFICES, START, Org, ts
from scripts.eval_pack.org.rhythm import CITIES, days, weekday

UPDATED = ts(START - timedelta(days=3))


@dataclass
class Trip:
    booking: str
    login: str
    depart: datetime
    back: datetime
    country: str
    city: str


def assets(org: Org) -> list[dict[str, Any]]:
    return [
        {
            "updated": UPDATED,
            "hostname": h.name,
            "ip": h.ip,
            "os": h.os,
            "owner": h.owner if "." not in h.owner else f"{h.owner}@{MAIL}",
            "department": DEPTS[h.dept][0],
            "role": h.role,
            "criticality": h.criticality,
            "notes": h.notes,
        }
        for h in org.hosts
    ]


def directory(org: Org) -> list[dict[str, Any]]:
    rng = random.Random(7)
    rows = []
    for p in org.people:
        country, city = OFFICES[p.office]
        base = {
            "updated": UPDATED,
            "department": DEPTS[p.dept][0],
            "manager": p.manager and f"{p.manager}@{MAIL}",
            "country": country,
            "office": city,
            "enabled": True,
            "created": ts(START - timedelta(days=rng.randint(60, 3000))),
        }
        rows.append(
            {
                **base,
                "account": p.upn,
                "display_name": p.name,
                "title": p.title,
                "account_type": "person",
            }
        )
        if p.admin:
            rows.append(
                {
                    **base,
                    "account": f"adm-{p.login}@{MAIL}",
                    "display_name": f"{p.name} (admin)",
                    "title": "privileged account",
                    "account_type": "admin",
                }
            )
    for name, purpose in org.service.items():
        rows.append(
            {
                "updated": UPDATED,
                "account": f"{name}@{MAIL}",
                "display_name": name,
                "department": "IT",
                "title": purpose,
                "manager": "",
                "country": "Germany",
                "office": "Hamburg",
                "account_type": "service",
                "enabled": True,
                "created": ts(START - timedelta(days=900)),
            }
        )
    return rows


def trips(org: Org) -> list[Trip]:
    rng = random.Random(11)
    out = []
    travellers = [p for p in org.people if p.traveller]
    for n, p in enumerate(travellers):
        if rng.random() < 0.45:
            continue
        country = rng.choice(
            [c for c in CITIES if c not in ("Germany", "United Kingdom", "Netherlands")]
        )
        depart = START + timedelta(days=rng.randint(0, 10), hours=rng.choice([6, 7, 9, 15]))
        out.append(
            Trip(
                f"TRV-{4100 + n}",
                p.login,
                depart,
                depart + timedelta(days=rng.randint(2, 5)),
                country,
                rng.choice(CITIES[country]),
            )
        )
    return out


def travel(trip_list: list[Trip]) -> list[dict[str, Any]]:
    return [
        {
            "depart": ts(t.depart),
            "return_date": ts(t.back),
            "booking": t.booking,
            "traveller": f"{t.login}@{MAIL}",
            "country": t.country,
            "city": t.city,
            "purpose": "customer visit" if n % 3 else "trade fair",
        }
        for n, t in enumerate(trip_list)
    ]


def change_tickets(org: Org) -> list[dict[str, Any]]:
    it = org.in_dept("IT")
    admins = [p for p in it if p.admin]
    rows = [
        {
            "window_start": ts(START - timedelta(days=40)),
            "window_end": ts(START + timedelta(days=365)),
            "ticket": "CHG-1000",
            "requester": f"{admins[0].login}@{MAIL}",
            "approver": f"{it[-1].login}@{MAIL}",
            "status": "approved",
            "targets": "SCAN-01, svc-scan",
            "summary": "Standing change: weekly authenticated vulnerability scan of 10.0.0.0/8 from SCAN-01, "
            "Tuesdays 01:00-05:00 UTC",
        }
    ]
    n = 1001
    for day in days():
        if not weekday(day):
            continue
        for kind in ("patch", "deploy"):
            n += 1
            who = admins[n % len(admins)]
            start = day + timedelta(hours=19 if kind == "patch" else 10)
            targets = (
                ", ".join(
                    sorted({h.name for h in org.hosts if h.role != "workstation"})[
                        n % 5 : n % 5 + 3
                    ]
                )
                if kind == "patch"
                else "aws:prod (terraform-ci)"
            )
            rows.append(
                {
                    "window_start": ts(start),
                    "window_end": ts(start + timedelta(hours=3)),
                    "ticket": f"CHG-{n}",
                    "requester": f"{who.login}@{MAIL}",
                    "approver": f"{it[-1].login}@{MAIL}",
                    "status": "approved",
                    "targets": targets,
                    "summary": "Monthly OS patching"
                    if kind == "patch"
                    else "Application release via pipeline",
                }
            )
    return rows

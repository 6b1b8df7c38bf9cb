"""The list's rows as an analyst reads them: the alert first (its title and key entity,
the objective beneath), then the host, user and IP it is about, how old, how long it
ran, how sure. Words in labels, never snake_case."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from alerts.addresses import non_public_reason
from bot.web.view.when import between, span
from store.schema import InvestigationStatus

MAIN_CHARS = 160
ENTITY_KINDS = {"host": "host", "user": "user", "email": "user", "ip": "ip"}
LABELS = {
    "true_positive": "true positive",
    "false_positive": "false positive",
    "benign": "benign",
    "inconclusive": "inconclusive",
}


def words(value: object) -> str:
    """A stored label as words: ``true_positive`` → ``true positive``."""
    text = "" if value is None else str(value)
    return LABELS.get(text, text.replace("_", " "))


DOCUMENTATION = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20")
)  # RFC 5737, RFC 3849, RFC 9637: examples, never a real host


def address_label(kind: str, value: str, private: bool) -> str | None:
    """What an indicator is, when it is not a public address: ``documentation`` (the
    example ranges), ``private``, ``loopback``, ...; ``internal`` for a private name."""
    try:
        ip = ipaddress.ip_address(value) if kind in ("ip", "ipv4", "ipv6") else None
    except ValueError:
        ip = None
    if ip is not None:
        if any(ip in net for net in DOCUMENTATION if net.version == ip.version):
            return "documentation"
        reason = non_public_reason(ip)
        return reason.removesuffix(" address") if reason else None
    return "internal" if private else None


def first_line(text: str | None, size: int = MAIN_CHARS) -> str:
    """The first non-empty line, cut at a word (with ``…``) when longer than ``size``."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    if len(line) <= size:
        return line
    cut = line[:size]
    space = cut.rfind(" ")
    return (cut[:space] if space > size // 2 else cut).rstrip(" ,;:-") + "…"


def entities_of(raw: str | None) -> list[dict[str, str]]:
    """The alert's entities as the record holds them (JSON text); [] for anything else."""
    try:
        found = json.loads(raw) if raw else []
    except (ValueError, TypeError):
        return []
    if not isinstance(found, list):
        return []
    return [
        {"kind": str(e.get("kind")), "value": str(e.get("value"))}
        for e in found
        if isinstance(e, dict) and e.get("value")
    ]


def main_entities(entities: list[dict[str, str]]) -> dict[str, str]:
    """The first host, user (or e-mail) and IP among the alert's entities."""
    out: dict[str, str] = {}
    for entity in entities:
        column = ENTITY_KINDS.get(entity["kind"])
        if column and column not in out:
            out[column] = entity["value"]
    return out


def key_entity(main: dict[str, str]) -> str | None:
    """The one entity a row names beside its title: ``host web-01`` (else the user, the IP)."""
    return next((f"{kind} {main[kind]}" for kind in ("host", "user", "ip") if kind in main), None)


@dataclass
class ListRow:
    id: str
    main: str  # the alert's title (a question: its first line)
    entity: str | None  # the key entity, "host web-01"
    beneath: str | None  # the objective, when there is one and it is not the main text
    host: str | None
    user: str | None
    ip: str | None
    created_at: datetime
    duration: str
    confidence: str
    verdict: str | None
    severity: str | None
    source: str | None
    channel: str | None
    status: str
    is_eval: bool


def list_row(row: Any, now: datetime) -> ListRow:
    """One ``store.investigations.browse.Listed`` as the list shows it."""
    entities = entities_of(row.entities)
    main = main_entities(entities)
    key = key_entity(main)
    objective = first_line(row.objective) if row.objective else None
    headline = first_line(row.alert_title) or objective or first_line(row.title)
    running = row.finished_at is None and row.status == InvestigationStatus.RUNNING
    took = between(row.created_at, now if running else row.finished_at)
    return ListRow(
        id=row.id,
        main=headline,
        entity=key if key and key.split(" ", 1)[1] not in headline else None,
        beneath=objective if objective and objective != headline else None,
        host=main.get("host"),
        user=main.get("user"),
        ip=main.get("ip"),
        created_at=row.created_at,
        duration=(span(took) + (" so far" if running else "")) if took is not None else "—",
        confidence=words(row.confidence) if row.confidence else "—",
        verdict=row.verdict,
        severity=row.severity,
        source=row.source,
        channel=row.channel,
        status=row.status,
        is_eval=row.is_eval,
    )

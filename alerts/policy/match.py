"""A rule's match compiled to checks: each a name and a test over an ``AlertView``.

Patterns are globs (``ci-*``), or regexes after ``re:``, matched case-insensitively
against the whole value; addresses are compared as networks (``10.0.0.0/8``). The
``AlertView`` holds what every rule reads of one alert, computed once per alert.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alerts.jmes import compile_expression, search
from alerts.model import Alert
from alerts.policy.rules import EntityMatch, Match, Scalar, Window, Words, as_list

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_IP_INDICATORS = ("ipv4", "ipv6")


@dataclass(frozen=True)
class Seen:
    """An entity as rules see it: kind, value (as given), role."""

    kind: str
    value: str
    role: str | None


@dataclass
class AlertView:
    """What the rules read of one alert (built once, read by every rule)."""

    alert: Alert
    now: datetime
    source: str = ""
    format: str = ""
    title: str = ""
    text: str = ""
    severity: str = ""
    when: datetime = field(default_factory=lambda: datetime.now(UTC))
    entities: dict[str, list[Seen]] = field(default_factory=dict)
    addresses: list[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, str | None]] = field(
        default_factory=list
    )

    @classmethod
    def of(cls, alert: Alert, now: datetime) -> AlertView:
        view = cls(
            alert=alert,
            now=now,
            source=alert.source.lower(),
            format=(alert.format or "").lower(),
            title=alert.title,
            text=f"{alert.title}\n{alert.description or ''}",
            severity=alert.severity or "",
            when=alert.event_time or now,
        )
        for entity in alert.entities:
            view.entities.setdefault(entity.kind, []).append(
                Seen(entity.kind, entity.value, entity.role)
            )
        ips = [(s.value, s.role) for s in view.entities.get("ip", [])]
        ips += [(i.value, None) for i in alert.indicators if i.kind in _IP_INDICATORS]
        for value, role in ips:
            try:
                view.addresses.append((ipaddress.ip_address(value), role))
            except ValueError:
                continue
        return view


Test = Callable[[AlertView], bool]


@dataclass(frozen=True)
class Check:
    """One condition of a rule: what it says (for ``socbot policy test``) and its test."""

    says: str
    test: Test


def pattern(text: str) -> re.Pattern[str]:
    """A glob, or a regex after ``re:``, as a case-insensitive whole-value pattern."""
    if text.startswith("re:"):
        try:
            return re.compile(f"(?:{text[3:]})\\Z", re.IGNORECASE | re.DOTALL)
        except re.error as error:
            raise ValueError(f"bad regex {text!r}: {error}") from None
    return re.compile(fnmatch.translate(text), re.IGNORECASE | re.DOTALL)


def patterns(words: Words | None) -> list[re.Pattern[str]]:
    return [pattern(w) for w in as_list(words)]


def networks(words: Words | None) -> list[Network]:
    return [ipaddress.ip_network(w, strict=False) for w in as_list(words)]


def _any(found: Sequence[re.Pattern[str]], value: str) -> bool:
    return any(p.match(value) for p in found)


def compile_match(match: Match) -> list[Check]:
    """The checks of ``match``, cheapest first (raises ``ValueError`` on a bad pattern)."""
    checks: list[Check] = []
    if match.source is not None:
        sources = frozenset(s.lower() for s in as_list(match.source))
        checks.append(Check(f"source in {sorted(sources)}", lambda v: v.source in sources))
    if match.format is not None:
        formats = frozenset(s.lower() for s in as_list(match.format))
        checks.append(Check(f"format in {sorted(formats)}", lambda v: v.format in formats))
    if match.severity is not None:
        levels = frozenset([match.severity] if isinstance(match.severity, str) else match.severity)
        checks.append(Check(f"severity in {sorted(levels)}", lambda v: v.severity in levels))
    if match.title is not None:
        titles = patterns(match.title)
        checks.append(Check(f"title like {as_list(match.title)}", lambda v: _any(titles, v.title)))
    if match.text is not None:
        texts = [re.compile(p.pattern.removesuffix("\\Z"), p.flags) for p in patterns(match.text)]
        says = f"title or description contains {as_list(match.text)}"
        checks.append(Check(says, lambda v: any(p.search(v.text) for p in texts)))
    if match.ip is not None:
        checks.append(_entity_check(EntityMatch(kind="ip", cidr=match.ip)))
    for kind in ("user", "host", "resource"):
        value = getattr(match, kind)
        if value is not None:
            checks.append(_entity_check(EntityMatch(kind=kind, value=value)))
    checks += [_entity_check(e) for e in match.entity]
    checks += [_field_check(expr, want) for expr, want in match.fields.items()]
    if match.window is not None:
        checks.append(_window_check(match.window))
    return checks


def _entity_check(want: EntityMatch) -> Check:
    values = patterns(want.value)
    nets = networks(want.cidr)
    roles = frozenset(r.lower() for r in as_list(want.role))
    parts = [f"{want.kind} entity"]
    if want.value is not None:
        parts.append(f"like {as_list(want.value)}")
    if nets:
        parts.append(f"in {[str(n) for n in nets]}")
    if roles:
        parts.append(f"as {sorted(roles)}")

    def role_ok(role: str | None) -> bool:
        return not roles or (role or "").lower() in roles

    if want.kind == "ip" and nets:

        def test(view: AlertView) -> bool:
            return any(
                role_ok(role) and any(ip in n for n in nets if n.version == ip.version)
                for ip, role in view.addresses
            )
    else:

        def test(view: AlertView) -> bool:
            return any(
                role_ok(seen.role) and (not values or _any(values, seen.value))
                for seen in view.entities.get(want.kind, ())
            )

    return Check(" ".join(parts), test)


def _field_check(expression: str, want: Scalar | list[Scalar]) -> Check:
    compiled = compile_expression(expression, origin="fields")
    wanted = want if isinstance(want, list) else [want]
    globs = [pattern(w) for w in wanted if isinstance(w, str)]
    others = [w for w in wanted if not isinstance(w, str)]

    def one(value: Any) -> bool:
        if isinstance(value, str):
            return _any(globs, value)
        return value is not None and any(value == o and type(value) is type(o) for o in others)

    def test(view: AlertView) -> bool:
        found = search(compiled, view.alert.raw)
        return any(one(v) for v in found) if isinstance(found, list) else one(found)

    return Check(f"{expression} is {wanted}", test)


def _window_check(window: Window) -> Check:
    days = frozenset(_DAYS.index(d) for d in window.days or _DAYS)
    start = end = 0
    if window.hours is not None:
        m = re.fullmatch(r"(\d\d):(\d\d)-(\d\d):(\d\d)", window.hours)
        if m is None:
            raise ValueError(f"hours must be HH:MM-HH:MM, got {window.hours!r}")
        h1, m1, h2, m2 = (int(g) for g in m.groups())
        if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59:
            raise ValueError(f"hours out of range: {window.hours!r}")
        start, end = h1 * 60 + m1, h2 * 60 + m2

    def test(view: AlertView) -> bool:
        when = view.when.astimezone(UTC)
        minute = when.hour * 60 + when.minute
        if window.hours is None:
            return when.weekday() in days
        if start <= end:  # 09:00-17:00
            return when.weekday() in days and start <= minute < end
        # 22:00-06:00: the night belongs to the day it began
        if minute >= start:
            return when.weekday() in days
        return minute < end and (when.weekday() - 1) % 7 in days

    says = f"at {window.hours or 'any time'} UTC on {window.days or 'any day'}"
    return Check(says, test)

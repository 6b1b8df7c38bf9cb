"""Validation of the indicators the model asks about, before anything leaves the machine.

Each ``validate_*`` returns a normalised ``Target`` or raises ``IndicatorRefused``
(a ``ToolError``: the reason reaches the model as data). Private, loopback,
link-local, reserved and other non-public addresses in any spelling (decimal, hex,
octal, dotted-partial, or embedded in IPv6), single-label names, internal domains
and host names that encode an internal address are refused: they are never sent
to a third-party service. A URL whose userinfo, path, query or fragment carries an
e-mail address, an internal name or address is reduced to its host (``Target.note``
says what was withheld). Defanged input (``1.2.3[.]4``, ``hxxp://``, any spelling
``alerts.defang.refang`` reads) is accepted.
``ensure_sendable`` is the last check before any request: a target that would not
pass its validation again is never sent.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit, urlunsplit

from alerts.addresses import IPAddress, non_public_reason, parse_ipv4_loose, unwrap
from alerts.defang import refang
from tools.base import ToolError
from tools.intel.internal import host_reason, url_part_reasons

TargetKind = Literal["ip", "domain", "url", "hash"]

MAX_URL_CHARS = 2048
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_HASHES = {32: "md5", 40: "sha1", 64: "sha256"}
_HASH_PREFIX = re.compile(r"^(?:md5|sha1|sha-1|sha256|sha-256)[:=]", re.I)
_NUMERIC_LAST = re.compile(r"(?:^|\.)(?:0x[0-9a-f]*|[0-9]+)\.?$", re.I)
_URL_FORBIDDEN = re.compile(r"[\x00-\x20\x7f\\]")


class IndicatorRefused(ToolError):
    """The indicator is malformed or internal; the message says why."""


@dataclass(frozen=True)
class Target:
    """A validated, normalised indicator."""

    kind: TargetKind
    value: str
    subtype: str  # ipv4 | ipv6 | domain | url | md5 | sha1 | sha256
    note: str | None = None  # what of the requested indicator was withheld, and why


def validate_ip(value: str) -> Target:
    """A public IPv4/IPv6 address in standard form (IPv4-in-IPv6 forms unwrapped)."""
    text = _refanged(value).strip("[]")
    ip = _parse_ip(text)
    if ip is None:
        raise IndicatorRefused(f"{value!r} is not an IPv4 or IPv6 address")
    shown = unwrap(ip)
    reason = non_public_reason(ip)
    if reason:
        raise IndicatorRefused(
            f"{shown} is a {reason}: internal addresses are never sent to "
            "third-party services (look for it in the logs instead)"
        )
    if not _is_standard_ip(text):
        raise IndicatorRefused(
            f"{value!r} is an unusual spelling of the address {shown}: "
            "write it in standard form to look it up"
        )
    return Target(kind="ip", value=str(shown), subtype=f"ipv{shown.version}")


def validate_domain(value: str, internal_suffixes: Iterable[str]) -> Target:
    """A public, fully qualified domain name (IDN converted to punycode)."""
    text = _refanged(value).lower().rstrip(".")
    if "://" in text or "/" in text:
        raise IndicatorRefused(f"{value!r} is a URL, not a domain: use the URL lookup")
    if "@" in text:
        raise IndicatorRefused(
            f"{value!r} is an e-mail address: e-mail addresses are never sent to "
            "third-party services (look up the domain after the @ instead)"
        )
    if _parse_ip(text.strip("[]")) is not None or _NUMERIC_LAST.search(text):
        validate_ip(text)  # an internal address is refused as one
        raise IndicatorRefused(f"{value!r} is an IP address, not a domain: use the IP lookup")
    try:
        name = text.encode("idna").decode("ascii")
    except UnicodeError:
        raise IndicatorRefused(f"{value!r} is not a valid domain name") from None
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise IndicatorRefused(f"{value!r} is not a valid domain name")
    if len(labels) < 2:
        raise IndicatorRefused(
            f"{value!r} is a single-label (internal) name: it is never sent to third-party services"
        )
    reason = host_reason(name, internal_suffixes)
    if reason:
        raise IndicatorRefused(
            f"{name!r} {reason}: internal names are never sent to third-party services"
        )
    return Target(kind="domain", value=name, subtype="domain")


def validate_url(value: str, internal_suffixes: Iterable[str]) -> Target:
    """An absolute http(s) URL on a public host; reduced to its host when the rest of it
    carries credentials, e-mail addresses, internal names or addresses."""
    suffixes = tuple(internal_suffixes)
    parts = _split_url(value)
    host = _host_target(parts, suffixes)
    reasons = url_part_reasons(parts, suffixes)
    if reasons:
        return Target(
            kind=host.kind,
            value=host.value,
            subtype=host.subtype,
            note=(
                "the URL was not sent: it contains " + "; ".join(reasons) + ". Only its host "
                f"{host.value} was looked up (nothing internal leaves the machine)."
            ),
        )
    netloc = f"[{host.value}]" if host.subtype == "ipv6" else host.value
    if parts.port is not None:
        netloc += f":{parts.port}"
    url = urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))
    return Target(kind="url", value=url, subtype="url")


def validate_hash(value: str) -> Target:
    """An md5, sha1 or sha256 hex digest."""
    text = _HASH_PREFIX.sub("", value.strip()).lower()
    if not re.fullmatch(r"[0-9a-f]+", text) or len(text) not in _HASHES:
        raise IndicatorRefused(
            f"{value!r} is not an md5, sha1 or sha256 hex digest (32, 40 or 64 hex characters)"
        )
    return Target(kind="hash", value=text, subtype=_HASHES[len(text)])


def ensure_sendable(target: Target, internal_suffixes: Iterable[str]) -> None:
    """Raise unless ``target`` passes its own validation again, unchanged (the egress gate)."""
    if target.kind == "ip":
        again = validate_ip(target.value)
    elif target.kind == "domain":
        again = validate_domain(target.value, internal_suffixes)
    elif target.kind == "url":
        again = validate_url(target.value, internal_suffixes)
    else:
        again = validate_hash(target.value)
    if (again.kind, again.value, again.subtype) != (target.kind, target.value, target.subtype):
        raise IndicatorRefused(f"{target.value!r} is not a sendable {target.subtype} value")


def _is_standard_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return parse_ipv4_loose(text)


def _refanged(value: str) -> str:
    return refang(value).strip()


def _split_url(value: str) -> SplitResult:
    text = _refanged(value)
    if len(text) > MAX_URL_CHARS or _URL_FORBIDDEN.search(text):
        raise IndicatorRefused(
            "not a valid URL (too long, or contains spaces, control characters or backslashes)"
        )
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        raise IndicatorRefused(f"{value!r} is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise IndicatorRefused(f"{value!r} is not an absolute http(s) URL")
    return parts


def _host_target(parts: SplitResult, internal_suffixes: tuple[str, ...]) -> Target:
    host = parts.hostname or ""
    if "%" in host:  # a percent-encoded host: decoded differently by every parser
        raise IndicatorRefused(f"{host!r} is not a valid host name")
    if _parse_ip(host) is not None or _NUMERIC_LAST.search(host):  # it allows a final "."
        return validate_ip(host)
    return validate_domain(host, internal_suffixes)

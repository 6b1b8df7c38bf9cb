"""Validation of the indicators the model asks about, before anything leaves the machine.

Each ``validate_*`` returns a normalised ``Target`` or raises ``IndicatorRefused``
(a ``ToolError``: the reason reaches the model as data). Private, loopback,
link-local, reserved and other non-public addresses, single-label names and
internal domains are refused: they are never sent to a third-party service.
Defanged input (``1.2.3[.]4``, ``hxxp://``) is accepted.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from tools.base import ToolError

TargetKind = Literal["ip", "domain", "url", "hash"]

# Special-use names that are never public, whatever the configuration says.
ALWAYS_INTERNAL = (".localhost", ".local", ".internal", ".test", ".invalid", ".example", ".arpa")
MAX_URL_CHARS = 2048
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_HASHES = {32: "md5", 40: "sha1", 64: "sha256"}
_HASH_PREFIX = re.compile(r"^(?:md5|sha1|sha-1|sha256|sha-256)[:=]", re.I)


class IndicatorRefused(ToolError):
    """The indicator is malformed or internal; the message says why."""


@dataclass(frozen=True)
class Target:
    """A validated, normalised indicator."""

    kind: TargetKind
    value: str
    subtype: str  # ipv4 | ipv6 | domain | url | md5 | sha1 | sha256


def refang(text: str) -> str:
    """Undo the usual defanging: ``[.]``, ``(.)``, ``[dot]``, ``[:]``, ``hxxp``."""
    for defanged in ("[.]", "(.)", "{.}", "[dot]", "(dot)"):
        text = text.replace(defanged, ".")
    text = text.replace("[:]", ":").replace("[://]", "://")
    return re.sub(r"^hxxp", "http", text.strip(), flags=re.I)


def validate_ip(value: str) -> Target:
    """A public IPv4/IPv6 address."""
    text = refang(value).strip("[]")
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        raise IndicatorRefused(f"{value!r} is not an IPv4 or IPv6 address") from None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    reason = _non_public(ip)
    if reason:
        raise IndicatorRefused(
            f"{ip} is a {reason} address: internal addresses are never sent to "
            "third-party services (look for it in the logs instead)"
        )
    return Target(kind="ip", value=str(ip), subtype=f"ipv{ip.version}")


def validate_domain(value: str, internal_suffixes: Iterable[str]) -> Target:
    """A public, fully qualified domain name (IDN converted to punycode)."""
    text = refang(value).lower().rstrip(".")
    if "://" in text or "/" in text:
        raise IndicatorRefused(f"{value!r} is a URL, not a domain: use the URL lookup")
    if _is_ip(text):
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
    if labels[-1].isdigit():
        raise IndicatorRefused(f"{value!r} is not a valid domain name")
    if is_internal_domain(name, internal_suffixes):
        raise IndicatorRefused(
            f"{name!r} is an internal domain: it is never sent to third-party services"
        )
    return Target(kind="domain", value=name, subtype="domain")


def validate_url(value: str, internal_suffixes: Iterable[str]) -> Target:
    """An absolute http(s) URL on a public host, without credentials."""
    text = refang(value)
    if len(text) > MAX_URL_CHARS or any(c.isspace() for c in text):
        raise IndicatorRefused("not a valid URL (too long or contains spaces)")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        raise IndicatorRefused(f"{value!r} is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise IndicatorRefused(f"{value!r} is not an absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise IndicatorRefused("the URL contains credentials: it is never sent to third parties")
    host = parts.hostname
    if _is_ip(host):
        validate_ip(host)
    else:
        validate_domain(host, internal_suffixes)
    netloc = parts.netloc.rsplit("@", 1)[-1].lower()
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


def is_internal_domain(name: str, internal_suffixes: Iterable[str]) -> bool:
    """True when ``name`` equals or ends with a configured or special-use suffix."""
    name = name.lower().rstrip(".")
    for suffix in (*internal_suffixes, *ALWAYS_INTERNAL):
        bare = suffix.lower().strip(".")
        if bare and (name == bare or name.endswith("." + bare)):
            return True
    return name == "localhost"


def _non_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "non-public"
    return None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True

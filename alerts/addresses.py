"""Is this address (or this host name) internal? The class, in every spelling.

* ``parse_ipv4_loose`` reads IPv4 the way browsers, curl and ``inet_aton`` do:
  ``167772161``, ``0x0a000001``, ``012.0.0.1``, ``10.1`` (dotted-partial) are all
  10.0.0.1 to a resolver, so they are judged as 10.0.0.1.
* ``embedded_ipv4`` unwraps the IPv4 address carried inside an IPv6 address:
  IPv4-mapped, IPv4-translated and IPv4-compatible, 6to4 (2002::/16), Teredo
  (2001::/32, server and de-obfuscated client), NAT64 (64:ff9b::/96) and ISATAP
  interface identifiers. An address is judged by what it carries.
* ``ipv4_in_host`` finds a host name whose labels encode an address, the trick of
  wildcard-DNS services (nip.io, sslip.io, traefik.me, ...) and of any attacker
  domain that wants an internal address in its query log: ``10.20.30.40.x``,
  ``app-10-20-30-40.x``, ``0a141e28.x``, ``10-0-0-1.x`` and mixes of dots and dashes.
"""

from __future__ import annotations

import ipaddress
import re

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Prefixes whose addresses only wrap an IPv4 address: the IPv4 address is the indicator.
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: operator-defined layout
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)
# Names that resolve every subdomain to the loopback address (no address in the name).
LOOPBACK_WILDCARD_DOMAINS = ("localtest.me", "lvh.me", "vcap.me", "localho.st", "lacolhost.com")
# Ranges that are internal networks proper; a bare number or hex label is judged only
# against these (0.0.0.0/8, multicast and class E are too often just a number).
_INTERNAL_V4 = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "100.64.0.0/10",
        "192.0.0.0/24",
        "198.18.0.0/15",
    )
)
_V4_PART = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$", re.I)
_DOTTED_OR_DASHED = re.compile(r"(?<![0-9])(?=((?:[0-9]{1,3}[.-]){3}[0-9]{1,3})(?![0-9]))")
_HEX8 = re.compile(r"(?:^|[.-])([0-9a-f]{8})(?=$|[.-])", re.I)


def parse_ipv4_loose(text: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a URL parser makes of ``text`` (WHATWG / inet_aton rules), or None."""
    parts = text.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.match(p) for p in parts):
        return None
    numbers: list[int] = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if any(c in "89" for c in part):
                return None
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """(form, address) for every IPv4 address ``ip`` carries."""
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip in _MAPPED:
        found.append(("IPv4-mapped", low32))
    elif ip in _TRANSLATED:
        found.append(("IPv4-translated", low32))
    elif ip in _COMPATIBLE and int(ip) > 1:
        found.append(("IPv4-compatible", low32))
    elif ip in _NAT64:
        found.append(("NAT64", low32))
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:  # its low 64 bits are flags, port and client, not an ISATAP id
        server, client = ip.teredo
        return [*found, ("Teredo server", server), ("Teredo client", client)]
    if (int(ip) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        found.append(("ISATAP", low32))
    return found


def unwrap(ip: IPAddress) -> IPAddress:
    """The IPv4 address behind a purely representational IPv6 form, else ``ip``."""
    if isinstance(ip, ipaddress.IPv6Address):
        for network in (_MAPPED, _TRANSLATED, _NAT64):
            if ip in network:
                return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip in _COMPATIBLE and int(ip) > 1:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def non_public_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` must not leave the machine (``"private address"``...), or None when public.

    An IPv6 address that carries an IPv4 address is judged by that address too;
    6to4, Teredo and NAT64 are judged by it alone (their own prefixes say nothing).
    """
    ip = unwrap(ip)
    if isinstance(ip, ipaddress.IPv4Address):
        return _plain_reason(ip)
    if ip in _NAT64_LOCAL:
        return "local-use NAT64 address"
    embedded = embedded_ipv4(ip)
    for form, v4 in embedded:
        reason = _plain_reason(v4)
        if reason:
            return f"{reason} ({v4}, embedded as {form})"
    if any(form.startswith(("6to4", "Teredo")) for form, _ in embedded):
        return None
    return _plain_reason(ip)


def is_internal_ipv4(ip: ipaddress.IPv4Address) -> bool:
    """In a range that is an internal network proper (RFC 1918, loopback, CGNAT, ...)."""
    return any(ip in network for network in _INTERNAL_V4)


def ipv4_in_host(host: str) -> ipaddress.IPv4Address | None:
    """A non-public IPv4 address encoded in the labels of ``host``, or None.

    Dotted or dashed quads (``10.20.30.40.nip.io``, ``app-10-0-0-1.sslip.io``) are
    judged as any address; a label of 8 hex digits (``0a141e28.nip.io``) only against
    internal ranges, since a hex label is often just a hash.
    """
    quads = []  # both patterns read digits (hex: any case) and dots: no need to normalise
    for match in _DOTTED_OR_DASHED.finditer(host):
        octets = [int(p) for p in re.split(r"[.-]", match.group(1))]
        if max(octets) <= 255:
            quads.append(ipaddress.IPv4Address(".".join(map(str, octets))))
    flagged = [ip for ip in quads if _plain_reason(ip)]
    if flagged:  # an internal network first, the rightmost as wildcard DNS reads it
        return next((ip for ip in reversed(flagged) if is_internal_ipv4(ip)), flagged[-1])
    for match in _HEX8.finditer(host):
        ip = ipaddress.IPv4Address(int(match.group(1), 16))
        if is_internal_ipv4(ip):
            return ip
    return None


def ipv6_in_label(label: str) -> ipaddress.IPv6Address | None:
    """An IPv6 address spelt with dashes in one label (sslip.io's ``fd00--1``), or None."""
    if label.count("-") < 2:
        return None
    try:
        return ipaddress.IPv6Address(label.replace("-", ":"))
    except ValueError:
        return None


def loopback_wildcard(host: str) -> bool:
    """True for names under a public domain that resolves everything to 127.0.0.1."""
    name = host.lower().rstrip(".")
    return any(name == d or name.endswith("." + d) for d in LOOPBACK_WILDCARD_DOMAINS)


def _plain_reason(ip: IPAddress) -> str | None:
    if ip.is_loopback:
        return "loopback address"
    if ip.is_link_local:
        return "link-local address"
    if ip.is_multicast:
        return "multicast address"
    if ip.is_unspecified:
        return "unspecified address"
    if ip.is_reserved:
        return "reserved address"
    if ip.is_private:
        return "private address"
    if not ip.is_global:
        return "non-public address"
    return None

"""Every IPv4 address an IPv6 address carries, by name, and the reason it may not leave.

The Teredo address is RFC 4380's example (server 65.54.227.120, client 192.0.2.45) and
the same with the client bits of 10.0.0.1 / 185.220.101.42 (obfuscated: inverted); the
other addresses are built from RFC 4291 (mapped, compatible), RFC 2765 (translated),
RFC 6052/8215 (NAT64), RFC 3056 (6to4) and RFC 5214 (ISATAP) layouts.
185.220.101.42 is the public indicator of the sample alerts."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address

import pytest

from alerts.addresses import (
    embedded_ipv4,
    ipv4_in_host,
    loopback_wildcard,
    non_public_reason,
    parse_ipv4_loose,
    unwrap,
)

V4 = IPv4Address
TEREDO_EXAMPLE = "2001:0:4136:e378:8000:63bf:3fff:fdd2"


@pytest.mark.parametrize(
    ("address", "embedded"),
    [
        ("::ffff:10.0.0.1", [("IPv4-mapped", V4("10.0.0.1"))]),
        ("::ffff:0:10.0.0.1", [("IPv4-translated", V4("10.0.0.1"))]),
        ("::10.0.0.1", [("IPv4-compatible", V4("10.0.0.1"))]),
        ("::2", [("IPv4-compatible", V4("0.0.0.2"))]),
        ("::1", []),  # loopback, not 0.0.0.1
        ("::", []),
        ("64:ff9b::10.0.0.1", [("NAT64", V4("10.0.0.1"))]),
        ("2002:a00:1::", [("6to4", V4("10.0.0.1"))]),
        (
            TEREDO_EXAMPLE,
            [("Teredo server", V4("65.54.227.120")), ("Teredo client", V4("192.0.2.45"))],
        ),
        ("fe80::5efe:10.0.0.1", [("ISATAP", V4("10.0.0.1"))]),
        ("fe80::200:5efe:10.0.0.1", [("ISATAP", V4("10.0.0.1"))]),
        ("2001:db8::1", []),
    ],
)
def test_each_embedding_by_name(address: str, embedded: list[tuple[str, IPv4Address]]) -> None:
    assert embedded_ipv4(IPv6Address(address)) == embedded


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("::ffff:10.0.0.1", "private address"),  # a spelling of 10.0.0.1: judged as it
        ("::ffff:b9dc:652a", None),
        ("64:ff9b::b9dc:652a", None),
        ("64:ff9b:1::a00:1", "local-use NAT64 address"),
        ("2002:a00:1::", "private address (10.0.0.1, embedded as 6to4)"),
        ("2002:b9dc:652a::1", None),  # 6to4 is judged by its IPv4 address alone
        (
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            "private address (10.0.0.1, embedded as Teredo client)",
        ),
        ("2001:0:4136:e378:8000:63bf:4623:9ad5", None),  # client 185.220.101.42
        ("fe80::5efe:10.0.0.1", "private address (10.0.0.1, embedded as ISATAP)"),
        ("fe80::5efe:b9dc:652a", "link-local address"),  # public inside, link-local outside
        ("2001:4860::5efe:b9dc:652a", None),
        ("::1", "loopback address"),
    ],
)
def test_the_reason_names_the_embedded_address(address: str, reason: str | None) -> None:
    assert non_public_reason(IPv6Address(address)) == reason


def test_only_representational_forms_unwrap() -> None:
    public = V4("185.220.101.42")
    for form in ("::ffff:b9dc:652a", "::ffff:0:b9dc:652a", "64:ff9b::b9dc:652a", "::b9dc:652a"):
        assert unwrap(IPv6Address(form)) == public
    for kept in ("2002:b9dc:652a::1", "::1", "::", "fe80::5efe:b9dc:652a"):
        assert unwrap(IPv6Address(kept)) == IPv6Address(kept)
    assert unwrap(public) is public


@pytest.mark.parametrize(
    ("host", "found"),
    [
        ("10.20.30.40.nip.io", V4("10.20.30.40")),
        ("app-10-0-0-1.sslip.io.", V4("10.0.0.1")),
        ("0A141E28.nip.io", V4("10.20.30.40")),  # hex, any case
        ("192-0-2-1.nip.io", V4("192.0.2.1")),  # not public, though not internal
        ("192.0.2.1.198.51.100.7.nip.io", V4("198.51.100.7")),  # the rightmost, as DNS
        ("10.1.2.3.192.0.2.1.nip.io", V4("10.1.2.3")),  # an internal network first
        ("10-0-0-255.sslip.io", V4("10.0.0.255")),  # 255 is an octet: a broadcast address
        ("10-0-0-256.sslip.io", None),  # not an address
        ("185.220.101.42.nip.io", None),  # public: nothing internal in it
        ("c0a80101.example.com", V4("192.168.1.1")),
        ("deadbeef.example.com", None),  # a hex label that is not internal: a hash
    ],
)
def test_an_address_in_a_host_name(host: str, found: IPv4Address | None) -> None:
    assert ipv4_in_host(host) == found


@pytest.mark.parametrize(
    ("host", "answer"),
    [("lvh.me", True), ("App.LVH.me.", True), ("lvh.me.evil.example", False), ("xlvh.me", False)],
)
def test_loopback_wildcard_domains(host: str, answer: bool) -> None:
    assert loopback_wildcard(host) is answer


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("167772161.", V4("10.0.0.1")),  # a trailing dot, as URL parsers allow
        ("10.1.", V4("10.0.0.1")),
        ("10.0.0.1.0", None),  # five parts
        ("10.0.0.1..", None),
        ("", None),
        (".", None),
    ],
)
def test_loose_ipv4_parts(text: str, address: IPv4Address | None) -> None:
    assert parse_ipv4_loose(text) == address


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("10.256.0.1", None),  # a leading part over 255
        ("10.255.0.1", V4("10.255.0.1")),
        ("10.0.0.256", None),
        ("1.16777215", V4("1.255.255.255")),  # the last part fills what is left
        ("1.16777216", None),
        ("1.2.65535", V4("1.2.255.255")),
        ("1.2.65536", None),
        ("0x", V4("0.0.0.0")),  # an empty hex part is 0, as inet_aton reads it
        ("08", None),  # octal has no 8
        ("010", V4("0.0.0.8")),
    ],
)
def test_loose_ipv4_numbers(text: str, address: IPv4Address | None) -> None:
    assert parse_ipv4_loose(text) == address


def test_unspecified_and_compatible_edges() -> None:
    assert non_public_reason(V4("0.0.0.0")) == "unspecified address"
    assert non_public_reason(IPv6Address("::")) == "unspecified address"
    assert unwrap(IPv6Address("::2")) == V4("0.0.0.2")

"""Nothing internal leaves for threat intelligence: the gate, case by case and as a class.

Tables of hostile spellings (tests read like the attack), then hypothesis properties:
any internal IPv4 address, in any IPv6 wrapper, any wildcard-DNS spelling, any
loose IPv4 spelling or any encoding inside a URL, is refused or withheld. The URLs
and names here are invented for the tests; 185.220.101.42 and the malicious-cdn URL
are the indicators of the sample alerts.
"""

from __future__ import annotations

import base64
import ipaddress
from urllib.parse import quote

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from alerts.addresses import embedded_ipv4, non_public_reason, parse_ipv4_loose
from tools.intel.indicators import (
    IndicatorRefused,
    Target,
    ensure_sendable,
    validate_domain,
    validate_hash,
    validate_ip,
    validate_url,
)

SUFFIXES = (".corp", "acme-intra.net")
INTERNAL_NETS = [
    ipaddress.IPv4Network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16")
]
WILDCARD_SERVICES = ["nip.io", "sslip.io", "xip.io", "traefik.me", "backname.io", "exfil-dns.net"]


def refused(fn: object, value: str) -> str:
    with pytest.raises(IndicatorRefused) as info:
        if fn is validate_ip:
            validate_ip(value)
        elif fn is validate_domain:
            validate_domain(value, SUFFIXES)
        else:
            validate_url(value, SUFFIXES)
    return str(info.value)


# --- addresses in every spelling ----------------------------------------------------

REFUSED_IPS = [
    ("167772161", "10.0.0.1"),  # decimal
    ("0x0a000001", "10.0.0.1"),  # hex
    ("0X0A000001", "10.0.0.1"),
    ("0xa.0x0.0x0.0x1", "10.0.0.1"),  # hex per part
    ("012.0.0.1", "10.0.0.1"),  # octal
    ("0177.0.0.1", "127.0.0.1"),
    ("10.1", "10.0.0.1"),  # dotted-partial
    ("10.0.1", "10.0.0.1"),
    ("192.168.257", "192.168.1.1"),
    ("127.1", "127.0.0.1"),
    ("0", "0.0.0.0"),
    ("0x7f.1", "127.0.0.1"),
    ("10.0.0.1.", "10.0.0.1"),
    ("2002:0a80:0014::1", "10.128.0.20"),  # 6to4
    ("2002:c0a8:0101:1::42", "192.168.1.1"),
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1"),  # Teredo client (obfuscated)
    ("2001:0:a00:1:8000:63bf:3fff:fdd2", "10.0.0.1"),  # Teredo server
    ("64:ff9b::a00:1", "10.0.0.1"),  # NAT64
    ("64:ff9b::10.0.0.1", "10.0.0.1"),
    ("64:ff9b:1::a00:1", "local-use NAT64"),
    ("::ffff:10.1.2.3", "10.1.2.3"),  # IPv4-mapped
    ("::ffff:a01:203", "10.1.2.3"),
    ("::ffff:0:a01:203", "10.1.2.3"),  # IPv4-translated
    ("::10.1.2.3", "10.1.2.3"),  # IPv4-compatible
    ("::a01:203", "10.1.2.3"),
    ("2001:470:1:1:0:5efe:a00:1", "10.0.0.1"),  # ISATAP
    ("2001:470:1:1:200:5efe:c0a8:101", "192.168.1.1"),
    ("[fe80::1%eth0]", "link-local"),
    ("fd12:3456::1", "private"),
    ("::1", "loopback"),
    ("1.2.3[.]4x", "not an IPv4 or IPv6 address"),
]


@pytest.mark.parametrize(("value", "shown"), REFUSED_IPS)
def test_internal_addresses_in_any_spelling_are_refused(value: str, shown: str) -> None:
    assert shown in refused(validate_ip, value)


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("185.220.101.42", "185.220.101.42"),
        ("185.220.101[.]42", "185.220.101.42"),
        ("::ffff:185.220.101.42", "185.220.101.42"),  # representational forms: the IPv4
        ("64:ff9b::b9dc:652a", "185.220.101.42"),
        ("2002:b9dc:652a::1", "2002:b9dc:652a::1"),  # 6to4 of a public address stays IPv6
        ("2606:4700:4700::1111", "2606:4700:4700::1111"),
    ],
)
def test_public_addresses_are_sent_in_standard_form(value: str, sent: str) -> None:
    assert validate_ip(value).value == sent


def test_a_public_address_in_an_unusual_spelling_is_not_guessed() -> None:
    assert "185.220.101.42" in refused(validate_ip, "0xb9dc652a")
    assert "185.220.101.42" in refused(validate_url, "http://3118228778/payload")


# --- names ------------------------------------------------------------------------------

REFUSED_DOMAINS = [
    ("10.20.30.40.nip.io", "10.20.30.40"),
    ("app.10.20.30.40.nip.io", "10.20.30.40"),
    ("10-20-30-40.sslip.io", "10.20.30.40"),
    ("www-10-20-30-40.sslip.io", "10.20.30.40"),
    ("app-10.20.30.40.traefik.me", "10.20.30.40"),
    ("0a141e28.nip.io", "10.20.30.40"),
    ("magic-0a141e28.nip.io", "10.20.30.40"),
    ("192-168-1-1.my-attacker.net", "192.168.1.1"),
    ("ip-10-0-0-1.evil.com", "10.0.0.1"),
    ("127.0.0.1.xip.io", "127.0.0.1"),
    ("169-254-169-254.exfil-dns.net", "169.254.169.254"),
    ("fd00--1.sslip.io", "fd00::1"),
    ("app.localtest.me", "loopback"),
    ("anything.lvh.me", "loopback"),
    ("db01.corp.evil.com", "'corp'"),
    ("wiki.acme-intra.net.attacker.org", "'acme-intra.net'"),
    ("metadata.google.internal", "internal domain"),
    ("alice@acme.com", "e-mail address"),
    ("0x0a000001", "10.0.0.1"),
    ("10.0.0.1", "10.0.0.1"),
    ("printer.local.", "internal domain"),
]


@pytest.mark.parametrize(("value", "shown"), REFUSED_DOMAINS)
def test_internal_and_address_encoding_names_are_refused(value: str, shown: str) -> None:
    assert shown in refused(validate_domain, value)


@pytest.mark.parametrize(
    "value",
    [
        "pool.minexmr.com",
        "xmr-pool-eu.hashvault.pro",
        "ec2-3-120-1-5.eu-central-1.compute.amazonaws.com",  # a public address encoded
        "deadbeef.cdn-edge.net",  # 222.173.190.239: a hex label of a public address
        "www.local.com",  # "local" as a registered name, not a suffix
        "corp.evil.com",  # a subdomain called corp of a public name
        "1-2-3.example.org",
    ],
)
def test_public_names_pass(value: str) -> None:
    assert validate_domain(value, SUFFIXES).value == value


# --- URLs ---------------------------------------------------------------------------------

WITHHELD_URLS = [
    ("https://exfil-collector.net/c?h=db-prod-01.corp&ip=10.128.0.20", "db-prod-01.corp"),
    ("https://exfil-collector.net/c?h=db-prod-01.corp&ip=10.128.0.20", "10.128.0.20"),
    ("https://exfil-collector.net/c?h=db-prod-01", "db-prod-01"),
    ("https://exfil-collector.net/u/alice@acme.com", "alice@acme.com"),
    ("https://exfil-collector.net/u/alice%40acme.com", "alice@acme.com"),
    ("https://exfil-collector.net/u/alice%2540acme.com", "alice@acme.com"),
    ("https://exfil-collector.net/?e=alice+soc@acme.com", "soc@acme.com"),
    ("https://exfil-collector.net/x#10.0.0.7", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=0x0a000007", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=167772167", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=012.0.0.7", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=10.7", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=10%2E0%2E0%2E7", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=10%252E0%252E0%252E7", "10.0.0.7"),
    ("https://exfil-collector.net/x/10.0.0.7:8443/", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=[fd00::7]", "fd00::7"),
    ("https://exfil-collector.net/x?a=2002:a00:7::1", "10.0.0.7"),
    ("https://exfil-collector.net/x?a=10-0-0-7.nip.io", "10-0-0-7.nip.io"),
    ("https://exfil-collector.net/x?a=printer.local", "printer.local"),
    ("https://exfil-collector.net/x?d=" + base64.b64encode(b"db-prod-01.corp").decode(), "corp"),
    ("https://exfil-collector.net/x?d=" + b"10.0.0.7".hex(), "10.0.0.7"),
    ("https://exfil-collector.net/x?d=" + base64.urlsafe_b64encode(b"a@acme.com").decode(), "a@"),
    # URL-safe base64, whose alphabet differs from the standard one ("-" and "_")
    ("https://exfil-collector.net/x?d=Pj4-ZGItNy5jb3JwPz8_", "corp"),  # >>>db-7.corp???
    ("https://exfil-collector.net/x?d=ZGItNy5jb3JwIP___yB4", "corp"),  # db-7.corp, 3 x \xff, x
    # a byte that is not text must not hide the text around it
    ("https://exfil-collector.net/x?d=ZGItNy5jb3JwCg==", "corp"),  # db-7.corp and a newline
    ("https://exfil-collector.net/x?d=31302e302e302e3700", "10.0.0.7"),  # hex, NUL at the end
    ("https://user:secret@exfil-collector.net/", "credentials"),
    ("https://exfil-collector.net/x?a=db01%E3%80%82corp", "db01.corp"),  # ideographic dot
]


@pytest.mark.parametrize(("url", "named"), WITHHELD_URLS)
def test_urls_carrying_internal_data_are_reduced_to_their_host(url: str, named: str) -> None:
    target = validate_url(url, SUFFIXES)
    assert (target.kind, target.value) == ("domain", "exfil-collector.net")
    assert target.note is not None and named in target.note
    assert "Only its host exfil-collector.net was looked up" in target.note


REFUSED_URLS = [
    ("http://10.0.0.8/admin", "private address"),
    ("http://[2002:a00:8::1]/", "10.0.0.8"),
    ("http://[::ffff:10.0.0.8]/", "10.0.0.8"),
    ("http://0x0a000008/", "10.0.0.8"),
    ("http://167772168/", "10.0.0.8"),
    ("http://10.8/", "10.0.0.8"),
    ("http://10.0.0.8.nip.io/", "10.0.0.8"),
    ("http://jenkins.corp/job/1", "internal domain"),
    ("http://intranet/", "single-label"),
    ("http://evil.com\\@10.0.0.8/", "backslashes"),
    ("http://evil.com/a b", "spaces"),
    ("http://10%2e0%2e0%2e8/", "not a valid host name"),
    ("javascript:alert(1)", "not an absolute http(s) URL"),
    ("http:///nohost", "not an absolute http(s) URL"),
    ("http://evil.com:99999/", "not a valid URL"),
    ("http://[fe80::1/", "not a valid URL"),
    ("https://" + "a" * 2100 + ".com/", "too long"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED_URLS)
def test_urls_on_internal_or_unparseable_hosts_are_refused(url: str, reason: str) -> None:
    assert reason in refused(validate_url, url)


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("http://malicious-cdn.com/xmrig", "http://malicious-cdn.com/xmrig"),
        (
            "hxxps://evil-login[.]com/owa/auth.aspx?v=15.2",
            "https://evil-login.com/owa/auth.aspx?v=15.2",
        ),
        ("https://EVIL.com:8443/x#frag", "https://evil.com:8443/x"),
        ("http://185.220.101.42/bins/mirai.x86", "http://185.220.101.42/bins/mirai.x86"),
        ("https://cdn.evil.com/jquery-3.6.0.min.js", "https://cdn.evil.com/jquery-3.6.0.min.js"),
        (
            "https://evil.com/download?id=1718000000&page=2",
            "https://evil.com/download?id=1718000000&page=2",
        ),
    ],
)
def test_clean_public_urls_are_sent_whole(url: str, sent: str) -> None:
    target = validate_url(url, SUFFIXES)
    assert (target.kind, target.value, target.note) == ("url", sent, None)


def test_the_egress_gate_rechecks_whatever_built_the_target() -> None:
    ensure_sendable(validate_hash("d41d8cd98f00b204e9800998ecf8427e"), SUFFIXES)
    for forged in (
        Target(kind="ip", value="10.0.0.1", subtype="ipv4"),
        Target(kind="domain", value="db01.corp", subtype="domain"),
        Target(kind="url", value="https://evil.com/?h=db01.corp", subtype="url"),
        Target(kind="ip", value="2002:a00:1::1", subtype="ipv6"),
    ):
        with pytest.raises(IndicatorRefused):
            ensure_sendable(forged, SUFFIXES)


# --- the class, as properties -------------------------------------------------------------

internal_ipv4 = st.sampled_from(INTERNAL_NETS).flatmap(
    lambda net: st.integers(int(net.network_address), int(net.broadcast_address)).map(
        ipaddress.IPv4Address
    )
)
public_v4 = (
    st.integers(0x01000000, 0xDFFFFFFF)
    .map(ipaddress.IPv4Address)
    .filter(lambda ip: ip.is_global and non_public_reason(ip) is None)
)


def v6(value: int) -> str:
    return str(ipaddress.IPv6Address(value))


def ipv6_wrappings(
    ip: ipaddress.IPv4Address, noise: int, server: ipaddress.IPv4Address
) -> list[str]:
    n, r = int(ip), noise & 0xFFFF_FFFF_FFFF
    teredo_prefix = 0x2001_0000 << 96
    return [
        f"::ffff:{ip}",
        v6(0xFFFF << 32 | n),
        v6(0xFFFF << 48 | n),  # IPv4-translated
        f"::{ip}",
        v6(0x0064_FF9B << 96 | n),
        v6(0x2002 << 112 | n << 80 | r),  # 6to4, any subnet and host
        v6(teredo_prefix | int(server) << 64 | (r & 0xFFFF_FFFF) << 32 | (n ^ 0xFFFF_FFFF)),
        v6(teredo_prefix | n << 64 | r),  # Teredo server
        v6(0x2001_0470 << 96 | (r & 0xFFFF) << 64 | 0x5EFE << 32 | n),  # ISATAP
        v6(0x2001_0470 << 96 | 0x0200_5EFE << 32 | n),
    ]


@given(internal_ipv4, st.integers(0, 2**48 - 1), public_v4)
def test_any_internal_ipv4_in_any_ipv6_wrapper_is_refused(
    ip: ipaddress.IPv4Address, noise: int, server: ipaddress.IPv4Address
) -> None:
    for form in ipv6_wrappings(ip, noise, server):
        assert str(ip) in refused(validate_ip, form), form
        assert str(ip) in (validate_url(f"https://x-collector.net/?a={form}", SUFFIXES).note or "")
        exploded = ipaddress.IPv6Address(form).exploded.upper()
        assert str(ip) in refused(validate_url, f"http://[{exploded}]/"), form


@given(public_v4, st.integers(0, 2**48 - 1), public_v4)
def test_a_public_ipv4_in_an_ipv6_wrapper_is_judged_public(
    ip: ipaddress.IPv4Address, noise: int, server: ipaddress.IPv4Address
) -> None:
    for form in ipv6_wrappings(ip, noise, server)[:7]:
        assert all(
            non_public_reason(v4) is None for _, v4 in embedded_ipv4(ipaddress.IPv6Address(form))
        )
        validate_ip(form)


def loose_spellings(ip: ipaddress.IPv4Address) -> list[str]:
    n = int(ip)
    a, b, c, d = ip.packed
    return [
        str(n),
        hex(n),
        f"0X{n:08X}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a}.{b}.{c << 8 | d}",
        f"{a}.{b << 16 | c << 8 | d}",
        f"{hex(a)}.{b}.0{c:o}.{d}",
        f"{ip}.",
    ]


@given(internal_ipv4)
def test_any_internal_ipv4_in_any_loose_spelling_is_refused(ip: ipaddress.IPv4Address) -> None:
    for spelling in loose_spellings(ip):
        assert parse_ipv4_loose(spelling) == ip, spelling
        assert str(ip) in refused(validate_ip, spelling), spelling
        assert str(ip) in refused(validate_url, f"http://{spelling}/x"), spelling
        note = validate_url(f"https://x-collector.net/c?v={spelling}", SUFFIXES).note
        assert note is not None and str(ip) in note, spelling


label_text = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@given(internal_ipv4, st.sampled_from(WILDCARD_SERVICES), label_text, st.sampled_from("-."))
@example(ipaddress.IPv4Address("10.0.0.0"), "nip.io", "a10", "-")  # a10-10-0-0-0: the rightmost
def test_any_host_name_encoding_an_internal_ipv4_is_refused(
    ip: ipaddress.IPv4Address, service: str, prefix: str, sep: str
) -> None:
    dashed, hex8 = str(ip).replace(".", "-"), ip.packed.hex()
    a, b, c, d = str(ip).split(".")
    names = [
        f"{ip}.{service}",
        f"{prefix}.{ip}.{service}",
        f"{dashed}.{service}",
        f"{prefix}-{dashed}.{service}",
        f"{prefix}{sep}{ip}.{service}",
        f"{a}-{b}.{c}-{d}.{service}",
        f"{hex8}.{service}",
        f"{prefix}-{hex8}.{service}",
        f"{prefix}.{hex8.upper()}.{service}",
    ]
    for name in names:
        assert str(ip) in refused(validate_domain, name), name
        assert str(ip) in refused(validate_url, f"https://{name}/login"), name
        note = validate_url(f"https://x-collector.net/r?next=https://{name}/", SUFFIXES).note
        assert note is not None and name in note, name


@given(internal_ipv4)
def test_any_internal_ipv4_encoded_in_a_url_is_withheld(ip: ipaddress.IPv4Address) -> None:
    text = str(ip)
    for encoded in (
        text,
        quote(text, safe=""),
        text.replace(".", "%2E"),
        text.replace(".", "%252E"),
        base64.b64encode(text.encode()).decode(),
        base64.urlsafe_b64encode(f"src={text}".encode()).decode().rstrip("="),
        text.encode().hex(),
    ):
        for url in (
            f"https://x-collector.net/c?ip={encoded}",
            f"https://x-collector.net/{encoded}/x.png",
            f"https://x-collector.net/c#{encoded}",
        ):
            target = validate_url(url, SUFFIXES)
            assert target.kind == "domain" and text in (target.note or ""), url

"""``validate_ip`` and the egress gate's last check, with their exact words: the model
reads them and must learn what to do instead. 185.220.101.42 is the sample alerts'
public indicator; the other spellings are built from it and from RFC 1918 10.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tools.intel.indicators import (
    MAX_URL_CHARS,
    IndicatorRefused,
    Target,
    ensure_sendable,
    validate_domain,
    validate_ip,
    validate_url,
)

NOT_A_DOMAIN = "is not a valid domain name"
INTERNAL = (
    "10.0.0.1 is a private address: internal addresses are never sent to third-party "
    "services (look for it in the logs instead)"
)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0X0A000001", INTERNAL),  # upper-case hex of 10.0.0.1
        ("[10.0.0.1]", INTERNAL),
        ("10[.]0[.]0[.]1", INTERNAL),  # defanged
        (
            "0xb9dc652a",
            "'0xb9dc652a' is an unusual spelling of the address 185.220.101.42: "
            "write it in standard form to look it up",
        ),
        (
            "185.220.101.042",  # a leading zero is octal to inet_aton: 042 is 34
            "'185.220.101.042' is an unusual spelling of the address 185.220.101.34: "
            "write it in standard form to look it up",
        ),
        ("evil.example", "'evil.example' is not an IPv4 or IPv6 address"),
        # only the brackets of "[addr]" are taken off: a stray letter is not trimmed away
        ("X185.220.101.42X", "'X185.220.101.42X' is not an IPv4 or IPv6 address"),
    ],
)
def test_refusals_say_why_and_what_to_do(value: str, message: str) -> None:
    with pytest.raises(IndicatorRefused) as info:
        validate_ip(value)
    assert str(info.value) == message


def test_standard_forms_pass_unwrapped() -> None:
    assert validate_ip("[2606:4700:4700::1111]") == Target("ip", "2606:4700:4700::1111", "ipv6")
    assert validate_ip("::ffff:185.220.101.42") == Target("ip", "185.220.101.42", "ipv4")


def test_the_gate_refuses_a_target_its_validation_would_change() -> None:
    forged = Target(kind="ip", value="::ffff:185.220.101.42", subtype="ipv6")
    with pytest.raises(IndicatorRefused) as info:
        ensure_sendable(forged, ())
    assert str(info.value) == "'::ffff:185.220.101.42' is not a sendable ipv6 value"
    ensure_sendable(Target("ip", "185.220.101.42", "ipv4"), ())


def refused(validate: Callable[..., Target], value: str) -> str:
    with pytest.raises(IndicatorRefused) as info:
        validate(value, ())
    return str(info.value)


def test_domains_at_their_edges() -> None:
    labels = ["a" * 63, "b" * 63, "c" * 63, "d" * 61]
    longest = ".".join(labels)
    assert len(longest) == 253
    assert validate_domain(longest + ".", ()) == Target("domain", longest, "domain")
    assert refused(validate_domain, longest + "d") == f"{longest + 'd'!r} {NOT_A_DOMAIN}"
    too_long_label = "a" * 64 + ".com"
    assert refused(validate_domain, too_long_label) == f"{too_long_label!r} {NOT_A_DOMAIN}"
    assert refused(validate_domain, "evil.example/x") == (
        "'evil.example/x' is a URL, not a domain: use the URL lookup"
    )
    assert refused(validate_domain, "jane@example.org") == (
        "'jane@example.org' is an e-mail address: e-mail addresses are never sent to "
        "third-party services (look up the domain after the @ instead)"
    )
    assert refused(validate_domain, "[10.0.0.1]") == INTERNAL  # an address, judged as one


def test_urls_keep_their_form_or_fall_back_to_their_host() -> None:
    assert validate_url("http://[2606:4700:4700::1111]/x?q=1", ()) == Target(
        "url", "http://[2606:4700:4700::1111]/x?q=1", "url"
    )
    assert validate_url("HTTP://Example.com", ()) == Target("url", "http://example.com/", "url")
    reduced = validate_url("http://example.com/?u=10.0.0.1&m=jane@example.org#frag", ())
    assert reduced == Target(
        "domain",
        "example.com",
        "domain",
        note="the URL was not sent: it contains a private address (10.0.0.1); an e-mail "
        "address (jane@example.org). Only its host example.com was looked up (nothing "
        "internal leaves the machine).",
    )
    assert refused(validate_url, "http://1.2.3.4.5./") == (
        "'1.2.3.4.5.' is not an IPv4 or IPv6 address"  # a numeric last label: not a name
    )


def test_a_url_of_the_longest_length() -> None:
    longest = "http://example.com/" + "a" * (MAX_URL_CHARS - 19)
    assert len(longest) == MAX_URL_CHARS
    assert validate_url(longest, ()).value == longest
    assert refused(validate_url, longest + "a") == (
        "not a valid URL (too long, or contains spaces, control characters or backslashes)"
    )


@pytest.mark.parametrize(
    "written", ["evil-cdn(.)net", "evil-cdn{.}net", "evil-cdn[dot]net", "evil-cdn(dot)net"]
)
def test_defanged_domains_are_refanged(written: str) -> None:
    assert validate_domain(written, ()) == Target("domain", "evil-cdn.net", "domain")


def test_a_defanged_url_is_refanged() -> None:
    assert validate_url("HXXPS[://]evil-cdn[.]net[:]8080/x", ()) == Target(
        "url", "https://evil-cdn.net:8080/x", "url"
    )

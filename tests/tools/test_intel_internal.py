"""``tools.intel.internal``'s text judgement at its edges: base64url blobs that begin or
end with ``-`` or ``_`` (digits there, not punctuation), broken or unprintable bytes
glued to an address inside a blob, IPv6 zone ids, public addresses that pass, and the
exact reasons. Addresses are RFC 1918 / RFC 4291 ones and the sample alerts' public
indicator 185.220.101.42; the blobs are built here."""

from __future__ import annotations

import base64
from urllib.parse import urlsplit

import pytest

from tools.intel.internal import host_reason, is_internal_domain, text_reasons, url_part_reasons

SUFFIXES = (".corp",)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "raw",
    [
        b"\xfb\xff 10.1.2.3 \xfb\xff",  # "-_8g...-_8": "-" and "_" at both ends
        b"\xfb\xef10.1.2.3",  # "--8x...": "--" first
        b"10.1.2.3 \xff\xff\xff",  # "..._w": "_" last
    ],
)
def test_a_base64url_blob_with_dashes_or_underscores_at_its_ends(raw: bytes) -> None:
    blob = b64url(raw)
    assert blob[0] in "-_" or blob[-1] in "-_"
    assert text_reasons(blob, SUFFIXES) == ["a private address (10.1.2.3), encoded"]
    assert text_reasons(f"see {blob}.", SUFFIXES) == ["a private address (10.1.2.3), encoded"]


@pytest.mark.parametrize(
    "raw",
    [
        b"10.0.0.1\xff",  # a broken UTF-8 byte right after the address
        b"\xfe10.0.0.1",
        b"\x0110.0.0.1\x02",  # control characters around it
    ],
)
def test_bytes_that_are_not_text_split_the_tokens_of_a_blob(raw: bytes) -> None:
    for blob in (b64url(raw), raw.hex()):
        assert text_reasons(blob, SUFFIXES) == ["a private address (10.0.0.1), encoded"]


def test_a_blob_of_nothing_printable_is_no_reason() -> None:
    assert text_reasons(b64url(b"\x00\x01\x02\x03\x04\x05\x06"), SUFFIXES) == []
    assert text_reasons("000102030405060708", SUFFIXES) == []


@pytest.mark.parametrize(
    ("text", "reasons"),
    [
        ("fe80::1%eth0", ["a link-local address (fe80::1)"]),
        ("[fe80::1%25en0]", ["a link-local address (fe80::1)"]),
        ("fe80::1%a%b", ["a link-local address (fe80::1)"]),
        ("::ffff:10.0.0.1", ["a private address (10.0.0.1)"]),
        ("185.220.101.42", []),
        ("fe80::1X", []),  # not an address (X is no hex digit), nothing internal in it
        ("2606:4700:4700::1111", []),
        ("[2606:4700:4700::1111]:443", []),
        ("185.220.101.42:8443 and 2606:4700:4700::1111", []),
        ("db01.corp, 10.0.0.1 and jane@example.org", None),
    ],
)
def test_exact_reasons_and_public_addresses_that_pass(text: str, reasons: list[str] | None) -> None:
    expected = reasons
    if expected is None:
        expected = [
            "an internal host name (db01.corp)",
            "a private address (10.0.0.1)",
            "an e-mail address (jane@example.org)",
        ]
    assert text_reasons(text, SUFFIXES) == expected


def test_a_host_parameter_is_judged_as_a_host_name_and_only_it() -> None:
    url = urlsplit("https://example.com/search?q=malware&host=fileserver&node=")
    assert url_part_reasons(url, SUFFIXES) == ["an internal host name (fileserver)"]


def test_a_url_with_credentials_says_so() -> None:
    assert url_part_reasons(urlsplit("https://user:pw@example.com/x"), SUFFIXES) == [
        "a user name or credentials"
    ]
    assert url_part_reasons(urlsplit("https://example.com/185.220.101.42"), SUFFIXES) == []
    assert url_part_reasons(urlsplit("https://example.com/?q=10.0.0.1"), SUFFIXES) == [
        "a private address (10.0.0.1)"
    ]


def test_a_dash_or_underscore_that_encodes_the_address_itself() -> None:
    for raw in (b"\xfb10.1.2.3", b"10.1.2.3\xff"):  # "-zEw...", "...LjP_"
        blob = b64url(raw)
        assert text_reasons(blob, SUFFIXES) == ["a private address (10.1.2.3), encoded"]


def test_a_broken_percent_escape_does_not_hide_what_follows() -> None:
    assert text_reasons("%ff10.0.0.1", SUFFIXES) == [
        "an internal host name (ff10.0.0.1)",  # "ff10" is read as a name: still refused
        "a private address (10.0.0.1)",
    ]


def test_internal_names_with_a_final_dot_and_any_case() -> None:
    assert is_internal_domain("LocalHost.", SUFFIXES)
    assert is_internal_domain("db.CORP.", SUFFIXES)
    assert not is_internal_domain("localhost.example.com", SUFFIXES)
    assert host_reason("x.corp.example.com.", SUFFIXES) == (
        "carries the internal domain 'corp' as a subdomain"
    )
    assert host_reason("x.corp.com.", SUFFIXES) is None  # corp.com: a public name


def test_host_reasons_word_for_word() -> None:
    assert host_reason("db.corp", SUFFIXES) == "is an internal domain"
    assert host_reason("localhost", SUFFIXES) == "is an internal domain"
    assert host_reason("app.lvh.me", SUFFIXES) == (
        "resolves to the loopback address (wildcard DNS)"
    )
    assert host_reason("0a010203.nip.io", SUFFIXES) == (
        "encodes the private address 10.1.2.3 in its labels"
    )
    assert text_reasons("mail jane@example.org: now", SUFFIXES) == [
        "an e-mail address (jane@example.org)"
    ]


@pytest.mark.parametrize(
    ("text", "reasons"),
    [  # each reason names the value as the token shows it, its dressing taken off
        ("mail _jane@example.org_ now", ["an e-mail address (jane@example.org)"]),  # italics
        ("X@EXAMPLE.COM", ["an e-mail address (X@EXAMPLE.COM)"]),
        ("[@example.org]", []),  # no one before the @: a mention, not an address
        ("from mx.example.org ([10.1.2.3])", ["a private address (10.1.2.3)"]),  # Received:
        ("10.1.2.3.:8080", ["a private address (10.1.2.3)"]),
        ("XENAPP01.CORP", ["an internal host name (XENAPP01.CORP)"]),
    ],
)
def test_the_value_in_a_reason_is_the_token_without_its_dressing(
    text: str, reasons: list[str]
) -> None:
    assert text_reasons(text, SUFFIXES) == reasons


@pytest.mark.parametrize("last", [b"~", b"\x7f"])  # base64url "-" and "_" as the last digit
def test_the_base64url_digits_are_read_as_62_and_63(last: bytes) -> None:
    blob = b64url(b"10.1.2.3" + last)
    assert blob[-1] in "-_"
    assert text_reasons(blob, SUFFIXES) == ["a private address (10.1.2.3), encoded"]

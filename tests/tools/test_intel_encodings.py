"""Internal data behind encodings the intel and MCP egress gates once let through.

Each case here passed the gate before (found while settling mutation survivors,
issue 25): standard base64 (``+`` and ``/`` split the blob into tokens, read at
the wrong alignment), a blob glued after a ``.`` or after ``path/`` (a JWT's
payload is one), hex after ``0x``, percent-encoding nested four layers deep, and a
single-label host name in a host parameter followed by ``.``, a port, a share or an
encoded space. Addresses are RFC 1918 ones, names are invented (``.corp`` is the
configured internal suffix), the JWT is built here; nothing is from a real system.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, urlsplit

import pytest

from tools.intel.indicators import validate_url
from tools.intel.internal import TOO_DEEP, text_reasons, url_part_reasons
from tools.mcp.egress import ArgumentsWithheld, ensure_sendable

SUFFIXES = (".corp",)
PRIVATE = "a private address (10.1.2.3), encoded"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def jwt(claims: dict[str, str]) -> str:
    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("text", "reasons"),
    [
        (b64(b"\xfb10.1.2.3"), [PRIVATE]),  # "+zEw...": "+" first
        (b64(b"\xfb\xff 10.1.2.3 \xfb\xff"), [PRIVATE]),  # "+/8g...+/8=": "+/" inside
        (b64(b"\xff\xfedb01.corp"), ["an internal host name (db01.corp), encoded"]),  # "//5k..."
        ("x." + b64(b"10.1.2.3").rstrip("="), [PRIVATE]),  # glued after a dot
        ("0x" + b"10.1.2.3".hex(), [PRIVATE]),  # hex after its 0x
        (
            jwt({"sub": "jane@example.org", "src": "10.1.2.3"}),
            ["an e-mail address (jane@example.org), encoded", PRIVATE],
        ),
    ],
)
def test_blobs_that_passed_are_read(text: str, reasons: list[str]) -> None:
    assert text_reasons(text, SUFFIXES) == reasons
    with pytest.raises(ArgumentsWithheld):  # the MCP gate: nothing is sent
        ensure_sendable("enrich", {"value": text}, SUFFIXES)


@pytest.mark.parametrize(
    "url",
    [
        "https://x-collector.net/files/" + b64(b"\xfb10.1.2.3"),  # a blob after "path/"
        "https://x-collector.net/c?q=report+" + quote(b64(b"\xfb10.1.2.3"), safe=""),
        "https://x-collector.net/cb?token=" + jwt({"src": "10.1.2.3"}),
    ],
)
def test_a_url_carrying_such_a_blob_is_reduced_to_its_host(url: str) -> None:
    target = validate_url(url, SUFFIXES)
    assert (target.kind, target.value) == ("domain", "x-collector.net")
    assert PRIVATE in (target.note or "")


def layers(text: str, count: int) -> str:
    for _ in range(count):
        text = quote(text, safe="")
    return text


def test_three_layers_of_percent_encoding_are_looked_through_and_a_fourth_refused() -> None:
    dots = "10%2E1%2E2%2E3"  # one layer already: "." written as %2E
    assert text_reasons(layers(dots, 2), SUFFIXES) == ["a private address (10.1.2.3)"]
    assert text_reasons(layers(dots, 3), SUFFIXES) == [TOO_DEEP]
    assert TOO_DEEP == "percent-encoding nested more than 3 layers deep"
    public = layers("185.220.101.42/%3F", 3)  # four layers of a public value: refused too
    assert url_part_reasons(urlsplit(f"https://example.com/?q={public}"), SUFFIXES) == [TOO_DEEP]
    assert text_reasons(layers("185.220.101.42/%3F", 2), SUFFIXES) == []


@pytest.mark.parametrize(
    "value",
    [
        "fileserver.",  # a final dot
        "fileserver:445",  # a port
        "fileserver.:445",
        "fileserver/share",
        "%5C%5Cfileserver%5Cc$",  # \\fileserver\c$
        "fileserver%2520",  # an encoded space, encoded twice
        "%2566ileserver",
    ],
)
def test_a_single_label_host_parameter_is_found_in_any_dress(value: str) -> None:
    url = urlsplit(f"https://example.com/lookup?target={value}")
    assert url_part_reasons(url, SUFFIXES) == ["an internal host name (fileserver)"]


@pytest.mark.parametrize("value", ["example.com", "db.example.com:8080", "", "%20"])
def test_a_public_or_empty_host_parameter_passes(value: str) -> None:
    assert url_part_reasons(urlsplit(f"https://example.com/lookup?host={value}"), SUFFIXES) == []


@pytest.mark.parametrize("value", ["XEROX", "XEROX.:9100", "%5C%5CXEROX%5Cscans"])
def test_the_host_parameters_name_is_shown_whole(value: str) -> None:
    url = urlsplit(f"https://example.com/lookup?host={value}")  # a printer's name
    assert url_part_reasons(url, SUFFIXES) == ["an internal host name (XEROX)"]


# Random bytes (os.urandom here; invented) whose hex or base64 spells "::" or "::de" at
# some alignment: noise, not an address of anyone's network, so not refused. An address
# that does name a host stays refused behind the same encodings.
NOISE = [
    "637ae1d0d3b3a3a2b511f694d6828e78381df02e5506855f5d912c5befb56c36",
    "d66393a5344079d23a3a9990db50080d",
    "20c31f48debdba83a3a6445b3c282efe",
    "VJV6A6OsGvbFR9KCgEnk5bGlCUnKzlca",
    "IMMfSN69uoOjpkRbPCgu/up9stUBGL4w",
]


@pytest.mark.parametrize("text", NOISE)
def test_noise_that_spells_a_hostless_ipv6_address_is_sent(text: str) -> None:
    assert text_reasons(text, SUFFIXES) == []
    hostless = (b"::", b"::1", b"::ff:ffff", b"[::]", b"-::1.")
    assert text_reasons(" ".join(b64(a) + " " + a.hex() for a in hostless), SUFFIXES) == []
    said = text_reasons("[::] ::1 root@fileserver", SUFFIXES)  # written out: refused
    assert said == [
        "a unspecified address (::)",
        "a loopback address (::1)",
        "an e-mail address (root@fileserver)",
    ]
    assert text_reasons(b64(b"root@fileserver"), SUFFIXES) == []  # noise-like: no dot


@pytest.mark.parametrize("address", ["fd00::1", "fe80::1", "::a00:1", "::ffff:10.0.0.1"])
def test_an_ipv6_address_naming_a_host_is_refused_behind_encodings(address: str) -> None:
    [plain] = text_reasons(address, SUFFIXES)
    for encoded in (b64(address.encode()), address.encode().hex()):
        assert text_reasons(f"id {encoded}", SUFFIXES) == [f"{plain}, encoded"]

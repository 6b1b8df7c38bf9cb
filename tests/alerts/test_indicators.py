"""Indicator extraction from arbitrary alert JSON."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from alerts.addresses import non_public_reason
from alerts.indicators import extract_indicators
from alerts.parse import Indicator

ALERTS = Path(__file__).parents[1] / "fixtures" / "alerts"
SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def pairs(data: Any) -> set[tuple[str, str]]:
    return {(i.kind, i.value) for i in extract_indicators(data)}


def test_scc_finding_yields_the_analyst_indicators() -> None:
    found = extract_indicators(json.loads((ALERTS / "leveret-scc.json").read_text()))
    assert [(i.kind, i.value) for i in found] == [
        ("ipv4", "185.220.101.42"),
        ("domain", "pool.minexmr.com"),
        ("ipv4", "195.123.245.89"),
        ("domain", "xmr-pool-eu.hashvault.pro"),
        ("url", "stratum+tcp://pool.minexmr.com:4444"),
        ("principal", "attacker@external-domain.com"),
        ("url", "http://malicious-cdn.com/xmrig"),
        ("domain", "malicious-cdn.com"),
        ("email", "security-team@example.com"),
    ]
    assert not any(i.private for i in found)


def test_guardduty_finding_keeps_private_ips_marked_and_skips_hex_ids() -> None:
    data = json.loads((ALERTS / "leveret-guardduty-finding.json").read_text())
    found = extract_indicators(data)
    assert found == [
        Indicator(kind="ipv4", value="192.168.0.1", private=True),
        Indicator(kind="ipv4", value="198.51.100.0", private=True),  # documentation range
        Indicator(kind="domain", value="3322.org"),
    ]
    # DetectorId and finding Id are 32 hex chars: ids, not md5 hashes.
    assert "c6b248a96abef3c6dd24b07e13380b04" in json.dumps(data)


def test_duplicates_are_removed_in_first_seen_order() -> None:
    data = {"a": "8.8.8.8 and 8.8.8.8", "b": ["8.8.8.8", {"c": "evil.example.com 8.8.8.8"}]}
    found = extract_indicators(data)
    assert [(i.kind, i.value) for i in found] == [
        ("ipv4", "8.8.8.8"),
        ("domain", "evil.example.com"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("curl/7.68.0", set()),
        ("Mozilla/5.0 Chrome/120.0.0.0 Safari/537.36", set()),
        ("upgraded to version 1.2.3.4 today", set()),
        ("build v10.0.19041.1", set()),
        ("2023-04-16T06:11:53.438Z", set()),
        ("at 06:11:53 the job ran", set()),
        ("read config.json and setup.py then libc.so.6", set()),
        ("see README.md or run.sh", set()),
        ("e.g. this, i.e. that", set()),
        ("v1.compute.instances.start", set()),
        ("MAC 00:1a:2b:3c:4d:5e", set()),
        ("10.0.0.0/8 is internal", set()),
        ("cpu 98.5% over 12.5 minutes", set()),
        ("300.1.2.3 is not an address", set()),
    ],
)
def test_no_false_positives(text: str, expected: set[tuple[str, str]]) -> None:
    assert pairs({"message": text}) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"m": "from 203.0.113.9:443"}, {("ipv4", "203.0.113.9")}),
        ({"m": "src=2001:4860:4860::8888"}, {("ipv6", "2001:4860:4860::8888")}),
        (
            {"m": "GET https://evil.test.xyz/a?b=1, then"},
            {("url", "https://evil.test.xyz/a?b=1"), ("domain", "evil.test.xyz")},
        ),
        ({"m": "hxxp://bad[.]ru/x"}, {("url", "http://bad.ru/x"), ("domain", "bad.ru")}),
        ({"m": "mail from Bob.Smith@Corp-Mail.com"}, {("email", "bob.smith@corp-mail.com")}),
        (
            {"md5": "D41D8CD98F00B204E9800998ECF8427E"},
            {("md5", "d41d8cd98f00b204e9800998ecf8427e")},
        ),
        (
            {"note": "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709"},
            {("sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709")},
        ),
        (
            {"imageId": "sha256:" + SHA256},
            {("sha256", SHA256)},
        ),
        ({"requestId": "0123456789abcdef0123456789abcdef"}, set()),
        ({"customerIDString": "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4"}, set()),  # an id, not md5
        ({"FilePath": "C:\\Users\\bob\\Downloads\\eicar.com"}, set()),
        ({"path": "/tmp/x/eicar.com"}, set()),
        ({"CommandLine": "open -a app.app --args eicar.com"}, set()),
        ({"cmdline": "curl -s evil.example.com"}, {("domain", "evil.example.com")}),
        ({"output": "fd.name=evil.io:443 proc.name=curl"}, {("domain", "evil.io")}),
        ({"m": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, set()),
        ({"Domain": "updates.zip"}, {("domain", "updates.zip")}),
        ({"file": "updates.zip"}, set()),
        ({"PrivateDnsName": "ip-10-0-0-1.ec2.internal"}, {("domain", "ip-10-0-0-1.ec2.internal")}),
        ({"serviceName": "compute.googleapis.com"}, set()),
        ({"link": "https://www.virustotal.com/gui/ip-address/1.1.1.1"}, {("ipv4", "1.1.1.1")}),
        ({"h": "peer 2606:4700:4700::1111"}, {("ipv6", "2606:4700:4700::1111")}),
        (
            {"m": "redirect https://x.io/to/203.0.113.7"},
            {("url", "https://x.io/to/203.0.113.7"), ("domain", "x.io"), ("ipv4", "203.0.113.7")},
        ),
    ],
)
def test_indicator_kinds(data: dict[str, Any], expected: set[tuple[str, str]]) -> None:
    assert pairs(data) == expected


def test_private_marking() -> None:
    found = {
        i.value: i.private
        for i in extract_indicators(
            {"a": "10.1.2.3 127.0.0.1 169.254.169.254 8.8.8.8 fe80::1 2001:4860:4860::8888"}
        )
    }
    assert found == {
        "10.1.2.3": True,
        "127.0.0.1": True,
        "169.254.169.254": True,
        "8.8.8.8": False,
        "fe80::1": True,
        "2001:4860:4860::8888": False,
    }
    internal = extract_indicators({"hostname": "db01.corp"})
    assert internal == [Indicator(kind="domain", value="db01.corp", private=True)]


def test_principals_gcp_and_aws() -> None:
    data = {
        "protoPayload": {
            "authenticationInfo": {"principalEmail": "SA-deploy@proj.iam.gserviceaccount.com"},
            "principalSubject": "user:alice@example.org",
        },
        "userIdentity": {
            "type": "IAMUser",
            "arn": "arn:aws:iam::123456789012:user/bob",
            "userName": "bob",
        },
        "sts": "assumed arn:aws:sts::123456789012:assumed-role/Admin/session-1.",
        "resource": "arn:aws:guardduty:us-east-1:123456789012:detector/abc",
        "user": "unknown",
    }
    assert pairs(data) == {
        ("principal", "sa-deploy@proj.iam.gserviceaccount.com"),
        ("principal", "alice@example.org"),
        ("principal", "arn:aws:iam::123456789012:user/bob"),
        ("principal", "bob"),
        ("principal", "arn:aws:sts::123456789012:assumed-role/Admin/session-1"),
    }


def test_non_string_values_and_empty_input() -> None:
    assert extract_indicators({}) == []
    assert extract_indicators([]) == []
    assert extract_indicators({"n": 1, "b": True, "x": None, "f": 1.5}) == []
    assert pairs("just 8.8.4.4") == {("ipv4", "8.8.4.4")}


def test_output_is_capped() -> None:
    data = {"ips": [f"8.8.{i // 250}.{i % 250}" for i in range(500)]}
    assert len(extract_indicators(data)) == 100


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=25,
)


@given(JSON)
def test_any_json_extracts_without_error_and_without_duplicates(data: Any) -> None:
    found = extract_indicators(data)
    assert len(found) <= 100
    assert len({(i.kind, i.value) for i in found}) == len(found)
    for indicator in found:
        if indicator.kind in ("ipv4", "ipv6"):
            ip = ipaddress.ip_address(indicator.value)
            assert indicator.private == (non_public_reason(ip) is not None)


@given(st.ip_addresses(), st.sampled_from(["src {} dst", "{}", "ip={},", "[{}]", "({})"]))
def test_any_address_in_text_is_found_and_marked(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address, template: str
) -> None:
    assume(str(ip) != "::")  # the unspecified IPv6 address alone is not an indicator
    found = extract_indicators({"message": template.format(ip)})
    kind = f"ipv{ip.version}"
    # private as the threat-intel gate judges it (IPv4 inside IPv6 included)
    private = non_public_reason(ip) is not None
    assert Indicator(kind=kind, value=str(ip), private=private) in found


def test_only_file_and_process_hashes_are_hashes() -> None:
    token = "57e8b514704467a0b0d82a96331c8082a94540c2cab5eb838250fb06d3939f11"
    assert pairs({"debugContext": {"debugData": {"dtHash": token}}}) == set()  # Okta device token
    assert pairs({"file": {"hash": {"sha256": token}}}) == {("sha256", token)}
    assert pairs({"process": {"hash": token}}) == {("sha256", token)}
    assert pairs({"SHA256String": token}) == {("sha256", token)}

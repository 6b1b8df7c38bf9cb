"""The recognisers, finding by finding: kind, value, spelling and the key that says two
spellings are one value; what each setting switches off; what stands glued to a word."""

from __future__ import annotations

from agent.model.privacy.detect import Detector, Finding, _emails, _phones, _us_ends, usable
from config.privacy_settings import PrivacySettings


def _scan(text: str, **settings: object) -> list[Finding]:
    kw = {"enabled": True, **settings}
    suffixes = tuple(kw.pop("suffixes", ()))  # type: ignore[arg-type]
    return list(Detector(PrivacySettings(**kw), internal_suffixes=suffixes).scan(text))


def test_an_email_with_its_key_and_one_in_a_url() -> None:
    assert _scan("from JDoe@Example.com") == [
        Finding("EMAIL", "JDoe@Example.com", "JDoe@Example.com", "jdoe@example.com")
    ]
    assert _scan("?to=J.Doe%40example.com&x=1") == [
        Finding("EMAIL", "J.Doe@example.com", "J.Doe%40example.com", "j.doe@example.com")
    ]
    assert _scan("JDoe@Example.com", emails=False) == []


def test_leading_dots_of_a_local_part_are_dropped() -> None:
    assert _emails("to: ..jdoe@example.com, .x@example.com") == [
        "jdoe@example.com",
        "x@example.com",
    ]


def test_leading_dots_of_an_encoded_local_part_are_dropped() -> None:
    assert _emails("a=..jdoe%40example.com b=.x%40example.com") == [
        "jdoe%40example.com",
        "x%40example.com",
    ]


def test_a_domain_user_with_its_key_unless_numeric_or_switched_off() -> None:
    assert _scan("logon CORP\\JDoeX. failed") == [Finding("USER", "JDoeX", "JDoeX", "jdoex")]
    assert _scan("logon CORP\\12345 failed") == []  # a number is nobody's name
    assert _scan("logon CORP\\jdoe", users=False) == []


def test_what_is_usable() -> None:
    assert not usable("USER", "12345") and not usable("USER", "1.2.3")
    assert usable("PERSON", "12345") and usable("HOST", "1.2.3")
    assert not usable("PERSON", "ab") and not usable("USER", " Admin ")


def test_ip_findings_carry_the_compressed_address_as_key() -> None:
    assert _scan("from 10.0.0.1 and FD00:0:0::1", ips="internal") == [
        Finding("IP", "10.0.0.1", "10.0.0.1", "10.0.0.1"),
        Finding("IP", "FD00:0:0::1", "FD00:0:0::1", "fd00::1"),
    ]
    assert _scan("8.8.8.8", ips="internal") == []
    assert _scan("8.8.8.8", ips="all") == [Finding("IP", "8.8.8.8", "8.8.8.8", "8.8.8.8")]


def test_an_address_glued_to_what_stands_before_it_is_not_one() -> None:
    for text in ("x10.0.0.1", "v .10.0.0.1", "v 5.10.0.0.1"):
        assert _scan(text, ips="all") == [], text


def test_internal_hosts_by_suffix_in_any_case() -> None:
    found = _scan(
        "WEB01.CORP.EXAMPLE, pc7.lan, web01.corp.example.com, web01.corp.example.COM",
        hosts=True,
        suffixes=(".corp.example.", "lan", "."),
    )
    assert found == [
        Finding("HOST", "WEB01.CORP.EXAMPLE", "WEB01.CORP.EXAMPLE", "web01.corp.example"),
        Finding("HOST", "pc7.lan", "pc7.lan", "pc7.lan"),
    ]
    assert _scan("pc7.lan", hosts=False, suffixes=("lan",)) == []
    assert _scan("pc7.lan and a.b", hosts=True) == []  # no suffixes: no host is internal
    assert (
        Detector(PrivacySettings(enabled=True, hosts=True), internal_suffixes=(".",)).hosts is None
    )
    # A suffix is stripped of its dots only (a label may be any letter).
    assert _scan("pc.corp", hosts=True, suffixes=("corp.X",)) == []
    assert _scan("pc.x", hosts=True, suffixes=("X",)) == [Finding("HOST", "pc.x", "pc.x", "pc.x")]


def test_a_teams_pattern_with_its_key() -> None:
    assert _scan("badge EMP-1234A and  ", patterns=[r"EMP-[0-9]{4}A", r" +$"]) == [
        Finding("ID", "EMP-1234A", "EMP-1234A", "emp-1234a")
    ]


def test_phones_after_a_glued_or_unparsable_one() -> None:
    found = list(_phones("x+12025550143, +999 999 9999, +1 202 555 0143"))
    assert found == [Finding("PHONE", "+1 202 555 0143", "+1 202 555 0143", "+12025550143")]
    assert [f.key for f in _phones("202-555-0143 and (202) 555-0178")] == [
        "+12025550143",
        "+12025550178",
    ]


def test_a_us_number_end_at_the_very_start() -> None:
    assert _us_ends("-1234 .5678 -9012x") == [5, 11]
    assert _us_ends("-1234x -5678") == [12]  # (what follows the four digits: one character)
    assert _us_ends("\u00e9-1234 .5678 -9012\u00e9") == [6, 12]


def _value(kind: str, value: str, **settings: object) -> Finding | None:
    return Detector(PrivacySettings(enabled=True, **settings)).value(kind, value)  # type: ignore[arg-type]


def test_a_known_value_by_its_shape() -> None:
    assert _value("PERSON", " JDoe@Example.com ") == Finding(
        "EMAIL", "JDoe@Example.com", "JDoe@Example.com", "jdoe@example.com"
    )
    assert _value("PERSON", "jdoe@example.com", emails=False) is None
    # A user hint keeps an e-mail-shaped user name a user (a UPN).
    assert _value("USER", "jdoe@example.com") == Finding(
        "USER", "jdoe@example.com", "jdoe@example.com", "jdoe@example.com"
    )
    assert _value("USER", "+1 202 555 0143") == Finding(
        "PHONE", "+1 202 555 0143", "+1 202 555 0143", "+12025550143"
    )
    assert _value("USER", "+1 202 555 0143", phones=False) is None
    assert _value("USER", "call +1 202 555 0143") == Finding(
        "PERSON", "call +1 202 555 0143", "call +1 202 555 0143", "call +1 202 555 0143"
    )


def test_a_known_address_as_the_setting_says() -> None:
    assert _value("HOST", "10.0.0.1") is None
    assert _value("HOST", "10.0.0.1", ips="internal") == Finding(
        "IP", "10.0.0.1", "10.0.0.1", "10.0.0.1"
    )
    assert _value("HOST", "8.8.8.8", ips="internal") is None
    assert _value("HOST", "FD00::0:1", ips="all") == Finding(
        "IP", "FD00::0:1", "FD00::0:1", "fd00::1"
    )


def test_a_user_with_a_space_is_a_person_when_names_are_on() -> None:
    assert _value("USER", "John Smith") == Finding(
        "PERSON", "John Smith", "John Smith", "john smith"
    )
    assert _value("USER", "John Smith", names=False) == Finding(
        "USER", "John Smith", "John Smith", "john smith"
    )
    assert _value("USER", "jsmith", names=False) == Finding("USER", "jsmith", "jsmith", "jsmith")
    assert _value("USER", "12345") is None
    assert _value("PERSON", "John Smith", names=False) is None
    assert _value("HOST", "web01") is None  # hosts are off by default

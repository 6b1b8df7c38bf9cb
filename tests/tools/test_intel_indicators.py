"""``validate_ip`` and the egress gate's last check, with their exact words: the model
reads them and must learn what to do instead. 185.220.101.42 is the sample alerts'
public indicator; the other spellings are built from it and from RFC 1918 10.0.0.1."""

from __future__ import annotations

import pytest

from tools.intel.indicators import IndicatorRefused, Target, ensure_sendable, validate_ip

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

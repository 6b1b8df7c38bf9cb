"""Grounding, the egress gates and the eval scorer read every defanged spelling alike.

The same defanged indicator is the same value to the review's evidence check
(``agent.review.grounding``), to the threat-intel gate (``tools.intel.indicators``),
to the MCP gate's free-text check (``tools.intel.internal.text_reasons``) and to the
scorer (``evals.normalise``): all of them refang with ``alerts.defang``.
"""

from __future__ import annotations

import pytest

from agent.review.grounding import check_text, quoted_values
from evals.normalise import contains, normalise
from tools.intel.indicators import IndicatorRefused, validate_domain, validate_ip, validate_url
from tools.intel.internal import text_reasons

DOTS = [".", "[.]", "(.)", "{.}", "[dot]", "(dot)", "{DOT}", "[ . ]", "[.)"]
COLONS = [":", "[:]", "(:)", "{ : }"]
SEPARATORS = ["://", "[://]", "(://)", "[:]//"]
SCHEMES = ["https", "hxxps", "HXXPS", "hXXps"]
ATS = ["@", "[@]", "[at]", "(at)", "{ AT }"]

IP = "185.220.101.42"
IPV6 = "2606:4700:4700::1111"
DOMAIN = "evil-cdn.net"
URL = "https://evil-cdn.net/x.sh"
EMAIL = "bob@evil-cdn.net"

CASES = (
    [("ipv4", IP, IP.replace(".", dot)) for dot in DOTS]
    + [("ipv6", IPV6, IPV6.replace(":", colon)) for colon in COLONS]
    + [("domain", DOMAIN, DOMAIN.replace(".", dot)) for dot in DOTS]
    + [
        ("url", URL, f"{scheme}{sep}evil-cdn{dot}net/x.sh")
        for scheme in SCHEMES
        for sep in SEPARATORS
        for dot in DOTS[:6]
    ]
    + [("email", EMAIL, f"bob{at}evil-cdn{dot}net") for at in ATS for dot in DOTS]
)


def _gate(kind: str, written: str) -> str:
    """What the threat-intel gate looks up for ``written`` (or why it refuses it)."""
    try:
        if kind in ("ipv4", "ipv6"):
            return validate_ip(written).value
        if kind == "url":
            return validate_url(written, ()).value
        return validate_domain(written, ()).value
    except IndicatorRefused as refused:
        return str(refused)


@pytest.mark.parametrize(("kind", "plain", "written"), CASES)
def test_grounding_and_the_gate_read_a_defanged_indicator_as_the_same_value(
    kind: str, plain: str, written: str
) -> None:
    assert (kind, plain) in quoted_values(f"beacon to {written} twice")
    assert check_text(f"beacon to {plain}", f'{{"ioc": "{written}"}}') == []
    assert check_text(f"beacon to {written}", f'{{"ioc": "{plain}"}}') == []
    if kind == "email":  # never looked up: refused as the address it is
        assert "is an e-mail address" in _gate(kind, written)
        assert f"an e-mail address ({plain})" in text_reasons(f"mail {written} now", ())
    else:
        assert _gate(kind, written) == plain
    assert contains(normalise(f"beacon to {written} twice"), plain)


INTERNAL = [
    ("10.0.0[.]5", "a private address (10.0.0.5)"),
    ("10(dot)0(dot)0(dot)5", "a private address (10.0.0.5)"),
    ("db01[.]corp{.}internal", "an internal host name (db01.corp.internal)"),
    ("fd00[:][:]1", "a private address (fd00::1)"),
    ("ops(at)corp[.]com", "an e-mail address (ops@corp.com)"),
]


@pytest.mark.parametrize(("written", "reason"), INTERNAL)
def test_the_mcp_gate_refuses_what_is_internal_in_any_defanged_spelling(
    written: str, reason: str
) -> None:
    assert reason in text_reasons(f"look up {written} please", ())


def test_a_defanged_e_mail_in_a_url_is_withheld_by_the_intel_gate() -> None:
    target = validate_url("hxxps[://]evil-cdn[.]net/?u=bob(at)corp[.]com", ())
    assert (target.kind, target.value) == ("domain", DOMAIN)
    assert target.note is not None and "an e-mail address (bob@corp.com)" in target.note

"""The code check: which values a finding quotes, and whether cited results contain them."""

from __future__ import annotations

import pytest

from agent.concluder import Conclusion, KeyFinding
from agent.planner import Step
from agent.review.evidence import Evidence, normalize_ref
from agent.review.grounding import check_conclusion, check_text, quoted_values
from tools.base import ToolResult

# A result shaped like the DuckDB log tool's (invented values, RFC 5737 / 2606 ranges).
RESULT = (
    '{"rows": [{"user_name": "J.Doe@example.com", "src_ip": "203.0.113.7", "n": 57, '
    '"first_seen": "2025-11-07T21:38:02.120000+00:00", "bytes": 2684354560, '
    '"start": 1762551973, "sha256": '
    '"275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f", '
    '"url": "http://malware.example.net/x.sh", "v6": "2001:db8:0:0:0:0:0:1"}]}'
)

CASES = [
    ("57 failed SSO sign-ins from 203.0.113.7", []),
    ("j.doe@example.com signed in", []),
    ("first seen 2025-11-07 21:38:02 UTC", []),
    ("first seen 2025-11-07T21:38", []),
    ("flow started 2025-11-07 21:46:13", []),  # epoch seconds in the result
    ("2.5 GB sent", []),  # 2684354560 bytes = 2.5 GiB
    ("source 203.0.113[.]7", []),  # defanged
    ("IPv6 2001:db8::1 seen", []),
    ("downloaded hxxp://malware.example[.]net/x.sh", []),
    ("hash 275A021BBFB6489E54D471899F7DB9D1663FC695EC2FE2A2C4538AABF651FD0F", []),
    ("0 successful logins, 1 event", []),  # zero and one are not checked
    ("the spray lasted 27 minutes", []),  # durations are derived, not checked
    ("58 failed logins", ["number '58'"]),
    ("from 203.0.113.70", ["ipv4 '203.0.113.70'"]),
    ("first seen 2025-11-07 21:39", ["timestamp '2025-11-07 21:39'"]),
    ("contacted evil.example.org", ["domain 'evil.example.org'"]),
    ("mallory@example.com signed in", ["email 'mallory@example.com'"]),
    ("3.1 GB sent", ["bytes '3.1'"]),
    (
        "role assumed by arn:aws:iam::123456789012:user/bob",
        ["principal 'arn:aws:iam::123456789012:user/bob'"],
    ),
]


@pytest.mark.parametrize(("text", "missing"), CASES)
def test_values_are_looked_up_in_the_cited_results(text: str, missing: list[str]) -> None:
    problems = check_text(text, RESULT)
    assert [p.split(" does not appear")[0] for p in problems] == missing


# A value is found only as a whole token: a quoted value that is part of a longer one in
# the result (another address, a look-alike domain) is not in the result (invented values).
TOKENS = [
    ("from 203.0.113.7", '{"src_ip": "203.0.113.70"}', ["ipv4 '203.0.113.7'"]),
    ("from 203.0.113.7", '{"src_ip": "10.203.0.113.7"}', ["ipv4 '203.0.113.7'"]),
    ("from 203.0.113.7", '{"src_ip": "203.0.113.7"}', []),
    ("from 203.0.113.7", '{"peer": "203.0.113.7:443"}', []),
    ("contacted evil.com", '{"domain": "notevil.com"}', ["domain 'evil.com'"]),
    ("contacted evil.com", '{"domain": "evil.com.example.net"}', ["domain 'evil.com'"]),
    ("contacted evil.com", '{"domain": "my-evil.com"}', ["domain 'evil.com'"]),
    ("contacted evil.com", '{"query": "EVIL.COM."}', []),
    ("bob@example.com signed in", '{"user": "jbob@example.com"}', ["email 'bob@example.com'"]),
    ("bob@example.com signed in", '{"user": "bob@example.com"}', []),
]


@pytest.mark.parametrize(("text", "result", "missing"), TOKENS)
def test_values_match_whole_tokens_only(text: str, result: str, missing: list[str]) -> None:
    problems = check_text(text, result)
    assert [p.split(" does not appear")[0] for p in problems] == missing


def test_quoted_values_lists_each_kind_once() -> None:
    values = quoted_values("203.0.113.7 made 57 failed logins; 203.0.113.7 again, 57 failed logins")
    assert values == [("ipv4", "203.0.113.7"), ("number", "57")]


def evidence() -> Evidence:
    ev = Evidence()
    for step_id, ok, data in (
        ("s1", True, {"ip": "203.0.113.7", "verdict": "malicious"}),
        ("s1", False, {"error": "quota exceeded"}),
        ("s2", True, {"rows": [{"user": "alice", "logins": 3}]}),
    ):
        ref = ev.next_ref(step_id)
        ev.add(ref, step_id, ToolResult("lookup_ip", {"ip": "x"}, data, ok, 1.0, 10, False))
    return ev


def test_references_are_numbered_per_step_and_normalized() -> None:
    ev = evidence()
    assert list(ev.items) == ["s1#1", "s1#2", "s2#1"]
    assert ev.next_ref(None) == "d#1"
    assert normalize_ref(" [S2#1] ") == "s2#1" and ev.get("[S2#1]") is not None
    assert ev.index() == [
        "s1#1 lookup_ip(ip='x') → ok",
        "s1#2 lookup_ip(ip='x') → error",
        "s2#1 lookup_ip(ip='x') → ok",
    ]


def verdict(**kw: object) -> Conclusion:
    base: dict[str, object] = {
        "verdict": "true_positive",
        "severity": "high",
        "confidence": "medium",
        "summary": "s",
        "key_findings": [],
        "uncertainties": [],
        "recommendations": [],
    }
    return Conclusion.model_validate({**base, **kw})


def steps(*statuses: str) -> list[Step]:
    return [
        Step(id=f"s{n}", description="d", tools=[], expected="e", status=status)  # type: ignore[arg-type]
        for n, status in enumerate(statuses, start=1)
    ]


def test_value_must_be_in_the_results_it_cites_not_just_any() -> None:
    kf = KeyFinding(
        finding="alice logged in 3 times from 203.0.113.7", evidence="", evidence_refs=["s2#1"]
    )
    check = check_conclusion(
        verdict(key_findings=[kf]), evidence(), trusted="", steps=steps("done")
    )
    assert check.findings[0].problems == [
        "ipv4 '203.0.113.7' does not appear in the cited tool results or the alert"
    ]
    kf.evidence_refs = ["s2#1", "s1#1"]
    assert check_conclusion(verdict(key_findings=[kf]), evidence(), trusted="").passed


def test_values_from_the_alert_need_no_tool_result() -> None:
    kf = KeyFinding(finding="The alert names 198.51.100.9", evidence="", evidence_refs=["alert"])
    check = check_conclusion(verdict(key_findings=[kf]), evidence(), trusted="ip 198.51.100.9")
    assert check.passed and check.verified == 1


@pytest.mark.parametrize(
    ("kw", "statuses", "problems"),
    [
        ({}, ("done",), ["verdict true_positive with no key finding to support it"]),
        (
            {"verdict": "benign"},
            ("failed", "cancelled"),
            ["verdict benign although no step completed"],
        ),
        (
            {"verdict": "benign", "confidence": "high"},
            ("done", "failed"),
            ["confidence high although 1 of 2 steps failed; lower it"],
        ),
        ({"verdict": "inconclusive", "confidence": "low"}, ("failed", "failed"), []),
        ({"verdict": "benign", "confidence": "high"}, ("done", "done", "failed", "cancelled"), []),
    ],
)
def test_verdict_rules(
    kw: dict[str, object], statuses: tuple[str, ...], problems: list[str]
) -> None:
    check = check_conclusion(verdict(**kw), evidence(), trusted="", steps=steps(*statuses))
    assert check.verdict_problems == problems

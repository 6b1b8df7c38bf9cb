"""The grounding check's matching, case by case: defanged results, URLs, times, numbers
and byte units, and how cited results are joined (cases found by mutation testing,
``scripts/mutation.py grounding``; invented values in RFC 5737 / 2606 ranges)."""

from __future__ import annotations

import time

import pytest

from agent.concluder import KeyFinding
from agent.review.grounding import check_conclusion, check_text
from tests.agent.review.test_grounding import evidence, steps, verdict

URL = "http://malware.example.net/x.sh"
STAMP = '{"first_seen": "2025-11-07T21:38:02.120000+00:00"}'
BYTES = '{"bytes": 2684354560}'  # 2.5 GiB, 2.684 GB, 2621440 KiB

CASES = [
    # a result that quotes an indicator defanged still holds it
    ("from 203.0.113.7", '{"ioc": "203.0.113[.]7"}', []),
    ("from 203.0.113.7", '{"ioc": "203.0.113(.)7"}', []),
    ("from 203.0.113.7", '{"ioc": "203.0.113{.}7"}', []),
    ("from 203.0.113.7", '{"ioc": "203[dot]0[dot]113[dot]7"}', []),
    (f"downloaded {URL}", '{"ioc": "hxxp://malware[.]example[.]net/x.sh"}', []),
    (f"downloaded {URL}", '{"ioc": "HXXP://malware.example.net/x.sh"}', []),
    (f"downloaded {URL}", '{"ioc": "hxxp[:]//malware.example.net/x.sh"}', []),
    # a URL is whole too: not the start of a longer path
    ("fetched http://malware.example.net/x", f'{{"url": "{URL}"}}', ["url"]),
    ("fetched http://malware.example.net/a", '{"url": "http://malware.example.net/ab"}', ["url"]),
    ("fetched http://malware.example.net/a/", '{"url": "http://malware.example.net/a"}', []),
    ("fetched http://malware.example.net/a", '{"url": "http://malware.example.net/a/"}', []),
    ("fetched http://malware.example.net/BOX", '{"url": "http://malware.example.net/BOX"}', []),
    # a time of day alone, against a full timestamp with fractions
    ("at 21:38:02", STAMP, []),
    ("at 21:38:03", STAMP, ["time '21:38:03'"]),
    # counts and percentages, thousands separators; 0 and 1 are not checked, 2 is
    ("12% of hosts", '{"pct": 12}', []),
    ("13% of hosts", '{"pct": 12}', ["number '13'"]),
    ("1,234 failed logins", '{"n": 1234.0}', []),
    ("1 event", "{}", []),
    ("2 events", "{}", ["number '2'"]),
    # byte units, decimal and binary, to the precision quoted
    ("2.684 GB sent", BYTES, []),
    ("2,621,440 KB sent", BYTES, []),
    ("2.5 GiB sent", BYTES, []),
    ("2.7 TB sent", BYTES, ["bytes '2.7'"]),
    ("20000000000000000 KB sent", '{"bytes": 20000000000000000000}', []),  # str() is 2e+16
    # epoch seconds stand for a time only: not for the numbers written in it, and each one
    ("flow ended 2025-11-07 21:46:14", '{"start": 1762551973, "end": 1762551974}', []),
    ("46 failed logins", '{"start": 1762551973}', ["number '46'"]),
    ("2025 failed logins", '{"start": 1762551973}', ["number '2025'"]),
    # a time-like token that is no IPv6 address does not hide the one after it
    ("IPv6 2001:db8::1 seen", '{"t": "10:20:30", "v6": "2001:db8:0:0:0:0:0:1"}', []),
]


@pytest.mark.parametrize(("text", "result", "missing"), CASES)
def test_values_in_results(text: str, result: str, missing: list[str]) -> None:
    problems = check_text(text, result)
    assert [p.split(" does not appear")[0].split(" 'http")[0] for p in problems] == missing


def test_epoch_seconds_are_read_in_utc_whatever_the_local_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert check_text("flow started 2025-11-07 21:46:13", '{"start": 1762551973}') == []
    finally:
        monkeypatch.undo()
        time.tzset()


def test_the_alert_and_each_cited_result_are_searched_apart_and_all() -> None:
    """A value at the end of the alert text is whole; an ``alert`` reference does not
    stop the references after it from being read."""
    kf = KeyFinding(
        finding="203.0.113.7 is malicious; alice logged in 3 times from 198.51.100.9",
        evidence="",
        evidence_refs=["alert", "s1#1", "s2#1"],
    )
    check = check_conclusion(verdict(key_findings=[kf]), evidence(), trusted="src 198.51.100.9")
    assert check.passed
    assert check.findings[0].refs == ["alert", "s1#1", "s2#1"]


def test_high_confidence_needs_a_verified_finding() -> None:
    kf = KeyFinding(finding="seen 192.0.2.55", evidence="", evidence_refs=["s1#1"])
    check = check_conclusion(
        verdict(key_findings=[kf], confidence="high"), evidence(), trusted="", steps=steps("done")
    )
    assert check.verdict_problems == ["confidence high although no key finding is verified"]

"""The scorer's normalisation, gates and figures, on hand-made attempts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evals.aggregate import percentile, summary
from evals.normalise import contains, normalise
from evals.results import Attempt
from evals.scenario import Scenario
from evals.score import score
from evals.techniques import claimed_techniques, technique_match
from evals.truth import LEGACY_LIMITS, Limits, Truth, from_legacy


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("Traffic to 185.220.101[.]42 on 443", "185.220.101.42", True),
        ("see hxxps://evil[.]example/x", "https://evil.example/x", True),
        ("mail from attacker[@]evil(.)com", "attacker@evil.com", True),
        ("host 2001:DB8:0:0:0:0:0:1 scanned", "2001:db8::1", True),
        ("from ::ffff:192.0.2.7", "192.0.2.7", True),
        ("User J.DOE@Example.com signed in", "j.doe@example.com", True),
        ("1,204 failed logins", "1204", True),
        ("120 failed logins", "12", False),
        ("10.0.0.15 and more", "10.0.0.1", False),
        ("C:\\ProgramData\\SAM copied", "c:\\programdata\\sam", True),
    ],
)
def test_values_are_found_in_any_common_form(text: str, value: str, found: bool) -> None:
    assert contains(normalise(text), value) is found


ALERT = {"title": "Sign-in from a new country", "user": "alice@corp.example", "ip": "198.51.100.9"}
ROWS = (  # what the tool calls of the attempt returned (as ``Attempt.evidence`` keeps them)
    '{"sql": "SELECT ..."}\n{"rows": [["2026-03-03 10:00:00", "alice@corp.example", '
    '"185.220.101.42", "FAILURE"], ["2026-03-03 10:01:00", "alice@corp.example", '
    '"185.220.101.42", "SUCCESS"]]}'
)
DNS = '{"sql": "SELECT ..."}\n{"rows": [["WS-FIN-042", "evil-cdn.example", "A"]]}'
EVIDENCE = {"s1#1": ROWS, "s2#1": DNS}


def scenario(folder: Path, gates: Limits | None = None, **truth: Any) -> Scenario:
    base: dict[str, Any] = {
        "verdicts": ["true_positive"],
        "severity": ("high", "critical"),
        "rationale": "the spray's source signed in",
    }
    (folder / "alert.json").write_text(json.dumps(ALERT))
    return Scenario(
        id="s1",
        title="t",
        category="identity",
        provenance={"origin": "test (invented)", "licence": "-"},
        genuine=False,
        truth=Truth(**{**base, **truth}),
        gates=gates or Limits(),
        folder=folder,
    )


def finding(text: str, *refs: str) -> dict[str, Any]:
    return {"finding": text, "evidence": text, "evidence_refs": list(refs)}


def attempt(evidence: dict[str, str] | None = None, **conclusion: Any) -> Attempt:
    base = {
        "verdict": "true_positive",
        "severity": "high",
        "summary": "",
        "key_findings": [finding("185.220.101.42 signed in as alice after failures", "s1#1")],
    }
    return Attempt(
        scenario="s1",
        status="concluded",
        conclusion={**base, **conclusion},
        evidence=EVIDENCE if evidence is None else evidence,
        review_findings=4,
        review_verified=3,
        cost_usd=0.01,
        latency_s=2.0,
    )


RIGHT = {
    "must_establish": [{"value": "185.220.101.42", "table": "okta"}],
    "techniques": ["T1110.003"],
    "forbidden": [{"verdict": "benign"}, {"compromised": "bob@corp.example"}],
}
SPRAY = [{"id": "T1110.003"}]


def test_a_right_answer_passes_every_gate(tmp_path: Path) -> None:
    result = score(scenario(tmp_path, **RIGHT), attempt(techniques=SPRAY))
    assert result.passed and result.recall == 1.0 and result.verified_share == 0.75
    assert result.techniques_claimed == ["T1110.003"] and result.technique_precision == 1.0
    assert all(g is True for g in result.gates.model_dump().values())


def test_a_parroting_answer_fails(tmp_path: Path) -> None:
    """Every value of every tool result pasted into findings citing them, with eight
    parent technique ids: recall and verification hold, length and precision do not."""
    rows = [[f"2026-03-03 10:{m:02d}:00", f"u{m}@corp.example", f"10.1.0.{m}"] for m in range(60)]
    big = {**EVIDENCE, "s3#1": json.dumps({"rows": rows})}
    values = sorted(set(re.findall(r'"([^"]+)"', "".join(big.values()))))
    refs = ["s1#1", "s2#1", "s3#1"]
    pasted = [finding(", ".join(values[i : i + 4]), *refs) for i in range(0, len(values), 4)]
    parents = ["T1110", "T1078", "T1059", "T1021", "T1003", "T1071", "T1486", "T1566"]
    a = attempt(big, key_findings=pasted, techniques=[{"id": t} for t in parents])
    result = score(scenario(tmp_path, **RIGHT), a)
    assert result.gates.recall is True and result.gates.verified is True  # cited, all there
    assert result.gates.length is False and result.gates.technique is False  # but no more
    assert result.technique_precision == 0.0 and not result.passed  # T1110 is not T1110.003


@pytest.mark.parametrize(
    ("claimed", "held", "share"),
    [
        (["T1110.003"], True, 1.0),
        (["T1110.003", "T1078"], True, 0.5),  # one extra: at the bar
        (["T1110.003", "T1078", "T1059"], False, 1 / 3),  # extras cost
        (["T1110"], False, 0.0),  # a parent does not match the sub-technique the truth names
        (["T1110.003", "T1110.003"], True, 1.0),  # counted once
        (["T1110.003", "T1078.004"], True, 0.5),  # a sub-technique of another parent: extra
    ],
)
def test_extra_techniques_cost_precision(
    tmp_path: Path, claimed: list[str], held: bool, share: float
) -> None:
    result = score(scenario(tmp_path, **RIGHT), attempt(techniques=[{"id": t} for t in claimed]))
    assert result.gates.technique is held and result.technique_precision == pytest.approx(share)


def test_a_listed_parent_matches_its_sub_techniques_and_accepted_ids_count(tmp_path: Path) -> None:
    s = scenario(tmp_path, techniques=["T1110"], techniques_accept=["T1078.004"])
    both = [{"id": "T1110.004"}, {"id": "T1078.004"}]
    assert score(s, attempt(techniques=both)).gates.technique is True
    other = [{"id": "T1078.004"}, {"id": "T1021.001"}]
    assert score(s, attempt(techniques=other)).technique_precision == 0.5
    benign = scenario(tmp_path, verdicts=["benign"], severity=("info", "low"))
    quiet = attempt(verdict="benign", severity="info")
    assert score(benign, quiet).gates.technique is None
    extra = attempt(verdict="benign", severity="info", techniques=[{"id": "T1078"}])
    assert score(benign, extra).gates.technique is False  # any technique on a non-attack


@pytest.mark.parametrize(
    "summary",
    [
        "This is not a false positive and not benign; no account was compromised.",
        "Benign? No: attacker activity, bob@corp.example was targeted but not compromised.",
    ],
)
def test_a_negated_forbidden_phrase_passes(tmp_path: Path, summary: str) -> None:
    claims = [{"verdict": "benign"}, {"verdict": "false_positive"}, {"compromised": "bob@corp"}]
    s = scenario(tmp_path, **{**RIGHT, "forbidden": claims})
    result = score(s, attempt(summary=summary, techniques=SPRAY))
    assert result.passed and result.forbidden_made == []


@pytest.mark.parametrize(
    ("claim", "conclusion", "made"),
    [
        ({"compromised": "bob@corp.example"}, {"compromised": ["BOB@corp.example (laptop)"]},
         ["compromised=bob@corp.example"]),
        ({"compromised": "bob"}, {"compromised": ["bobby@corp.example"]}, []),
        ({"verdict": "true_positive", "severity": "critical"}, {"severity": "critical"},
         ["verdict=true_positive, severity=critical"]),
        ({"verdict": "true_positive", "severity": "critical"}, {"severity": "high"}, []),
        ({"technique": "T1486"}, {"techniques": [{"id": "T1486"}]}, ["technique=T1486"]),
    ],
)  # fmt: skip
def test_structured_forbidden_claims(
    tmp_path: Path, claim: dict[str, Any], conclusion: dict[str, Any], made: list[str]
) -> None:
    s = scenario(tmp_path, severity=("high", "critical"), forbidden=[claim])
    result = score(s, attempt(**conclusion))
    assert result.forbidden_made == made and result.gates.forbidden is (not made)


@pytest.mark.parametrize(
    ("truth", "conclusion", "failed"),
    [
        ({}, {"verdict": "false_positive"}, "verdict"),
        ({}, {"severity": "low"}, "severity"),
        (RIGHT, {"key_findings": [finding("185.220.101.42 signed in", "s2#1")]}, "recall"),
        (RIGHT, {"key_findings": [finding("185.220.101.42 signed in", "alert")]}, "recall"),
        (RIGHT, {"summary": "185.220.101.42", "key_findings": [finding("alice", "s1#1")]},
         "recall"),  # the summary establishes nothing
        (RIGHT, {"key_findings": [finding("failures", "s1#1")]}, "recall"),
        ({"techniques": ["T1110.003"]}, {}, "technique"),  # none claimed
        ({"techniques": ["T1110.003"]}, {"techniques": [{"id": "T1110.001"}]}, "technique"),
        ({}, {"summary": "x" * 5000}, "length"),
    ],
)  # fmt: skip
def test_each_gate_fails_alone(
    tmp_path: Path, truth: dict[str, Any], conclusion: dict[str, Any], failed: str
) -> None:
    conclusion = {**({"techniques": SPRAY} if truth is RIGHT else {}), **conclusion}
    result = score(scenario(tmp_path, **truth), attempt(**conclusion))
    gates = result.gates.model_dump()
    assert gates.pop(failed) is False, failed
    assert all(g is not False for g in gates.values()) and not result.passed, gates


def test_the_verified_share_is_gated(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    low = attempt().model_copy(update={"review_findings": 4, "review_verified": 1})
    assert score(s, low).gates.verified is False
    assert score(scenario(tmp_path, min_verified=0.25), low).gates.verified is True
    assert score(scenario(tmp_path, gates=Limits(min_verified=0)), low).gates.verified is None


def test_without_a_review_the_code_check_gives_the_verified_share(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    cited = finding("185.220.101.42 signed in", "s1#1")
    invented = finding("203.0.113.77 signed in", "s1#1")
    unreviewed = {"review_findings": None, "review_verified": None}
    full = _conclusion(key_findings=[cited, invented])
    a = attempt().model_copy(update={**unreviewed, "conclusion": full})
    assert score(s, a).verified_share == 0.5
    none = attempt().model_copy(update={**unreviewed, "conclusion": _conclusion(key_findings=[])})
    assert score(s, none).verified_share is None and score(s, none).gates.verified is False


def _conclusion(**changes: Any) -> dict[str, Any]:
    base = {
        "verdict": "true_positive",
        "severity": "high",
        "confidence": "medium",
        "summary": "s",
        "key_findings": [],
        "uncertainties": [],
        "recommendations": [],
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("verdict", "compromised", "right"),
    [
        ("true_positive", [], True),
        ("true_positive", ["alice@corp.example"], False),
        ("inconclusive", [], True),
        ("benign", [], False),
    ],
)
def test_true_positive_without_impact(
    tmp_path: Path, verdict: str, compromised: list[str], right: bool
) -> None:
    s = scenario(tmp_path, verdicts=["true_positive_no_impact", "inconclusive"])
    result = score(s, attempt(verdict=verdict, compromised=compromised))
    assert result.gates.verdict is right and result.attack is True


@pytest.mark.parametrize(
    "where",
    [
        {"summary": "185.220.101.42"},
        {"key_findings": [{"finding": "185.220.101.42 seen", "evidence": "rows"}]},
        {"key_findings": [{"finding": "seen", "evidence": "185.220.101.42"}, "not a finding"]},
    ],
)
def test_the_old_format_takes_values_anywhere(tmp_path: Path, where: dict[str, Any]) -> None:
    s = scenario(tmp_path, gates=LEGACY_LIMITS, **RIGHT)
    base = {"summary": "", "key_findings": [finding("seen", "s1#1")], "techniques": SPRAY}
    assert score(s, attempt(**{**base, **where})).passed
    assert not score(s, attempt(**base)).passed


def test_old_truths_read_as_new_ones() -> None:
    old = {"verdict": "benign", "accept": ["false_positive"], "severity": ["info", "low"],
           "forbidden": [" False Positive", "TRUE_POSITIVE", "lsass", "not benign"]}  # fmt: skip
    new = Truth.model_validate(from_legacy(old))
    assert new.verdicts == ["benign", "false_positive"]
    assert [c.verdict for c in new.forbidden] == ["false_positive", "true_positive"]
    assert from_legacy({"severity": ["low", "low"]})["verdicts"] == []  # refused by Truth


def test_a_value_counts_from_the_finding_or_its_evidence(tmp_path: Path) -> None:
    s = scenario(tmp_path, **RIGHT)
    in_text = {"finding": "185.220.101.42 signed in", "evidence": "rows", "evidence_refs": ["s1#1"]}
    in_evidence = {**in_text, "finding": "signed in", "evidence": "185.220.101.42"}
    for item in (in_text, in_evidence):
        assert score(s, attempt(key_findings=[item], techniques=SPRAY)).gates.recall is True
    loose = {**in_text, "evidence_refs": "s"}  # not a list: cites nothing
    scored = score(s, attempt({"s": ROWS}, key_findings=[loose], techniques=SPRAY))
    assert scored.gates.recall is False


def test_failed_run_fails_every_verdict_gate(tmp_path: Path) -> None:
    result = score(scenario(tmp_path, **RIGHT), Attempt(scenario="s1", status="failed", error="x"))
    assert not result.passed and result.given_verdict is None and result.gates.severity is False
    assert result.gates.technique is False and result.gates.length is False


def test_techniques_match_a_listed_parent_or_the_id_itself() -> None:
    assert technique_match(["T1110"], ["T1110.003"]) and technique_match(
        ["T1110.003"], ["T1110.003"]
    )
    assert not technique_match(["T1110.003"], ["T1110"])
    assert not technique_match(["T1110.003"], ["T1110.001"])
    assert claimed_techniques({"verdict": "benign"}) == []


def test_summary_with_repeats_gives_pass_hat_k_and_intervals(tmp_path: Path) -> None:
    s = scenario(tmp_path)
    right, wrong = attempt(), attempt(verdict="benign")
    scores = []
    for sid, outcomes in (("a", [right, right]), ("b", [right, wrong]), ("c", [wrong, wrong])):
        for k, a in enumerate(outcomes):
            scored = score(s, a.model_copy(update={"repeat": k}))
            scores.append(scored.model_copy(update={"id": sid}))
    result = summary(scores)
    assert result["scenarios"] == 3 and result["repeats"] == 2
    assert result["verdict_accuracy"] == 0.5 and result["pass_hat_k"] == round(1 / 3, 4)
    low, high = result["intervals"]["verdict_accuracy"]
    assert 0 <= low <= 0.5 <= high <= 1
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5


def test_the_score_carries_what_was_answered(tmp_path: Path) -> None:
    s = scenario(tmp_path, must_establish=["185.220.101.42", "u9@corp.example"], min_recall=0.5)
    a = attempt(severity="critical", techniques=[]).model_copy(
        update={"investigation_id": "inv-1", "judge_score": 0.7, "judge_cost_usd": 0.02,
                "error": "note"}
    )  # fmt: skip
    result = score(s, a)
    assert (result.given_verdict, result.given_severity) == ("true_positive", "critical")
    assert result.gates.severity is True and result.recall == 0.5 and result.gates.recall is True
    assert result.missing == ["u9@corp.example"] and result.accepted_verdicts == ["true_positive"]
    assert result.answer_chars == 2 * len("185.220.101.42 signed in as alice after failures")
    assert (result.investigation_id, result.judge_score, result.error) == ("inv-1", 0.7, "note")
    assert result.judge_cost_usd == 0.02


@pytest.mark.parametrize(("severity", "held"), [("urgent", False), ("low", False), (None, False)])
def test_a_severity_outside_the_known_ones_fails(
    tmp_path: Path, severity: str | None, held: bool
) -> None:
    assert score(scenario(tmp_path), attempt(severity=severity)).gates.severity is held


def test_the_length_cap_is_inclusive(tmp_path: Path) -> None:
    s = scenario(tmp_path, max_answer_chars=300)
    text = "185.220.101.42 signed in as alice after failures"
    fill = "x" * (300 - 2 * len(text))
    assert score(s, attempt(summary=fill)).gates.length is True
    assert score(s, attempt(summary=fill + "x")).gates.length is False


def test_compromised_entities_are_text_items_only(tmp_path: Path) -> None:
    s = scenario(tmp_path, verdicts=["true_positive_no_impact"])
    assert score(s, attempt(compromised=[5, " ", None])).gates.verdict is True
    assert score(s, attempt(compromised=[5, "bob"])).gates.verdict is False
    assert score(s, attempt(compromised="bob")).gates.verdict is True  # not a list: none


def test_a_review_count_without_verified_findings_is_zero(tmp_path: Path) -> None:
    a = attempt().model_copy(update={"review_findings": 4, "review_verified": None})
    assert score(scenario(tmp_path, min_verified=0.1), a).verified_share == 0.0


@pytest.mark.parametrize(
    ("items", "ids"),
    [
        ([{"id": " t1110.003 "}, "T1110.003", {"id": "T1078"}], ["T1110.003", "T1078"]),
        ([{"id": ""}, {"id": 7}, {"name": "x"}, "  "], []),
    ],
)
def test_claimed_techniques_are_distinct_upper_case_ids(items: list[Any], ids: list[str]) -> None:
    assert claimed_techniques({"techniques": items}) == ids


def test_accepted_techniques_on_a_non_attack_hold(tmp_path: Path) -> None:
    s = scenario(
        tmp_path, verdicts=["benign"], severity=("info", "low"), techniques_accept=["T1046"]
    )
    result = score(s, attempt(verdict="benign", severity="low", techniques=[{"id": "T1046"}]))
    assert result.gates.technique is True and result.technique_precision == 1.0


def test_answer_length_counts_what_is_written(tmp_path: Path) -> None:
    a = attempt(key_findings=[{"finding": "ab"}, {"evidence": "cd"}], summary="e")
    assert score(scenario(tmp_path), a).answer_chars == 5


def test_a_value_at_the_end_of_one_cited_result_counts(tmp_path: Path) -> None:
    calls = {"a#1": "ip 185.220.101.42", "b#1": "x"}
    item = {"finding": "185.220.101.42", "evidence": "", "evidence_refs": ["a#1", "b#1"]}
    result = score(scenario(tmp_path, **RIGHT), attempt(calls, key_findings=[item]))
    assert result.recall == 1.0


@pytest.mark.parametrize(
    "value", ["HKLM\\SAM", 'C:\\Windows\\System32\\reg.exe save "hklm\\sam"', "a/b"]
)
def test_a_value_with_escapes_in_a_json_result_counts_as_written(
    tmp_path: Path, value: str
) -> None:
    """The result is JSON (backslashes, quotes and slashes escaped); a finding writes
    the value once, as the analyst reads it."""
    calls = {"s1#1": json.dumps({"rows": [[value]]}).replace("/", "\\/")}  # as JSON may
    truth = {**RIGHT, "must_establish": [{"value": value, "table": "sysmon"}]}
    item = finding(f"{value} ran", "s1#1")
    assert score(scenario(tmp_path, **truth), attempt(calls, key_findings=[item])).recall == 1.0
    elsewhere = finding(f"{value} ran", "s1#2")  # the value, citing a call without it
    wrong = {**calls, "s1#2": json.dumps({"rows": [["other"]]})}
    assert score(scenario(tmp_path, **truth), attempt(wrong, key_findings=[elsewhere])).recall == 0


def test_the_code_check_trusts_the_alert(tmp_path: Path) -> None:
    item = finding("198.51.100.9 signed in", "s1#1")  # the alert's address, not in s1#1
    a = attempt().model_copy(
        update={"review_findings": None, "conclusion": _conclusion(key_findings=[item])}
    )
    assert score(scenario(tmp_path), a).verified_share == 1.0

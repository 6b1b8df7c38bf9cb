"""A seeded set of 200 cases whose right answers are known in advance (invented for the
tests), in blocks; each block's comment says what it stands for."""

from __future__ import annotations

from random import Random

from core.quality import Outcome

WITH = {"bullets": True, "tokens": 800, "seconds": 20.0, "cost_usd": 0.008}
WITHOUT = {"bullets": False, "tokens": 1200, "seconds": 40.0, "cost_usd": 0.012}
GD = {"source": "guardduty", "format": "guardduty", "model": "flash"}
OKTA = {"source": "okta", "format": "okta", "model": "flash"}
AUTO = {**GD, "rule": "auto-fp", "auto_resolved": True, "severity": "low", "week": "2026-W46"}

# (count, fields)
BLOCKS: list[tuple[str, int, dict[str, object]]] = [
    # A: real alerts socbot caught
    (
        "A",
        50,
        {
            "verdict": "true_positive",
            "disposition": "true_positive",
            **GD,
            "severity": "high",
            "week": "2026-W45",
            **WITH,
        },
    ),
    # B: real alerts socbot called false positives (a rule sent them to another model)
    (
        "B",
        10,
        {
            "verdict": "false_positive",
            "disposition": "true_positive",
            **OKTA,
            "model": "pro",
            "rule": "r-okta",
            "severity": "high",
            "week": "2026-W46",
            **WITHOUT,
        },
    ),
    # C: real alerts socbot could not decide
    (
        "C",
        5,
        {
            "verdict": "inconclusive",
            "disposition": "true_positive",
            **OKTA,
            "model": "pro",
            "severity": "high",
            "week": "2026-W46",
            **WITHOUT,
        },
    ),
    # D: false positives socbot rejected
    (
        "D",
        60,
        {
            "verdict": "false_positive",
            "disposition": "false_positive",
            **OKTA,
            "severity": "low",
            "week": "2026-W45",
            **WITH,
        },
    ),
    # E: benign alerts socbot called benign
    (
        "E",
        20,
        {
            "verdict": "benign",
            "disposition": "benign",
            **GD,
            "severity": "low",
            "week": "2026-W46",
            **WITHOUT,
        },
    ),
    # F: benign alerts socbot raised as real
    (
        "F",
        15,
        {
            "verdict": "true_positive",
            "disposition": "benign",
            **GD,
            "severity": "high",
            "week": "2026-W46",
            **WITH,
        },
    ),
    # G: duplicates: say nothing about the alert
    (
        "G",
        10,
        {
            "verdict": "false_positive",
            "disposition": "duplicate",
            **OKTA,
            "severity": "low",
            "week": "2026-W45",
            **WITHOUT,
        },
    ),
    # H: still open
    (
        "H",
        10,
        {
            "verdict": "benign",
            "disposition": None,
            **GD,
            "severity": "low",
            "week": "2026-W46",
            **WITHOUT,
        },
    ),
    # I: auto-resolved, audited, the auditor agreed
    (
        "I",
        12,
        {
            "verdict": "benign",
            "disposition": "benign",
            **AUTO,
            "week": "2026-W45",
            "audited": True,
            "audit_disposition": "benign",
            **WITHOUT,
        },
    ),
    # J: auto-resolved, audited: real alerts socbot closed (the errors)
    (
        "J",
        3,
        {
            "verdict": "false_positive",
            "disposition": "false_positive",
            **AUTO,
            "severity": "high",
            "audited": True,
            "audit_disposition": "true_positive",
            **WITHOUT,
        },
    ),
    # K: auto-resolved, not drawn for audit
    ("K", 5, {"verdict": "false_positive", "disposition": "false_positive", **AUTO, **WITHOUT}),
]


def seeded(holdout: frozenset[str] = frozenset(), seed: int = 32) -> list[Outcome]:
    """The 200 cases, one ``Outcome`` each, in a shuffled order; blocks named in
    ``holdout`` ran without the playbook."""
    cases = [
        Outcome(**fields, holdout=name in holdout, case_id=i * 1000 + k)  # type: ignore[arg-type]
        for i, (name, count, fields) in enumerate(BLOCKS)
        for k in range(count)
    ]
    Random(seed).shuffle(cases)
    return cases


def grouped(holdout: frozenset[str] = frozenset()) -> list[Outcome]:
    """The same 200 cases as one ``Outcome`` per block (``count``, summed costs), as the
    store's SQL groups them."""
    out = []
    for name, count, fields in BLOCKS:
        f = dict(fields)
        for key in ("tokens", "seconds", "cost_usd"):
            f[key] = f[key] * count  # type: ignore[operator]
        out.append(Outcome(**f, holdout=name in holdout, count=count))  # type: ignore[arg-type]
    return out

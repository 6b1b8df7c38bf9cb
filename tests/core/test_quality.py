"""Agreement figures over 200 seeded cases whose right answers are known (tests/core/
quality_seed.py): every figure equals what the seed implies, intervals computed here
from the score test's quadratic, not by ``core.quality.wilson``."""

from __future__ import annotations

import math
from random import Random
from statistics import NormalDist

import pytest

from core.quality import (
    DIMENSIONS,
    Outcome,
    Rate,
    agrees,
    audits,
    breakdown,
    by,
    confusion,
    disagreements,
    drawn,
    tally,
)
from tests.core.quality_seed import BLOCKS, grouped, seeded

Z = NormalDist().inv_cdf(0.975)


def score_bounds(k: int, n: int) -> tuple[float, float]:
    """The p whose score test just accepts k of n: roots of (k/n - p)² = z² p(1 - p) / n."""
    a = n + Z * Z
    b = -(2 * k + Z * Z)
    c = k * k / n
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def expect(rate: Rate, k: int, n: int) -> None:
    assert (rate.hits, rate.n) == (k, n)
    assert rate.rate == pytest.approx(k / n)
    low, high = score_bounds(k, n)
    assert rate.interval == pytest.approx((low, high), abs=1e-12)
    shown = rate.as_dict()
    assert (shown["low"], shown["high"]) == (round(low, 4), round(high, 4))


@pytest.mark.parametrize("cases", [seeded(), grouped()], ids=["one-per-case", "grouped"])
def test_the_overall_figures_are_the_seeds(cases: list[Outcome]) -> None:
    total = tally(cases)
    assert (total.cases, total.decided, total.excluded) == (200, 175, 10)
    expect(total.agreement, 142, 175)  # A 50 + D 60 + E 20 + I 12
    expect(total.recall, 50, 68)  # positives: A 50, B 10, C 5, J 3 (audited)
    expect(total.rejection, 92, 107)  # negatives: D 60, E 20, F 15, I 12


@pytest.mark.parametrize(
    ("dimension", "expected"),
    [
        # value: (cases, decided, agreed, positives, recalled, negatives, rejected, excluded)
        (
            "source",
            {
                "guardduty": (115, 100, 82, 53, 50, 47, 32, 0),
                "okta": (85, 75, 60, 15, 0, 60, 60, 10),
            },
        ),
        (
            "format",
            {
                "guardduty": (115, 100, 82, 53, 50, 47, 32, 0),
                "okta": (85, 75, 60, 15, 0, 60, 60, 10),
            },
        ),
        (
            "model",
            {"flash": (185, 160, 142, 53, 50, 107, 92, 10), "pro": (15, 15, 0, 15, 0, 0, 0, 0)},
        ),
        (
            "rule",
            {
                "auto-fp": (20, 15, 12, 3, 0, 12, 12, 0),
                "none": (170, 150, 130, 55, 50, 95, 80, 10),
                "r-okta": (10, 10, 0, 10, 0, 0, 0, 0),
            },
        ),
        (
            "severity",
            {"high": (83, 83, 50, 68, 50, 15, 0, 0), "low": (117, 92, 92, 0, 0, 92, 92, 10)},
        ),
        (
            "week",
            {
                "2026-W45": (132, 122, 122, 50, 50, 72, 72, 10),
                "2026-W46": (68, 53, 20, 18, 0, 35, 20, 0),
            },
        ),
    ],
)
def test_every_breakdown_is_the_seeds(dimension: str, expected: dict[str, tuple[int, ...]]) -> None:
    for cases in (seeded(), grouped()):
        groups = breakdown(cases, by(dimension))
        assert list(groups) == sorted(expected)
        for value, (n, decided, agreed, pos, rec, neg, rej, excl) in expected.items():
            t = groups[value]
            assert (t.cases, t.decided, t.excluded) == (n, decided, excl)
            for rate, k, m in (
                (t.agreement, agreed, decided),
                (t.recall, rec, pos),
                (t.rejection, rej, neg),
            ):
                if m:
                    expect(rate, k, m)
                else:
                    assert (rate.rate, rate.interval) == (None, None)


def test_every_dimension_is_covered_and_no_other() -> None:
    assert set(DIMENSIONS) == {"source", "format", "model", "rule", "severity", "week"}
    with pytest.raises(ValueError, match="'owner'"):
        by("owner")


def test_the_confusion_matrix_is_the_seeds() -> None:
    expected = {
        "true_positive": {"true_positive": 50, "benign": 15},
        "false_positive": {"true_positive": 13, "false_positive": 60, "duplicate": 10},
        "inconclusive": {"true_positive": 5},
        "benign": {"benign": 32},
    }
    for cases in (seeded(), grouped()):
        matrix = confusion(cases)
        assert matrix.as_dict() == expected
        assert sum(matrix.cells.values()) == 185  # the undecided 10 and unaudited 5 are out


def test_the_disagreements_are_exactly_the_misses() -> None:
    found = disagreements(seeded())
    blocks = {case.case_id // 1000 for case in found if case.case_id is not None}
    names = [name for name, _, _ in BLOCKS]
    assert sorted(names[b] for b in blocks) == ["B", "C", "F", "J"]
    assert len(found) == 33 and all(agrees(c) is False for c in found)


def test_auto_resolution_counts_only_through_its_audit() -> None:
    rules = audits(seeded())
    assert list(rules) == ["auto-fp"]
    audit = rules["auto-fp"]
    assert (audit.auto_resolved, audit.audited) == (20, 15)
    expect(audit.error, 3, 15)  # J: real alerts the rule closed
    unaudited = [c for c in seeded() if c.auto_resolved and not c.audited]
    assert len(unaudited) == 5 and all(c.truth is None and agrees(c) is None for c in unaudited)


def test_an_empty_period_has_no_rates() -> None:
    total = tally([])
    assert total.agreement.as_dict() == {"hits": 0, "n": 0, "rate": None, "low": None, "high": None}
    assert audits([]) == {} and confusion([]).as_dict() == {}


def test_the_interval_reaches_the_edges_without_leaving_them() -> None:
    assert Rate(0, 10).interval == pytest.approx(score_bounds(0, 10))
    assert Rate(10, 10).interval == pytest.approx(score_bounds(10, 10))
    low, high = Rate(0, 10).interval or (1.0, 0.0)
    assert low == 0.0 and 0.27 < high < 0.28


@pytest.mark.parametrize("share", [0.0, 0.1, 0.5, 1.0])
def test_a_draw_takes_its_share_over_many_draws(share: float) -> None:
    rng = Random(7)
    n = 40_000
    taken = sum(drawn(share, rng) for _ in range(n))
    sd = math.sqrt(n * share * (1 - share))
    assert abs(taken - n * share) <= 4.5 * sd  # 0 and n exactly at the ends


def test_an_audit_sample_estimates_each_rules_error_without_bias() -> None:
    """Two rules with their own share and their own true error rate; over 400 audit
    rounds the sampled error rate averages to the truth and the interval covers it about
    95 % of the time."""
    population = {"rule-a": (2000, 0.05, 0.10), "rule-b": (1000, 0.30, 0.25)}
    truth_rng = Random(1)
    errors = {r: [truth_rng.random() < p for _ in range(n)] for r, (n, p, _) in population.items()}
    rng = Random(2)
    for rule, (n, _, share) in population.items():
        true_rate = sum(errors[rule]) / n
        estimates, covered = [], 0
        for _ in range(400):
            sample = [e for e in errors[rule] if drawn(share, rng)]
            rate = Rate(sum(sample), len(sample))
            estimates.append(rate.rate)
            low, high = rate.interval or (1.0, 0.0)
            covered += low <= true_rate <= high
            assert abs(len(sample) - n * share) <= 5 * math.sqrt(n * share * (1 - share))
        mean = sum(e for e in estimates if e is not None) / len(estimates)
        assert mean == pytest.approx(true_rate, abs=0.01)
        assert 0.90 <= covered / 400 <= 0.99


@pytest.mark.parametrize("share", [-0.01, 1.01, math.nan])
def test_a_share_outside_the_unit_interval_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        drawn(share, Random(0))


def test_an_audit_answered_duplicate_counts_neither_way() -> None:
    auto = {"verdict": "benign", "disposition": None, "rule": "r", "auto_resolved": True}
    found = [
        Outcome(**auto, audited=True, audit_disposition="duplicate", count=3),  # type: ignore[arg-type]
        Outcome(**auto, audited=True, audit_disposition="true_positive"),  # type: ignore[arg-type]
        Outcome(**auto, audited=True, audit_disposition="benign", count=2),  # type: ignore[arg-type]
        Outcome(**auto, audited=True, audit_disposition=None),  # type: ignore[arg-type]
    ]
    audit = audits(found)["r"]
    assert (audit.auto_resolved, audit.audited, audit.errors) == (7, 3, 1)
    assert tally(found).excluded == 3 and tally(found).decided == 3

"""A run's figures from its scored attempts, each equal to what the attempts imply (counted
by hand below): rates, percentiles, sums, the k-repeat figures, per category, baselines and
the bootstrap's intervals."""

from __future__ import annotations

from typing import Any

import pytest

from evals import aggregate
from evals.aggregate import baseline, bootstrap, by_scenario, percentile, rate, summary
from store.eval_reports import Gates, Score


def scored(sid: str, repeat: int, **fields: Any) -> Score:
    gates = Gates(
        verdict=fields.pop("verdict_ok", True),
        severity=fields.pop("severity_ok", None),
        recall=None,
        technique=None,
        forbidden=True,
    )
    base: dict[str, Any] = {
        "id": sid,
        "repeat": repeat,
        "category": "web",
        "expected_verdict": "benign",
        "given_verdict": "benign",
        "given_severity": None,
        "gates": gates,
        "passed": True,
        "recall": None,
        "missing": [],
        "techniques_claimed": [],
        "forbidden_made": [],
        "verified_share": None,
        "status": "concluded",
        "error": None,
        "cost_usd": 0.0,
        "latency_s": 1.0,
        "calls": 1,
        "tokens": 10,
        "investigation_id": None,
    }
    return Score(**{**base, **fields})


def six() -> list[Score]:
    """Three scenarios, two attempts each (what each figure below is counted from)."""
    return [
        scored("a", 0, category="cred", attack=True, given_verdict="true_positive",
               severity_ok=True, cost_usd=0.01, latency_s=1.0, calls=3, tokens=100,
               judge_score=0.8, judge_cost_usd=0.001, unpriced_calls=1),
        scored("a", 1, category="cred", attack=True, given_verdict="true_positive",
               severity_ok=False, passed=False, cost_usd=0.02, latency_s=3.0, calls=4,
               tokens=200, status="failed", judge_score=0.4, judge_cost_usd=0.002),
        scored("b", 0, given_verdict="benign", cost_usd=0.03, latency_s=2.0, calls=2,
               tokens=50, status="answered"),
        scored("b", 1, given_verdict="false_positive", latency_s=4.0, status="cancelled"),
        scored("c", 0, given_verdict="true_positive", verdict_ok=False, severity_ok=True,
               passed=False, latency_s=5.0, unpriced_calls=2),
        scored("c", 1, given_verdict="inconclusive", verdict_ok=False, passed=False,
               latency_s=6.0),
    ]  # fmt: skip


def test_every_figure_of_a_run() -> None:
    out = summary(six())
    intervals = out.pop("intervals")
    per_category = out.pop("per_category")
    assert out == {
        "scenarios": 3,
        "attempts": 6,
        "repeats": 2,
        "verdict_accuracy": 0.6667,  # 4 of 6
        "tp_recall": 1.0,  # a's two attempts called true_positive
        "fp_rejection": 0.5,  # benign, false_positive; not true_positive, inconclusive
        "pass_rate": 0.5,
        "severity_accuracy": 0.3333,  # True twice; False and None do not count as right
        "cost_usd": 0.06,
        "unpriced_calls": 3,
        "cost_per_scenario_usd": 0.01,  # per attempt
        "latency_p50_s": 3.5,
        "latency_p95_s": 5.75,
        "model_calls": 12,
        "tokens": 380,
        "failed_runs": 2,  # failed, cancelled (answered and concluded are not)
        "judge_cost_usd": 0.003,
        "judge_score": 0.6,
        "pass_hat_k": 0.3333,  # b only
        "verdict_hat_k": 0.6667,  # a and b
    }
    assert per_category == {
        "cred": {
            "scenarios": 1,
            "verdict_accuracy": 1.0,
            "tp_recall": 1.0,
            "fp_rejection": None,
            "pass_rate": 0.5,
            "severity_accuracy": 0.5,
        },
        "web": {
            "scenarios": 2,
            "verdict_accuracy": 0.5,
            "tp_recall": None,
            "fp_rejection": 0.5,
            "pass_rate": 0.5,
            "severity_accuracy": 0.25,
        },
    }
    assert list(per_category) == ["cred", "web"]
    assert set(intervals) == {"verdict_accuracy", "pass_rate"}
    for name, (low, high) in intervals.items():
        assert 0 <= low <= out[name] <= high <= 1


def test_one_attempt_each_has_no_k_figures_and_nothing_has_no_rates() -> None:
    once = summary([s for s in six() if s.repeat == 0])
    assert once["repeats"] == 1 and "pass_hat_k" not in once and "verdict_hat_k" not in once
    assert once["verdict_accuracy"] == 0.6667 and once["pass_rate"] == 0.6667
    empty = summary([])
    assert empty["scenarios"] == 0 and empty["repeats"] == 0 and empty["attempts"] == 0
    assert empty["verdict_accuracy"] is None and empty["cost_per_scenario_usd"] is None
    assert empty["latency_p50_s"] is None and empty["judge_score"] is None
    assert empty["intervals"] == {"verdict_accuracy": None, "pass_rate": None}
    assert empty["per_category"] == {}


def test_rounding_of_money_and_times() -> None:
    scores = [scored("a", 0, cost_usd=0.1234567, latency_s=1.23456)]
    out = summary(scores)
    assert out["cost_usd"] == 0.123457 and out["cost_per_scenario_usd"] == 0.123457
    assert out["latency_p50_s"] == 1.235 and out["latency_p95_s"] == 1.235


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([4.0, 1.0, 3.0, 2.0], 0.5, 2.5),
        ([1.0, 2.0, 3.0, 4.0], 0.0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 1.0, 4.0),
        ([1.0, 2.0, 3.0, 4.0], 0.25, 1.75),
        ([10.0, 20.0], 0.9, 19.0),
        ([7.0], 0.95, 7.0),
        ([], 0.5, None),
    ],
)
def test_percentile_interpolates_between_ranks(
    values: list[float], q: float, expected: float | None
) -> None:
    assert percentile(values, q) == expected


def test_rate_and_grouping() -> None:
    assert rate([]) is None and rate([True, False, False, True]) == 0.5
    groups = by_scenario(six())
    assert list(groups) == ["a", "b", "c"]
    assert [s.repeat for s in groups["b"]] == [0, 1]


def test_the_bootstrap_resamples_whole_scenarios_2000_times() -> None:
    one, three = [scored("a", 0)], [scored("b", i) for i in range(3)]
    sizes: list[int] = []

    def figure(sample: list[Score]) -> float:
        sizes.append(len(sample))
        return 0.5

    assert bootstrap([one, three], figure) == [0.5, 0.5]
    assert len(sizes) == aggregate.BOOTSTRAP_ROUNDS == 2000
    assert set(sizes) == {2, 4, 6}  # two draws of whole scenarios: 1+1, 1+3, 3+3
    assert bootstrap([one], figure) is None


def test_the_bootstrap_interval_spans_the_resampled_figures() -> None:
    passed, failed = [scored("a", 0)], [scored("b", 0, passed=False)]
    low_high = bootstrap([passed, failed], lambda ss: rate([s.passed for s in ss]))
    assert low_high == [0.0, 1.0]  # resamples give 0, 0.5 or 1
    assert bootstrap([passed, failed], lambda ss: None) is None
    again = bootstrap([passed, failed], lambda ss: rate([s.passed for s in ss]))
    assert again == low_high  # a fixed seed: the same attempts, the same figures


def test_the_interval_is_rounded_and_skips_figures_without_a_value() -> None:
    a, b, c = [scored("a", 0)], [scored("b", 0)], [scored("c", 0)]
    calls = iter(range(10**6))

    def figure(sample: list[Score]) -> float | None:
        n = next(calls)
        return None if n % 2 else 1 / 3

    assert bootstrap([a, b, c], figure) == [0.3333, 0.3333]


def test_a_baseline_carries_its_rates_attempts_and_cost() -> None:
    scores = [s for s in six() if s.id in ("a", "c")]
    assert baseline(scores) == {
        "verdict_accuracy": 0.5,
        "tp_recall": 1.0,
        "fp_rejection": 0.0,
        "pass_rate": 0.25,
        "severity_accuracy": 0.5,
        "attempts": 4,
        "cost_usd": 0.03,
    }


def test_the_bootstrap_is_the_same_for_the_same_attempts() -> None:
    groups = [[scored(f"s{i}", 0, latency_s=1.0 + i * i * 0.37)] for i in range(12)]

    def mean_latency(sample: list[Score]) -> float:
        return sum(s.latency_s for s in sample) / len(sample)

    first = bootstrap(groups, mean_latency)
    assert first is not None and first[0] < first[1]
    assert bootstrap(groups, mean_latency) == first


def test_costs_are_rounded_to_millionths() -> None:
    scores = [scored("a", 0, cost_usd=0.12345678, judge_cost_usd=0.87654321)]
    assert baseline(scores)["cost_usd"] == 0.123457
    assert summary(scores)["judge_cost_usd"] == 0.876543

"""The playbook's effect over the 200 seeded cases: arms, hit rate, agreement with and
without, cost per investigation and corrections per 100 per week, as the seed implies."""

from __future__ import annotations

import pytest

from core.playbook_effect import effect
from core.quality import Outcome
from tests.core.quality_seed import grouped, seeded


@pytest.mark.parametrize("cases", [seeded(), grouped()], ids=["one-per-case", "grouped"])
def test_without_a_holdout_the_comparison_is_observational(cases: list[Outcome]) -> None:
    found = effect(cases)
    assert found.comparison == "observational"
    assert (found.hits.hits, found.hits.n) == (125, 200)  # A, D, F relied on bullets
    assert (found.with_.investigations, found.without.investigations) == (125, 75)
    with_, without = found.with_.tally.agreement, found.without.tally.agreement
    assert (with_.hits, with_.n) == (110, 125)  # A 50 + D 60 of A, D, F
    assert (without.hits, without.n) == (32, 50)  # E 20 + I 12 of B, C, E, I, J
    shown = found.as_dict()
    assert shown["with_playbook"]["tokens_per_investigation"] == 800
    assert shown["without_playbook"]["seconds_per_investigation"] == 40
    assert shown["with_playbook"]["cost_usd_per_investigation"] == pytest.approx(0.008)
    assert shown["estimated_token_savings"] == 400 * 125
    assert shown["estimated_seconds_savings"] == 20 * 125
    assert shown["estimated_cost_savings_usd"] == pytest.approx(0.004 * 125)
    assert shown["corrections_by_week"] == {
        "2026-W45": {
            "investigations": 132,
            "corrections": 0,
            "corrections_per_100": 0.0,
            "with": 0.0,
            "without": 0.0,
        },
        "2026-W46": {
            "investigations": 68,
            "corrections": 33,
            "corrections_per_100": round(100 * 33 / 68, 2),
            "with": 100.0,
            "without": round(100 * 18 / 53, 2),
        },
    }


def test_a_holdout_makes_the_comparison_randomised() -> None:
    held = frozenset({"B", "E", "H"})  # 40 investigations ran without the playbook
    found = effect(seeded(held))
    assert found.comparison == "randomised"
    assert (found.with_.investigations, found.without.investigations) == (160, 40)
    assert (found.hits.hits, found.hits.n) == (125, 160)  # the holdout is not a miss
    assert (found.without.tally.agreed, found.without.tally.decided) == (20, 30)
    assert (found.with_.tally.agreed, found.with_.tally.decided) == (122, 145)


def test_an_empty_arm_has_no_means_and_no_savings() -> None:
    found = effect([c for c in seeded() if c.bullets])
    shown = found.as_dict()
    assert shown["without_playbook"]["tokens_per_investigation"] is None
    assert shown["estimated_token_savings"] is None
    assert effect([]).as_dict()["skill_hit_rate"]["rate"] is None

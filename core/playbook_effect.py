"""The playbook's effect in the field: does what socbot learned help? Pure figures, no I/O.

Two arms of investigations are compared: **with** the playbook and **without** it.
When some investigations of the period ran as a holdout (``learning.holdout_share``: a
random share investigates without the playbook), the arms are the holdout's and the
others' — a **randomised** comparison, whose difference the playbook caused. Otherwise
the arms are the investigations that relied on at least one bullet and those that did
not — an **observational** comparison, confounded by what kind of alert finds a bullet.

Figures: the skill hit rate (investigations outside the holdout that relied on ≥ 1
bullet), agreement with and without (``core.quality``), corrections (decided against
socbot's verdict) per 100 investigations per week, and tokens, seconds and cost per
investigation in each arm, with the estimated savings of the "with" arm.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.quality import Outcome, Rate, Tally, agrees

Comparison = Literal["randomised", "observational"]


@dataclass
class Arm:
    """The investigations of one arm: agreement counts and summed cost."""

    tally: Tally = field(default_factory=Tally)
    tokens: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0

    def add(self, o: Outcome) -> None:
        self.tally.add(o)
        self.tokens += o.tokens
        self.seconds += o.seconds
        self.cost_usd += o.cost_usd

    @property
    def investigations(self) -> int:
        return self.tally.cases

    def mean(self, total: float) -> float | None:
        return total / self.investigations if self.investigations else None

    def as_dict(self) -> dict[str, Any]:
        tokens, seconds, cost = (
            self.mean(self.tokens),
            self.mean(self.seconds),
            self.mean(self.cost_usd),
        )
        return {
            "investigations": self.investigations,
            "agreement": self.tally.agreement.as_dict(),
            "tokens_per_investigation": None if tokens is None else round(tokens, 1),
            "seconds_per_investigation": None if seconds is None else round(seconds, 2),
            "cost_usd_per_investigation": None if cost is None else round(cost, 6),
        }


@dataclass
class Week:
    """One week's investigations and corrections, overall and per arm."""

    investigations: dict[str, int] = field(default_factory=lambda: {"with": 0, "without": 0})
    corrections: dict[str, int] = field(default_factory=lambda: {"with": 0, "without": 0})

    def per_100(self, arm: str | None = None) -> float | None:
        arms = [arm] if arm else ["with", "without"]
        n = sum(self.investigations[a] for a in arms)
        return round(100 * sum(self.corrections[a] for a in arms) / n, 2) if n else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "investigations": sum(self.investigations.values()),
            "corrections": sum(self.corrections.values()),
            "corrections_per_100": self.per_100(),
            "with": self.per_100("with"),
            "without": self.per_100("without"),
        }


@dataclass
class Effect:
    """The playbook's figures over a period."""

    comparison: Comparison
    with_: Arm
    without: Arm
    hits: Rate  # investigations outside the holdout that relied on >= 1 bullet
    weeks: dict[str, Week]

    def savings(self) -> dict[str, float | None]:
        """(mean without - mean with) * investigations with: what the playbook saved."""
        n = self.with_.investigations
        saved: dict[str, float | None] = {}
        for name, digits in (("tokens", 0), ("seconds", 1), ("cost_usd", 6)):
            a = self.with_.mean(getattr(self.with_, name))
            b = self.without.mean(getattr(self.without, name))
            saved[name] = None if a is None or b is None else round((b - a) * n, digits)
        return saved

    def as_dict(self) -> dict[str, Any]:
        saved = self.savings()
        return {
            "comparison": self.comparison,
            "skill_hit_rate": self.hits.as_dict(),
            "with_playbook": self.with_.as_dict(),
            "without_playbook": self.without.as_dict(),
            "estimated_token_savings": saved["tokens"],
            "estimated_seconds_savings": saved["seconds"],
            "estimated_cost_savings_usd": saved["cost_usd"],
            "corrections_by_week": {k: w.as_dict() for k, w in self.weeks.items()},
        }


def effect(outcomes: Iterable[Outcome]) -> Effect:
    """The playbook's effect; randomised when any outcome ran as a holdout."""
    rows = list(outcomes)
    randomised = any(o.holdout for o in rows)
    arms = {"with": Arm(), "without": Arm()}
    weeks: dict[str, Week] = {}
    hits = n = 0
    for o in rows:
        with_ = not o.holdout if randomised else o.bullets
        arm = "with" if with_ else "without"
        arms[arm].add(o)
        if not o.holdout:
            n += o.count
            hits += o.count if o.bullets else 0
        week = weeks.setdefault(o.week, Week())
        week.investigations[arm] += o.count
        week.corrections[arm] += o.count if agrees(o) is False else 0
    return Effect(
        comparison="randomised" if randomised else "observational",
        with_=arms["with"],
        without=arms["without"],
        hits=Rate(hits, n),
        weeks=dict(sorted(weeks.items())),
    )

"""Quality in the field: how often socbot's verdict agrees with the analyst who closed the case.

Pure figures, no I/O: the store (``store.cases``) turns the cases table into ``Outcome``
rows, ``socbot report`` and the web Quality page both read the figures computed here.

Classes. socbot says ``true_positive``, ``false_positive``, ``benign`` or ``inconclusive``;
the analyst resolves as ``true_positive``, ``false_positive``, ``benign`` or ``duplicate``.
``true_positive`` is the positive class, ``false_positive`` and ``benign`` the negative one
(both mean "nothing to do"). A ``duplicate`` says nothing about the alert itself: it is
left out of agreement (counted as ``excluded``). ``inconclusive`` never agrees.

- **agreement**: decided cases whose classes match / decided cases (duplicates excluded);
- **field TP recall**: analyst positives socbot called positive / analyst positives;
- **FP rejection**: analyst negatives socbot called negative / analyst negatives;
each with a Wilson score interval at 95 %.

An auto-resolved case has no analyst's decision: it counts only through the audit (a
blind human review of a random share); its truth is then the auditor's disposition.
Auto-resolution's **error rate** per rule: audited cases the auditor called
``true_positive`` (socbot closed a real alert) / audited cases.

An ``Outcome`` may stand for ``count`` cases alike (the store groups rows in SQL); its
``tokens``, ``seconds`` and ``cost_usd`` are then the group's sums.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from random import Random
from typing import Any

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
POSITIVE = frozenset({"true_positive"})
NEGATIVE = frozenset({"false_positive", "benign"})
EXCLUDED = frozenset({"duplicate"})  # the analyst's only; says nothing about the alert
DIMENSIONS = ("source", "format", "model", "rule", "severity", "week")


@dataclass(frozen=True)
class Outcome:
    """One case (or ``count`` alike) as the figures see it.

    ``disposition`` is the analyst's (None while undecided); for an auto-resolved case the
    store passes the rule's disposition and ``audit_disposition`` the auditor's, if any.
    """

    verdict: str | None
    disposition: str | None
    source: str = "unknown"
    format: str = "unknown"
    model: str = "unknown"
    rule: str = "none"
    severity: str = "unknown"
    week: str = ""  # ISO week, ``2026-W48``
    auto_resolved: bool = False
    audited: bool = False
    audit_disposition: str | None = None
    bullets: bool = False  # relied on at least one playbook bullet
    holdout: bool = False  # ran without the playbook (``learning.holdout_share``)
    tokens: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0
    count: int = 1
    case_id: int | None = None

    @property
    def truth(self) -> str | None:
        """The human's decision the figures compare with: the auditor's for an
        auto-resolved case (None unless audited), else the analyst's."""
        if self.auto_resolved:
            return self.audit_disposition if self.audited else None
        return self.disposition


def klass(label: str | None) -> str | None:
    """``positive``, ``negative`` or None (inconclusive, duplicate, unknown)."""
    if label in POSITIVE:
        return "positive"
    if label in NEGATIVE:
        return "negative"
    return None


def agrees(outcome: Outcome) -> bool | None:
    """Whether socbot's verdict matches the human truth; None when not comparable."""
    truth = outcome.truth
    if truth is None or klass(truth) is None:
        return None
    return klass(outcome.verdict) == klass(truth)


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of ``hits / n``; None for ``n == 0``."""
    if n <= 0:
        return None
    p = hits / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``n``, its share and Wilson 95 % interval (None when ``n == 0``)."""

    hits: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.hits / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.hits, self.n)

    def as_dict(self) -> dict[str, Any]:
        bounds = self.interval
        return {
            "hits": self.hits,
            "n": self.n,
            "rate": _round(self.rate),
            "low": _round(bounds[0]) if bounds else None,
            "high": _round(bounds[1]) if bounds else None,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class Tally:
    """Counts behind the agreement figures of one group of cases."""

    cases: int = 0  # every case of the group, decided or not
    decided: int = 0  # with a human truth in a class (duplicates not)
    agreed: int = 0
    excluded: int = 0  # decided as duplicate
    positives: int = 0
    recalled: int = 0
    negatives: int = 0
    rejected: int = 0

    def add(self, o: Outcome) -> None:
        self.cases += o.count
        truth = klass(o.truth)
        if o.truth is not None and truth is None:
            self.excluded += o.count
        if truth is None:
            return
        said = klass(o.verdict)
        self.decided += o.count
        self.agreed += o.count if said == truth else 0
        if truth == "positive":
            self.positives += o.count
            self.recalled += o.count if said == "positive" else 0
        else:
            self.negatives += o.count
            self.rejected += o.count if said == "negative" else 0

    @property
    def agreement(self) -> Rate:
        return Rate(self.agreed, self.decided)

    @property
    def recall(self) -> Rate:
        return Rate(self.recalled, self.positives)

    @property
    def rejection(self) -> Rate:
        return Rate(self.rejected, self.negatives)

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "decided": self.decided,
            "excluded": self.excluded,
            "agreement": self.agreement.as_dict(),
            "tp_recall": self.recall.as_dict(),
            "fp_rejection": self.rejection.as_dict(),
        }


def tally(outcomes: Iterable[Outcome]) -> Tally:
    """The agreement counts of all ``outcomes``."""
    total = Tally()
    for o in outcomes:
        total.add(o)
    return total


def breakdown(outcomes: Iterable[Outcome], key: Callable[[Outcome], str]) -> dict[str, Tally]:
    """A tally per value of ``key``, sorted by that value."""
    groups: dict[str, Tally] = {}
    for o in outcomes:
        groups.setdefault(key(o), Tally()).add(o)
    return dict(sorted(groups.items()))


def by(dimension: str) -> Callable[[Outcome], str]:
    """The key of one of ``DIMENSIONS``."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"no such dimension: {dimension!r}")
    return lambda o: str(getattr(o, dimension))


@dataclass
class Confusion:
    """Cases by socbot's verdict (rows) and the human truth (columns), raw labels."""

    cells: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        if o.truth is None:
            return
        cell = (o.verdict or "none", o.truth)
        self.cells[cell] = self.cells.get(cell, 0) + o.count

    def get(self, verdict: str, truth: str) -> int:
        return self.cells.get((verdict, truth), 0)

    def as_dict(self) -> dict[str, dict[str, int]]:
        rows: dict[str, dict[str, int]] = {}
        for (verdict, truth), n in sorted(self.cells.items()):
            rows.setdefault(verdict, {})[truth] = n
        return rows


def confusion(outcomes: Iterable[Outcome]) -> Confusion:
    matrix = Confusion()
    for o in outcomes:
        matrix.add(o)
    return matrix


def disagreements(outcomes: Iterable[Outcome]) -> list[Outcome]:
    """The cases the human decided otherwise than socbot (comparable ones only)."""
    return [o for o in outcomes if agrees(o) is False]


@dataclass
class Audit:
    """Auto-resolution of one rule: cases closed by socbot, how many a human reviewed, and
    how many of those were real (``true_positive``): the error rate."""

    auto_resolved: int = 0
    audited: int = 0  # reviewed with a disposition in a class (a duplicate says nothing)
    errors: int = 0

    @property
    def error(self) -> Rate:
        return Rate(self.errors, self.audited)

    def as_dict(self) -> dict[str, Any]:
        return {
            "auto_resolved": self.auto_resolved,
            "audited": self.audited,
            "error_rate": self.error.as_dict(),
        }


def audits(outcomes: Iterable[Outcome]) -> dict[str, Audit]:
    """Auto-resolution's audit per policy rule, sorted by rule."""
    rules: dict[str, Audit] = {}
    for o in outcomes:
        if not o.auto_resolved:
            continue
        audit = rules.setdefault(o.rule, Audit())
        audit.auto_resolved += o.count
        if o.audited and klass(o.audit_disposition) is not None:
            audit.audited += o.count
            audit.errors += o.count if o.audit_disposition in POSITIVE else 0
    return dict(sorted(rules.items()))


def drawn(share: float, rng: Random) -> bool:
    """One unbiased draw: True with probability ``share`` (an audit, a holdout run).

    A share outside [0, 1] is a programming or configuration error and raises."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be within [0, 1], not {share!r}")
    return rng.random() < share


def nearest_rank(p: float, n: int) -> int:
    """The 0-based index of the ``p``-th percentile of ``n`` sorted values (nearest rank)."""
    if n <= 0 or not 0.0 < p <= 1.0:
        raise ValueError(f"no {p!r} percentile of {n!r} values")
    return max(1, math.ceil(p * n - 1e-9)) - 1


def iso_week(day: date) -> str:
    """``2026-W48``: the ISO year and week of ``day``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"

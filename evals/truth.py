"""A scenario's ground truth: accepted verdicts, severity band, what must be established,
techniques, structured forbidden claims, and the gates' limits (docs/eval.md).

Only this module knows the truth's shape; ``evals.score`` asks it questions
(``accepts``, ``limits``) and ``evals.scenario`` reads it from ``scenario.toml``, in the
new format or adapted from the old one (``from_legacy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from alerts.attack import enterprise

Verdict = Literal["true_positive", "false_positive", "benign", "inconclusive"]
Accepted = Literal[
    "true_positive", "true_positive_no_impact", "false_positive", "benign", "inconclusive"
]
VERDICTS: tuple[str, ...] = ("true_positive", "false_positive", "benign", "inconclusive")
ATTACK_LABELS = frozenset({"true_positive", "true_positive_no_impact"})
SEVERITIES = ("info", "low", "medium", "high", "critical")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(Strict):
    """The gates' thresholds: the pack's ``[gates]``, a scenario's ``[truth]`` overriding."""

    min_recall: float = Field(1.0, ge=0, le=1)
    min_verified: float = Field(0.5, ge=0, le=1)
    max_answer_chars: int = Field(4000, ge=200)
    min_technique_precision: float = Field(0.5, ge=0, le=1)
    cite_values: bool = Field(True, description="a value counts only in a finding citing it")


class Establish(Strict):
    """A value a right answer establishes, and the table whose rows hold it."""

    value: str = Field(min_length=1)
    table: str | None = None


class Assertion(Strict):
    """A claim a right answer never makes; it holds when every key given holds."""

    verdict: Verdict | None = None
    severity: Literal["info", "low", "medium", "high", "critical"] | None = None
    technique: str | None = None
    compromised: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _some_key(self) -> Assertion:
        if not self.model_dump(exclude_none=True):
            raise ValueError("a forbidden claim needs verdict, severity, technique or compromised")
        return self


def _technique_ids(ids: list[str]) -> list[str]:
    catalogue = enterprise()
    for tid in ids:
        problem = catalogue.judge(tid).problem
        if problem:
            raise ValueError(f"technique {tid!r}: {problem}")
    return [tid.strip().upper() for tid in ids]


class Truth(Strict):
    """What a right answer says (docs/eval.md, "Ground truth")."""

    verdicts: list[Accepted] = Field(min_length=1, description="accepted; the first is the label")
    rationale: str = ""
    severity: tuple[str, str] = Field(description="lowest and highest acceptable severity")
    must_establish: list[Establish] = Field(default_factory=list)
    techniques: list[str] = Field(default_factory=list)
    techniques_accept: list[str] = Field(default_factory=list)
    forbidden: list[Assertion] = Field(default_factory=list)
    min_recall: float | None = Field(None, ge=0, le=1)
    min_verified: float | None = Field(None, ge=0, le=1)
    max_answer_chars: int | None = Field(None, ge=200)
    min_technique_precision: float | None = Field(None, ge=0, le=1)

    @field_validator("must_establish", mode="before")
    @classmethod
    def _plain_values(cls, items: Any) -> Any:
        if isinstance(items, list):
            return [{"value": i} if isinstance(i, str) else i for i in items]
        return items

    @field_validator("severity")
    @classmethod
    def _band(cls, band: tuple[str, str]) -> tuple[str, str]:
        low, high = band
        if low not in SEVERITIES or high not in SEVERITIES:
            raise ValueError(f"severity band {list(band)} must use {', '.join(SEVERITIES)}")
        if SEVERITIES.index(low) > SEVERITIES.index(high):
            raise ValueError(f"severity band {list(band)} is upside down")
        return band

    @field_validator("techniques", "techniques_accept")
    @classmethod
    def _known(cls, ids: list[str]) -> list[str]:
        return _technique_ids(ids)

    @field_validator("verdicts")
    @classmethod
    def _distinct(cls, verdicts: list[str]) -> list[str]:
        if len(set(verdicts)) != len(verdicts):
            raise ValueError("a verdict is listed twice")
        return verdicts

    @property
    def verdict(self) -> str:
        """The label: the first accepted verdict."""
        return self.verdicts[0]

    @property
    def attack(self) -> bool:
        return self.verdict in ATTACK_LABELS

    @property
    def values(self) -> list[str]:
        return [e.value for e in self.must_establish]

    def accepts(self, verdict: object, compromised: Sequence[str]) -> bool:
        """Whether an answer ``verdict`` naming ``compromised`` entities is right."""
        if verdict in self.verdicts:
            return True
        no_impact = verdict == "true_positive" and not compromised
        return no_impact and "true_positive_no_impact" in self.verdicts

    def limits(self, pack: Limits) -> Limits:
        """``pack``'s limits with this scenario's overrides."""
        names = [k for k in Limits.model_fields if getattr(self, k, None) is not None]
        return pack.model_copy(update={k: getattr(self, k) for k in names})


LEGACY_LIMITS = Limits(min_verified=0.5, cite_values=False)


def from_legacy(truth: Mapping[str, Any]) -> dict[str, Any]:
    """An old ``[truth]`` (verdict, accept, forbidden substrings) in the new shape.

    Forbidden strings that name a verdict become ``{verdict = ...}``; the others (free
    text) are dropped: the scorer no longer searches text for claims.
    """
    old = dict(truth)
    verdicts = [old.pop("verdict", None), *old.pop("accept", [])]
    said = [str(f).strip().lower().replace(" ", "_") for f in old.pop("forbidden", [])]
    forbidden = [{"verdict": f} for f in said if f in VERDICTS]
    return {**old, "verdicts": [v for v in verdicts if v is not None], "forbidden": forbidden}

"""Token and latency accounting for one investigation, per stage.

The gateway adds one entry per model call (``Usage.add``); the token budget is
checked against ``Usage.total_tokens``; ``Usage.as_dict`` is what the outcome,
the investigation record and ``--json`` show. ``absorb`` folds the usage of a
call made on the side (the speculative conclusion) into the run's usage under
one stage name. ``cost_usd`` is the list-price cost (``agent.model.pricing``) of the calls
whose model has a price; ``unpriced_calls`` counts those whose model has none;
``models`` counts the calls per model that answered (the one served, else asked for:
a policy rule may run an investigation on another model than ``models.main``), and
``by_model`` what each spent (``provider:model``: ``socbot usage --by model``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class StageUsage:
    """What one stage (planner, step s1, ...) spent."""

    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cached_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    def cost_text(self, digits: int = 4) -> str:
        """The cost as shown: ``0.0123``, ``0.0123+`` (some calls unpriced: a floor),
        ``unknown`` (every call unpriced: never 0)."""
        if self.unpriced_calls and self.unpriced_calls >= self.calls:
            return "unknown"
        return f"{self.cost_usd:.{digits}f}" + ("+" if self.unpriced_calls else "")

    @property
    def total_tokens(self) -> int:
        """Billed tokens: prompt, visible output and thinking."""
        return self.prompt_tokens + self.output_tokens + self.thinking_tokens

    @classmethod
    def from_dict(cls, counts: Mapping[str, Any]) -> StageUsage:
        """A stage's (or, with ``llm_calls``, a whole run's) ``as_dict``, read back."""
        values = {name: counts.get(name) or 0 for name in cls.__dataclass_fields__}
        values["calls"] = counts.get("calls", counts.get("llm_calls")) or 0
        return cls(**values)

    def merge(self, other: StageUsage) -> None:
        """Add ``other``'s counts to this one."""
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int | float]:
        return {
            **asdict(self),
            "latency_ms": round(self.latency_ms, 1),
            "cost_usd": round(self.cost_usd, 6),
        }


@dataclass
class Usage:
    """Token and latency accounting for one investigation, per stage."""

    stages: dict[str, StageUsage] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)  # calls per model used
    by_model: dict[str, StageUsage] = field(default_factory=dict)  # what each model spent

    def add(
        self,
        stage: str,
        *,
        model: str | None = None,
        prompt_tokens: int = 0,
        output_tokens: int = 0,
        thinking_tokens: int = 0,
        cached_tokens: int = 0,
        latency_ms: float = 0.0,
        cost_usd: float | None = None,
    ) -> None:
        """Record one model call under ``stage`` (``cost_usd`` None: the model has no price)."""
        call = StageUsage(
            1,
            prompt_tokens,
            output_tokens,
            thinking_tokens,
            cached_tokens,
            latency_ms,
            cost_usd or 0.0,
            int(cost_usd is None),
        )
        self.stages.setdefault(stage, StageUsage()).merge(call)
        if model:
            self.models[model] = self.models.get(model, 0) + 1
            self.by_model.setdefault(model, StageUsage()).merge(call)

    def absorb(self, other: Usage, *, stage: str) -> None:
        """Add everything ``other`` recorded (whatever its stages) under ``stage``."""
        if other.calls:
            self.stages.setdefault(stage, StageUsage()).merge(other.total())
        for model, calls in other.models.items():
            self.models[model] = self.models.get(model, 0) + calls
        for model, spent in other.by_model.items():
            self.by_model.setdefault(model, StageUsage()).merge(spent)

    def total(self) -> StageUsage:
        """All stages summed."""
        total = StageUsage()
        for s in self.stages.values():
            total.merge(s)
        return total

    @property
    def calls(self) -> int:
        return self.total().calls

    @property
    def total_tokens(self) -> int:
        """Prompt + output + thinking tokens over every stage (what the budget counts)."""
        return self.total().total_tokens

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary: ``llm_calls``, ``total_tokens``, sums, and ``stages``."""
        total = self.total().as_dict()
        return {
            "llm_calls": total.pop("calls"),
            "total_tokens": self.total_tokens,
            **total,
            "models": dict(self.models),
            "by_model": {name: s.as_dict() for name, s in self.by_model.items()},
            "stages": {name: s.as_dict() for name, s in self.stages.items()},
        }

"""The run figures a conclusion's or answer's footer shows: duration, model calls, cost.

Built from an outcome's ``usage`` (``core.usage``: ``llm_calls``, ``cost_usd`` at list
prices, ``unpriced_calls``) and ``record`` (``timings.total_ms``; ``privacy.note``: how
much personal data the model saw pseudonymised, counts only). The cost is a floor ("≥")
when some calls had no price, and left out when none had one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunStats:
    duration_s: float | None
    model_calls: int
    cost_usd: float | None
    cost_is_floor: bool = False
    privacy: str = ""  # "personal data pseudonymised for the model: 4 users, ..."

    @classmethod
    def from_outcome(cls, usage: Mapping[str, Any], record: Mapping[str, Any]) -> RunStats:
        calls = int(usage.get("llm_calls") or 0)
        unpriced = int(usage.get("unpriced_calls") or 0)
        cost = usage.get("cost_usd")
        total_ms = (record.get("timings") or {}).get("total_ms")
        return cls(
            duration_s=float(total_ms) / 1000 if isinstance(total_ms, int | float) else None,
            model_calls=calls,
            cost_usd=float(cost) if isinstance(cost, int | float) and unpriced < calls else None,
            cost_is_floor=unpriced > 0,
            privacy=str((record.get("privacy") or {}).get("note") or ""),
        )

    def text(self) -> str:
        """``⏱ 1 min 23 s · 12 model calls · $0.0146`` (mrkdwn-safe: no user text)."""
        parts = []
        if self.duration_s is not None:
            parts.append(f"⏱ {duration(self.duration_s)}")
        parts.append(f"{self.model_calls} model call{'' if self.model_calls == 1 else 's'}")
        if self.cost_usd is not None:
            parts.append(("≥ " if self.cost_is_floor else "") + usd(self.cost_usd))
        elif self.cost_is_floor:  # every call on a model without a price: never "$0"
            parts.append("cost unknown")
        if self.privacy:
            parts.append("🔒 " + self.privacy)
        return " · ".join(parts)


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = round(seconds)
    if s < 60:
        return f"{max(s, 0)} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def usd(amount: float) -> str:
    """``$0.0146`` below a dollar (list-price costs are fractions of a cent), else ``$1.25``."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"

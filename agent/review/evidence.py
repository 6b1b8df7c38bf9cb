"""Evidence references: every tool call of a run gets a short, stable name.

A call's reference is its step id, ``#`` and its position among that step's calls,
``s2#3`` for the third call of step s2 (``d#1`` for the first call of a direct
answer). The model sees the reference with the result (``{"ref": "s2#3",
"output": ...}``), step findings cite references, and the conclusion's key
findings carry ``evidence_refs``. ``Evidence`` keeps what each call was asked and
returned (as the model saw it) so ``agent.review.grounding`` can check that a finding's
values really appear in the results it cites. The reference ``alert`` names the
alert (and the analyst's request) itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.base import ToolResult

DIRECT_PREFIX = "d"
ALERT_REF = "alert"
ARGS_CHARS = 120
INDEX_LINES = 60


@dataclass(frozen=True)
class EvidenceItem:
    """One tool call: its reference, what it was asked, and what came back."""

    ref: str
    step_id: str | None
    tool: str
    args: dict[str, Any]
    ok: bool
    result: str  # the result's JSON text as the model saw it (already truncated)

    def searchable(self) -> str:
        """What a finding citing this call may quote: the arguments and the result."""
        return json.dumps(self.args, ensure_ascii=False, default=str) + "\n" + self.result

    def line(self) -> str:
        """``s1#2 lookup_ip(ip='203.0.113.7') → ok``, for prompts and the record."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        if len(args) > ARGS_CHARS:
            args = args[: ARGS_CHARS - 1] + "…"
        return f"{self.ref} {self.tool}({args}) → {'ok' if self.ok else 'error'}"


class Evidence:
    """The tool calls of one run, by reference, in call order."""

    def __init__(self) -> None:
        self.items: dict[str, EvidenceItem] = {}
        self._counts: dict[str, int] = {}

    def next_ref(self, step_id: str | None) -> str:
        """Reserve the next reference of ``step_id`` (calls are numbered from 1)."""
        prefix = step_id or DIRECT_PREFIX
        self._counts[prefix] = self._counts.get(prefix, 0) + 1
        return f"{prefix}#{self._counts[prefix]}"

    def add(self, ref: str, step_id: str | None, result: ToolResult) -> EvidenceItem:
        """Record the call that ``ref`` was reserved for."""
        item = EvidenceItem(
            ref, step_id, result.name, dict(result.args), result.ok, result.as_json()
        )
        self.items[ref] = item
        return item

    def get(self, ref: str) -> EvidenceItem | None:
        """The call named ``ref`` (spaces and brackets around it ignored), if any."""
        return self.items.get(normalize_ref(ref))

    @property
    def any_succeeded(self) -> bool:
        """True when at least one call returned a result (not an error)."""
        return any(item.ok for item in self.items.values())

    def succeeded_text(self) -> str:
        """Every successful call's arguments and result, for checks without citations."""
        return "\n".join(i.searchable() for i in self.items.values() if i.ok)

    def index(self, limit: int = INDEX_LINES) -> list[str]:
        """One line per call (the last ``limit``), for the concluder and the critic."""
        lines = [item.line() for item in self.items.values()]
        if len(lines) > limit:
            lines = [f"({len(lines) - limit} earlier calls not listed)", *lines[-limit:]]
        return lines


def normalize_ref(ref: str) -> str:
    """``[S2#3]`` → ``s2#3``: references as the model may write them."""
    return ref.strip().strip("[]()` ").lower()

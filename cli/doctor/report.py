"""One check's result and how it prints: ``✔ name: detail``, ``✘ name: detail — fix: …``
or ``· name: detail`` for a part that is not configured (not a failure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "fail", "skip"]
MARKS: dict[Status, str] = {"ok": "✔", "fail": "✘", "skip": "·"}


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    @staticmethod
    def ok(name: str, detail: str) -> Check:
        return Check(name, "ok", detail)

    @staticmethod
    def fail(name: str, detail: str, fix: str) -> Check:
        return Check(name, "fail", detail, fix)

    @staticmethod
    def skip(name: str, detail: str) -> Check:
        return Check(name, "skip", detail)

    def line(self) -> str:
        text = f"{MARKS[self.status]} {self.name}: {self.detail}"
        return f"{text} — fix: {self.fix}" if self.fix else text

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}

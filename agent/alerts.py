"""The normalized alert the engine investigates, whatever system sent it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

IndicatorKind = Literal[
    "ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "email", "principal"
]


class Indicator(BaseModel):
    kind: IndicatorKind
    value: str


class Alert(BaseModel):
    id: str = Field(description="our id (uuid hex)")
    source: str = Field(description="guardduty | scc | generic | slack | ...")
    title: str
    severity: str | None = None  # low | medium | high | critical, when known
    event_time: datetime | None = None
    indicators: list[Indicator] = Field(default_factory=list)
    raw: dict[str, Any]

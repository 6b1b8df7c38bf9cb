"""Answers kept to save a call: threat-intel lookups (``intel_cache``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from store.schema.base import Base


class IntelCache(Base):
    __tablename__ = "intel_cache"
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    value: Mapped[dict[str, Any]] = mapped_column(JSON)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

"""Tables added after ``store.models`` filled up (same declarative ``Base``).

Imported by ``store.migrate`` and the migrations' env, so that the schema check and
``create`` see them; each table's queries live in the module named beside it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base, utcnow


class ReplicaRow(Base):
    """A replica's last sign of life (``store.replicas``)."""

    __tablename__ = "replicas"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class BulletTag(Base):
    """What one investigation's learning did to a bullet's counters (``helpful`` /
    ``harmful`` / ``neutral``): a later run for the same investigation replaces this
    effect instead of adding to it (``store.playbook.PlaybookStore.count_tags``)."""

    __tablename__ = "bullet_tags"
    investigation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    bullet_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tag: Mapped[str] = mapped_column(String(16))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

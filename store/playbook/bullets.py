"""The team playbook: bullets, their counters, status and provenance (``playbook_bullets``).

A bullet is a short instruction or fact the team approved ("203.0.113.0/24 is our
external scanner"). Only ``active`` bullets are ever selected for a prompt.
Everything learned arrives as a *proposal* (status ``proposed``) and changes
nothing until a person approves it; ``approve`` applies its ``op``:

* ``add`` — the proposal itself becomes active;
* ``update`` / ``merge`` — the proposal becomes active in place of its ``targets``,
  which are retired (``superseded_by``) and whose counters it inherits;
* ``retire`` — its targets are retired; the proposal is kept as the record.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.db.engine import Database
from store.playbook.rules import check
from store.schema import Bullet, BulletTag, utcnow

Kind = Literal["fact", "pattern", "anti_pattern", "skill"]
Status = Literal["proposed", "active", "retired", "rejected"]
Op = Literal["add", "update", "merge", "retire"]
KINDS: tuple[str, ...] = ("fact", "pattern", "anti_pattern", "skill")
STATUSES: tuple[str, ...] = ("proposed", "active", "retired", "rejected")


class PlaybookError(Exception):
    """A playbook change that cannot be made (unknown id, wrong status)."""


class Triggers(BaseModel):
    """When a bullet is relevant: any match makes it a candidate."""

    keywords: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list, description="alert sources")
    indicators: list[str] = Field(default_factory=list, description="values or IP networks")
    indicator_kinds: list[str] = Field(default_factory=list, description="ip, domain, ...")
    tools: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not any(self.model_dump().values())


class PlaybookBullet(BaseModel):
    """A bullet as the rest of socbot sees it (detached from the session)."""

    id: str
    content: str
    kind: Kind = "fact"
    scope: str = "global"
    triggers: Triggers = Field(default_factory=Triggers)
    helpful: int = 0
    harmful: int = 0
    status: Status = "proposed"
    op: Op = "add"
    targets: list[str] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)
    times_loaded: int = 0
    times_used: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None


def new_id() -> str:
    """A fresh bullet id, short enough for a prompt: ``pb-1a2b3c4d``."""
    return f"pb-{secrets.token_hex(4)}"


def _out(row: Bullet) -> PlaybookBullet:
    return PlaybookBullet.model_validate(
        {c.name: getattr(row, c.name) for c in Bullet.__table__.columns}
    )


class PlaybookStore:
    """Queries on ``playbook_bullets``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, bullet: PlaybookBullet) -> PlaybookBullet:
        """Insert ``bullet`` as given (its id, status, counters...)."""
        check(bullet.content, bullet.scope)
        now = utcnow()
        values = bullet.model_dump(exclude={"created_at", "updated_at"})
        async with self.db.session() as session:
            session.add(Bullet(**values, created_at=bullet.created_at or now, updated_at=now))
        return await self._must(bullet.id)

    async def put(self, bullet: PlaybookBullet) -> Literal["added", "updated"]:
        """Insert or overwrite the bullet with this id (import)."""
        check(bullet.content, bullet.scope)
        now = utcnow()
        values = bullet.model_dump()
        values["created_at"] = bullet.created_at or now
        values["updated_at"] = bullet.updated_at or now
        async with self.db.session() as session:
            row = await session.get(Bullet, bullet.id)
            if row is None:
                session.add(Bullet(**values))
                return "added"
            for key, value in values.items():
                setattr(row, key, value)
            return "updated"

    async def get(self, bullet_id: str) -> PlaybookBullet | None:
        async with self.db.session() as session:
            row = await session.get(Bullet, bullet_id)
            return _out(row) if row is not None else None

    async def bullets(self, statuses: Collection[str] | None = None) -> list[PlaybookBullet]:
        """Bullets with one of ``statuses`` (all when None), oldest first."""
        query = select(Bullet).order_by(Bullet.created_at, Bullet.id)
        if statuses is not None:
            query = query.where(Bullet.status.in_(list(statuses)))
        async with self.db.session() as session:
            return [_out(row) for row in await session.scalars(query)]

    async def active(self) -> list[PlaybookBullet]:
        """The bullets that may reach a prompt."""
        return await self.bullets(["active"])

    async def approve(self, bullet_id: str, by: str) -> PlaybookBullet:
        """Apply a proposal (see the module docstring); ``PlaybookError`` if not proposed."""
        now = utcnow()
        async with self.db.session() as session:
            row = await self._proposal(session, bullet_id)
            targets = [t for t in row.targets if t != row.id]
            old = list(await session.scalars(select(Bullet).where(Bullet.id.in_(targets))))
            for target in old:
                target.status = "retired"
                target.provenance = {
                    **target.provenance,
                    "retired_by": by,
                    "superseded_by": row.id if row.op != "retire" else None,
                }
                target.updated_at = now
                if row.op in ("update", "merge"):
                    row.helpful += target.helpful
                    row.harmful += target.harmful
                    row.times_loaded += target.times_loaded
                    row.times_used += target.times_used
            row.status = "retired" if row.op == "retire" else "active"
            row.provenance = {**row.provenance, "approved_by": by, "approved_at": now.isoformat()}
            row.updated_at = now
        return await self._must(bullet_id)

    async def reject(self, bullet_id: str, by: str, reason: str = "") -> PlaybookBullet:
        """Refuse a proposal: it never becomes active."""
        async with self.db.session() as session:
            row = await self._proposal(session, bullet_id)
            row.status = "rejected"
            row.provenance = {**row.provenance, "rejected_by": by, "reject_reason": reason}
            row.updated_at = utcnow()
        return await self._must(bullet_id)

    async def edit(
        self, bullet_id: str, content: str, by: str, *, scope: str | None = None
    ) -> PlaybookBullet:
        """Change a proposal's text (and ``scope``, if given) before approving it (it
        stays proposed)."""
        async with self.db.session() as session:
            row = await self._proposal(session, bullet_id)
            check(content, scope if scope is not None else row.scope)
            row.content = content.strip()
            row.scope = scope if scope is not None else row.scope
            row.provenance = {**row.provenance, "edited_by": by}
            row.updated_at = utcnow()
        return await self._must(bullet_id)

    async def retire(self, bullet_id: str, by: str, reason: str = "") -> PlaybookBullet:
        """Take an active (or proposed) bullet out of use."""
        async with self.db.session() as session:
            row = await session.get(Bullet, bullet_id)
            if row is None:
                raise PlaybookError(f"no bullet {bullet_id!r}")
            row.status = "retired"
            row.provenance = {**row.provenance, "retired_by": by, "retire_reason": reason}
            row.updated_at = utcnow()
        return await self._must(bullet_id)

    async def set_provenance(self, bullet_id: str, **values: Any) -> None:
        """Merge ``values`` into the bullet's provenance (e.g. where its review was posted)."""
        async with self.db.session() as session:
            row = await session.get(Bullet, bullet_id)
            if row is not None:
                row.provenance = {**row.provenance, **values}

    async def count_tags(
        self, tags: Mapping[str, str], *, investigation_id: str | None = None
    ) -> None:
        """Add one ``helpful`` / ``harmful`` per bullet id (``neutral`` changes nothing).

        With ``investigation_id``, what that investigation did to each bullet before is
        replaced, not added to: its effect on a bullet is at most one count.
        """
        async with self.db.session() as session:
            for bullet_id, tag in tags.items():
                before = None
                if investigation_id is not None:
                    before = await _retag(session, investigation_id, bullet_id, tag)
                    if before == tag:
                        continue
                for name, step in ((before, -1), (tag, 1)):
                    column = {"helpful": Bullet.helpful, "harmful": Bullet.harmful}.get(name or "")
                    if column is not None:
                        await session.execute(
                            update(Bullet)
                            .where(Bullet.id == bullet_id)
                            .values({column: column + step, Bullet.updated_at: utcnow()})
                        )

    async def count_use(self, loaded: Iterable[str], used: Iterable[str]) -> None:
        """Count that these bullets were put in a prompt / cited by the model."""
        async with self.db.session() as session:
            for ids, column in ((set(loaded), Bullet.times_loaded), (set(used), Bullet.times_used)):
                if ids:
                    await session.execute(
                        update(Bullet).where(Bullet.id.in_(ids)).values({column: column + 1})
                    )

    async def _proposal(self, session: AsyncSession, bullet_id: str) -> Bullet:
        row = await session.get(Bullet, bullet_id)
        if row is None:
            raise PlaybookError(f"no bullet {bullet_id!r}")
        if row.status != "proposed":
            raise PlaybookError(f"bullet {bullet_id!r} is {row.status}, not proposed")
        return row

    async def _must(self, bullet_id: str) -> PlaybookBullet:
        found = await self.get(bullet_id)
        if found is None:
            raise PlaybookError(f"no bullet {bullet_id!r}")
        return found


async def _retag(
    session: AsyncSession, investigation_id: str, bullet_id: str, tag: str
) -> str | None:
    """Record ``tag`` as the investigation's effect on the bullet; the one it replaces."""
    row = await session.get(BulletTag, (investigation_id, bullet_id))
    if row is None:
        session.add(BulletTag(investigation_id=investigation_id, bullet_id=bullet_id, tag=tag))
        return None
    before, row.tag, row.updated_at = row.tag, tag, utcnow()
    return before

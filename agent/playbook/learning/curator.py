"""The Curator: the Reflector's lessons as delta operations on the playbook, checked in code.

The model proposes ``add`` / ``update`` / ``merge`` / ``retire`` operations against the
related existing bullets (``prompts/learning/curator.j2``). ``check`` then enforces
what must not depend on the model:

* targets must be existing bullets (active ones for update/merge/retire); an update or
  merge without one becomes an ``add``, a retire without one is dropped;
* an unknown scope or an empty or overlong text drops the operation (fail closed);
* an ``add`` that duplicates bullets with the same scope and similar text (token
  Jaccard ≥ ``DUPLICATE``) updates the active one (merges them, when several), or is
  dropped when a duplicate is a proposal still waiting for review;
* every active bullet whose ``harmful`` count exceeds its ``helpful`` count gets a
  ``retire`` proposal (unless one is already waiting).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from agent.model.fence import Fence, user_turn
from agent.model.gateway import CallContext, LLMGateway
from agent.playbook.learning.models import Curation, DeltaOp, Insight
from agent.playbook.selection import Situation, select, tokens
from agent.prompts import Prompts
from config.settings import PlaybookSettings
from store.playbook.bullets import PlaybookBullet
from store.playbook.rules import SCOPE

log = logging.getLogger(__name__)

STAGE = "playbook_curator"
TEMPLATE = "learning/curator"
DUPLICATE = 0.5
MAX_CONTENT = 600
RELATED = 10


async def curate(
    gateway: LLMGateway,
    prompts: Prompts,
    ctx: CallContext,
    insights: Sequence[Insight],
    existing: Sequence[PlaybookBullet],
    *,
    source: str | None,
) -> list[DeltaOp]:
    """Ask the model for operations on the bullets related to ``insights``."""
    lessons = "\n".join(f"- {i.key_insight} (because: {i.root_cause_analysis})" for i in insights)
    text = " ".join(f"{i.key_insight} {i.correct_approach}" for i in insights)
    active = [b for b in existing if b.status == "active"]
    related = select(
        active,
        Situation(text=text, source=source),
        PlaybookSettings(max_bullets=RELATED, max_tokens=10_000),
    )
    fence = Fence()
    prompt = prompts.render(
        TEMPLATE,
        source=source,
        data=fence,
        lessons=lessons,
        related="\n".join(
            f"[{s.bullet.id}] ({s.bullet.kind}, {s.bullet.scope}) {s.bullet.content}"
            for s in related
        ),
    )
    out = await gateway.generate_structured(
        ctx, stage=STAGE, system=prompt.system, contents=user_turn(prompt.user), schema=Curation
    )
    return out.operations


def similarity(a: str, b: str) -> float:
    """Token Jaccard similarity of two texts (0..1)."""
    left, right = set(tokens(a)), set(tokens(b))
    return len(left & right) / len(left | right) if left and right else 0.0


def check(ops: Sequence[DeltaOp], existing: Sequence[PlaybookBullet]) -> list[DeltaOp]:
    """The operations that may become proposals, made consistent (see the module doc)."""
    by_id = {b.id: b for b in existing}
    active = {i for i, b in by_id.items() if b.status == "active"}
    out: list[DeltaOp] = []
    for op in ops:
        fixed = _checked(op, by_id, active)
        if fixed is not None:
            out.append(fixed)
    return out + retirements(existing, out)


def _checked(op: DeltaOp, by_id: dict[str, PlaybookBullet], active: set[str]) -> DeltaOp | None:
    targets = [t for t in dict.fromkeys(op.targets) if t in active]
    content = " ".join(op.content.split())
    if op.op == "retire":
        scope = op.scope if SCOPE.match(op.scope) else "global"  # the retirement's record
        update = {"targets": targets, "content": "", "scope": scope}
        return op.model_copy(update=update) if targets else None
    if not content or len(content) > MAX_CONTENT or not SCOPE.match(op.scope):
        log.info("curator operation dropped: empty, too long or bad scope %r", op.scope)
        return None
    if not targets:
        twins = _duplicates(content, op.scope, by_id.values())
        if any(t.status != "active" for t in twins):
            log.info("curator add dropped: duplicates a proposal waiting for review")
            return None
        targets = [t.id for t in twins]
    kind = "add" if not targets else ("merge" if len(targets) > 1 else "update")
    return op.model_copy(update={"op": kind, "targets": targets, "content": content})


def _duplicates(
    content: str, scope: str, bullets: Iterable[PlaybookBullet]
) -> list[PlaybookBullet]:
    """Active or proposed bullets in ``scope`` whose text is like ``content``."""
    return [
        b
        for b in bullets
        if b.scope == scope
        and b.status in ("active", "proposed")
        and similarity(content, b.content) >= DUPLICATE
    ]


def retirements(existing: Sequence[PlaybookBullet], planned: Sequence[DeltaOp]) -> list[DeltaOp]:
    """A retire proposal for each active bullet that harmed more often than it helped."""
    waiting = {t for b in existing if b.status == "proposed" for t in b.targets}
    waiting |= {t for op in planned for t in op.targets}
    return [
        DeltaOp(
            op="retire",
            targets=[b.id],
            kind=b.kind,
            scope=b.scope,
            reason=f"harmful {b.harmful} times, helpful {b.helpful} times",
        )
        for b in existing
        if b.status == "active" and b.harmful > b.helpful and b.id not in waiting
    ]

"""The team playbook inside one run: load before planning, record what was cited.

``load`` selects the bullets (``agent.playbook.selection.select``), puts them in the prompt
variables (``playbook``) and the record (``record["playbook"]``: loaded ids, why,
tokens) and emits ``PlaybookSelected`` to the trace. A run ``held_out`` (a random share,
``learning.holdout_share``) investigates without the playbook, so that its effect is
measured (``core.playbook_effect``): it loads nothing and says so in the record
(``record["playbook"]["holdout"]``) and the trace. ``cited`` keeps the ids a stage
returned in ``used_bullets`` that were really in its prompt and emits
``PlaybookUsed``. ``settle`` counts loads and uses on the bullets. The playbook is a
quality feature: when the store fails, the run goes on without it (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from agent.playbook.selection import Situation, estimate_tokens, select, valid_ids
from agent.run import Run
from config.settings import PlaybookSettings
from core.events import PlaybookSelected, PlaybookUsed
from store.playbook.bullets import PlaybookBullet

log = logging.getLogger(__name__)


class PlaybookSource(Protocol):
    """``store.playbook.bullets.PlaybookStore`` as a run uses it."""

    async def active(self) -> list[PlaybookBullet]: ...

    async def count_use(self, loaded: Iterable[str], used: Iterable[str]) -> None: ...


def situation(run: Run) -> Situation:
    """The request, alert (summary and payload), source, channel and indicators."""
    request = run.request
    alert = request.alert
    channel = None
    if request.conversation_id.startswith("slack:"):
        channel = request.conversation_id.split(":")[1] or None
    alert_text = run.variables.get("alert") or ""
    return Situation(
        text=f"{request.text}\n{alert_text}",
        source=request.source,
        channel=channel,
        indicators=[(i.kind, i.value) for i in alert.indicators] if alert else [],
    )


async def load(
    run: Run, source: PlaybookSource | None, settings: PlaybookSettings, *, held_out: bool = False
) -> None:
    """Choose this run's bullets and hand them to the prompts and the trace (none when the
    run is ``held_out``)."""
    if source is None or not settings.enabled:
        return
    if held_out:
        run.record["playbook"]["holdout"] = True
        await run.sink.emit(
            PlaybookSelected(investigation_id=run.id, bullets=[], tokens=0, holdout=True)
        )
        return
    try:
        bullets = await source.active()
    except Exception:  # fail open: investigate without the playbook
        log.exception("could not load the playbook for %s", run.id)
        return
    chosen = select(bullets, situation(run), settings)
    prompt = [c.as_prompt() for c in chosen]
    tokens = sum(estimate_tokens(b["content"]) for b in prompt)
    run.variables["playbook"] = prompt
    run.record["playbook"].update(
        loaded=[b["id"] for b in prompt],
        reasons={c.bullet.id: c.reasons for c in chosen},
        tokens=tokens,
    )
    await run.sink.emit(
        PlaybookSelected(
            investigation_id=run.id,
            bullets=[{"id": c.bullet.id, "score": c.score, "reasons": c.reasons} for c in chosen],
            tokens=tokens,
        )
    )


async def cited(run: Run, stage: str, ids: Iterable[str]) -> None:
    """Record the bullets ``stage`` relied on (ids not in the prompt are dropped)."""
    record = run.record["playbook"]
    used = valid_ids(ids, record["loaded"])
    if not used:
        return
    record["used"] = list(dict.fromkeys([*record["used"], *used]))
    record["used_by"][stage] = used
    await run.sink.emit(PlaybookUsed(investigation_id=run.id, stage=stage, bullet_ids=used))


async def settle(run: Run, source: PlaybookSource | None) -> None:
    """Count, on the bullets, that they were loaded and used in this run."""
    record = run.record["playbook"]
    if source is None or not record["loaded"]:
        return
    try:
        await source.count_use(record["loaded"], record["used"])
    except Exception:  # fail open: counters are statistics
        log.exception("could not count playbook use for %s", run.id)

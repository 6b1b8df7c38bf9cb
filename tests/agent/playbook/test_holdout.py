"""``learning.holdout_share``: a random share of investigations runs without the playbook,
and the record and the trace say so (the playbook's effect is then measured, randomised)."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from agent.engine import Engine, Request
from agent.history import History
from agent.model.gateway import LLMGateway
from config.settings import LearningSettings, Settings
from core.events import NullSink
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore, Triggers
from tests.fakes.model import ScriptedModel
from tests.playbook_support import bullet, load_alert, planned_script, prompt_text, registry

RELEVANT = (
    "DropPoint DNS findings on i-99999999 come from the malware sandbox; check the sandbox "
    "schedule before escalating."
)


async def investigate(
    db: Database, share: float, rng: Random
) -> tuple[dict[str, Any], list[dict[str, Any]], ScriptedModel]:
    settings = Settings(learning=LearningSettings(holdout_share=share))
    store, runs = PlaybookStore(db), InvestigationStore(db)
    if not await store.active():
        await store.add(bullet(RELEVANT, triggers=Triggers(sources=["guardduty"])))
    model = ScriptedModel(planned_script())
    engine = Engine(
        gateway=LLMGateway(model, settings.gemini),
        registry=registry(),
        history=History(db, settings.limits),
        investigations=runs,
        settings=settings,
        playbook=store,
        rng=rng,
    )
    request = Request(
        conversation_id="slack:CSOC00001:1700000100.000100",
        text="Investigate this alert",
        alert=load_alert("leveret-guardduty-finding.json"),
    )
    outcome = await engine.run(request, NullSink())
    trace = await runs.trace(outcome.investigation_id)
    return outcome.record, trace, model


async def test_a_held_out_run_loads_no_bullet_and_says_so(db: Database) -> None:
    record, trace, model = await investigate(db, 1.0, Random(0))
    assert record["playbook"]["holdout"] is True
    assert record["playbook"]["loaded"] == [] and record["playbook"]["used"] == []
    assert all("Team playbook" not in prompt_text(r) for r in model.requests)
    selected = [e["payload"] for e in trace if e["type"] == "playbook_selected"]
    assert selected == [{"bullets": [], "tokens": 0, "holdout": True}]
    (only,) = await PlaybookStore(db).active()
    assert (only.times_loaded, only.times_used) == (0, 0)


async def test_without_a_holdout_share_every_run_has_the_playbook(db: Database) -> None:
    record, trace, _ = await investigate(db, 0.0, Random(0))
    assert "holdout" not in record["playbook"] and len(record["playbook"]["loaded"]) == 1
    selected = [e["payload"] for e in trace if e["type"] == "playbook_selected"]
    assert selected[0]["holdout"] is False and len(selected[0]["bullets"]) == 1


@pytest.mark.parametrize("seed", [1, 2])  # first draws 0.13 and 0.96
async def test_the_draw_is_the_engines_random_source(db: Database, seed: int) -> None:
    """Half the runs are held out; which ones is the engine's ``rng``'s first draw."""
    expected = Random(seed).random() < 0.5
    record, _, _ = await investigate(db, 0.5, Random(seed))
    assert record["playbook"].get("holdout", False) is expected

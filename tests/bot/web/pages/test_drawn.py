"""A finished run's page is drawn once per revision (``bot.web.pages.drawn``): read and
parsed again only when its trace, status or record changes; a running run every time."""

from __future__ import annotations

from typing import Any

import aiohttp

from bot.web.pages.drawn import Drawn
from bot.web.pages.site import templates
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.schema import Investigation
from tests.bot.web.seed import seed
from tests.bot.web.support import signed_in_site


class Counted(InvestigationStore):
    """The real store, counting how often a trace is read."""

    reads = 0

    async def trace(self, investigation_id: str) -> list[dict[str, Any]]:
        self.reads += 1
        return await super().trace(investigation_id)


async def row_of(store: InvestigationStore, run: str) -> dict[str, Any]:
    found = await store.get(run)
    assert found is not None
    return {c.name: getattr(found, c.name) for c in Investigation.__table__.columns}


def late_call(tool: str) -> dict[str, Any]:
    return {
        "step_id": "s1",
        "ref": "c-late",
        "tool": tool,
        "args": {"query": "late"},
        "ok": True,
        "duration_ms": 3.0,
        "result_chars": 13,
        "result_preview": '{"late": true}',
    }


async def test_a_finished_run_is_drawn_again_only_when_it_changes(db: Database) -> None:
    run = await seed(db, channel=None, text="kept-185.220.101.42", steps=3)
    store = Counted(db)
    drawn = Drawn(store, templates())
    row = await row_of(store, run)
    first = await drawn.view(row, [], [])
    vote = {"user": "U0ALICE1", "value": "up", "verdict": None, "comment": None}
    again = await drawn.view(row, [vote], [])
    assert store.reads == 1 and again["steps_html"] is first["steps_html"]
    assert "kept-185.220.101.42" in again["steps_html"]
    assert again["votes"] == [vote] and first["votes"] == []  # the viewer's, never kept
    assert again["bullets"] is not first["bullets"]

    await store.append_events([(run, "tool_called", late_call("late_lookup"))])
    after = await drawn.view(row, [], [])
    assert store.reads == 2 and "late_lookup" in after["steps_html"]
    assert after["events"] == first["events"] + 1

    changed = {**row, "record": {**row["record"], "answer": "a later answer"}}
    assert (await drawn.view(changed, [], []))["answer"] == "a later answer"
    assert store.reads == 3
    interrupted = {**changed, "status": "interrupted"}
    await drawn.view(interrupted, [], [])
    assert store.reads == 4


async def test_a_running_run_is_drawn_on_every_view(db: Database) -> None:
    run = await seed(db, channel=None, steps=2, running=True)
    store = Counted(db)
    drawn = Drawn(store, templates())
    row = await row_of(store, run)
    for _ in range(3):
        view = await drawn.view(row, [], [])
        assert view["head"]["running"]
    assert store.reads == 3 and not drawn.kept


async def test_the_kept_page_is_the_page_drawn(db: Database) -> None:
    run = await seed(db, channel=None, text="same-page", steps=4, result_size=4000)
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        pages = []
        for path in ("", "", "/body", "/body"):
            async with s.get(f"{site.url}/web/investigations/{run}{path}") as r:
                assert r.status == 200
                pages.append(await r.text())
    assert pages[0] == pages[1] and pages[2] == pages[3]
    called = [e for e in await InvestigationStore(db).trace(run) if e["type"] == "tool_called"]
    assert pages[0].count('<div class="call ') == len(called) > 4 and "same-page" in pages[0]

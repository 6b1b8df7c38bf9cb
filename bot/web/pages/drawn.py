"""The part of an investigation page made from its row and trace, drawn once per revision.

A page parses every stored tool result (up to 64 KiB each), cites the rows the findings
quote and draws every call: 50 steps of 16 kB results take tens of milliseconds. A run's
trace is only appended to, and a finished run's row and record no longer change, so
``Drawn`` keeps what ``investigation_view`` made, with the steps section already
rendered (``investigation_steps.html``), for the last ``KEPT`` runs viewed, under the
run's revision: status, finish time, record, and the trace's last event id and count.
Any change to one of them draws the page afresh; a run still going is drawn afresh on
every view (its timeline and header run to now).

The handler asks ``Access`` before every use. What is kept is the run's own data, never
a viewer's: the header (its age), votes, alerts, suppressions, bullets and the case are
made on each request.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

import jinja2
from markupsafe import Markup

from bot.web.view.header import head
from bot.web.view.investigation import investigation_view
from store.investigations.runs import InvestigationStore

KEPT = 16  # runs whose drawn page is kept (each a few hundred kB of HTML)
STEPS = "investigation_steps.html"
DRAWN_ONLY = ("steps", "direct_calls")  # in the rendered steps, not kept as data


def _revision(row: dict[str, Any], trace: tuple[int, int]) -> tuple[Any, ...]:
    record = json.dumps(row.get("record") or {}, sort_keys=True, default=str)
    return (
        row["status"],
        str(row.get("finished_at")),
        hashlib.sha256(record.encode()).hexdigest(),
        *trace,
    )


class Drawn:
    def __init__(self, store: InvestigationStore, templates: jinja2.Environment) -> None:
        self.store = store
        self.templates = templates
        self.kept: OrderedDict[str, tuple[tuple[Any, ...], dict[str, Any]]] = OrderedDict()

    def _draw(
        self, row: dict[str, Any], trace: list[dict[str, Any]], now: datetime
    ) -> dict[str, Any]:
        view = investigation_view(row, trace, [], [], now)
        view["steps_html"] = Markup(self.templates.get_template(STEPS).render(v=view))
        view["tail"] = trace[-1:]  # the header's "last event"
        for key in DRAWN_ONLY:
            view.pop(key)
        return view

    async def view(
        self,
        row: dict[str, Any],
        votes: list[dict[str, Any]],
        alerts: list[dict[str, Any]],
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """The page's values for ``row`` (already visible to the viewer)."""
        now = now or datetime.now(UTC)
        running = row.get("status") == "running"
        revision = None if running else _revision(row, await self.store.revision(row["id"]))
        kept = self.kept.get(row["id"])
        if revision is not None and kept is not None and kept[0] == revision:
            self.kept.move_to_end(row["id"])
            drawn = kept[1]
        else:
            drawn = self._draw(row, await self.store.trace(row["id"]), now)
            if revision is not None:
                self.kept[row["id"]] = (revision, drawn)
                while len(self.kept) > KEPT:
                    self.kept.popitem(last=False)
        view = dict(drawn)
        record = dict(row.get("record") or {})
        view.update(
            row=row,
            votes=votes,
            alerts=alerts,
            head=head(row, record, drawn["tail"], alerts, now),
            bullets={},
        )
        return view

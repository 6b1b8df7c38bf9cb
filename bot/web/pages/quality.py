"""Quality in the field (admins only): agreement with the analysts by week, the confusion
matrix, agreement by source, auto-resolution's audit per rule, the playbook's effect and
the latest disagreements — the period report (``store.cases.report``) drawn as inline
SVG, no script. A report is kept ``CACHE_S`` seconds per period on each replica: the
page is a dashboard, and the figures of a month barely move in a minute."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from bot.web.pages.site import VIEWER, Web
from store.cases.report import period_report

PERIODS = (7, 30, 90)  # days a viewer may choose
CACHE_S = 60.0


class QualityPage:
    def __init__(self, pages: Web, *, cache_s: float = CACHE_S) -> None:
        self.pages = pages
        self.cache_s = cache_s
        self._reports: dict[int, tuple[float, dict[str, Any]]] = {}

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/quality", self.quality_page)

    async def report(self, days: int) -> dict[str, Any]:
        """The period's report, computed at most once per ``cache_s``."""
        kept = self._reports.get(days)
        if kept is not None and time.monotonic() - kept[0] < self.cache_s:
            return kept[1]
        until = datetime.now(UTC)
        found = await period_report(self.pages.db, until - timedelta(days=days), until)
        self._reports[days] = (time.monotonic(), found)
        return found

    async def quality_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not self.pages.access.is_admin(viewer):
            raise web.HTTPForbidden(text="Quality is for admins.")
        asked = request.query.get("days", "30")
        days = int(asked) if asked in {str(p) for p in PERIODS} else 30
        found = await self.report(days)
        return self.pages.render(
            request,
            "quality.html",
            r=found,
            days=days,
            periods=PERIODS,
            weeks=[(week, t["agreement"]) for week, t in found["by"]["week"].items()],
            charts={
                "source": [(k, t["agreement"]) for k, t in found["by"]["source"].items()],
                "rule": [(k, a["error_rate"]) for k, a in found["auto_resolution"].items()],
            },
            verdicts=_labels(found["confusion"].keys()),
            decisions=_labels(k for row in found["confusion"].values() for k in row),
        )


ORDER = ("true_positive", "false_positive", "benign", "inconclusive", "duplicate")


def _labels(found: Any) -> list[str]:
    """The confusion matrix's labels, in the order people read them."""
    seen = set(found)
    return [x for x in ORDER if x in seen] + sorted(seen - set(ORDER))

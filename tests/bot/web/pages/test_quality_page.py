"""The Quality page over the 200 seeded cases (moved into the last weeks): the figures, the
inline SVG charts, the confusion matrix, the disagreements' links; admins only; hostile
titles escaped."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from core.quality import iso_week
from store.db.engine import Database
from store.schema import CaseRow
from tests.bot.web.pages.test_pages import sign_in
from tests.bot.web.support import ADMIN, signed_in_site
from tests.core.quality_seed import seeded
from tests.store.cases.quality_rows import store

HOSTILE = '<script>alert("case")</script>'


async def recent(db: Database) -> None:
    today = datetime.now(UTC).date()
    weeks = {"2026-W45": iso_week(today - timedelta(days=14)), "2026-W46": iso_week(today)}
    await store(db, [replace(c, week=weeks[c.week]) for c in seeded()])
    async with db.session() as session:
        await session.execute(update(CaseRow).values(title=HOSTILE))


async def test_the_quality_page_shows_the_seeds_figures_to_admins(db: Database) -> None:
    await recent(db)
    async with signed_in_site(db) as site:
        site.openid.members = {"CALERTS1": {"U0BOB001"}}
        async with await sign_in(site, "U0BOB001") as bob:
            async with bob.get(f"{site.url}/web/quality") as r:
                assert r.status == 403  # the figures span every channel
        async with await sign_in(site, ADMIN) as admin:
            async with admin.get(f"{site.url}/web/quality?days=30") as r:
                html = await r.text()
            assert r.status == 200
            async with admin.get(f"{site.url}/web/quality?days=31;drop") as r:
                assert r.status == 200 and "last 30 days" in await r.text()
    assert "81.1 % <small>(142/175;" in html  # agreement
    assert "73.5 % <small>(50/68;" in html  # field TP recall
    assert "86.0 % <small>(92/107;" in html  # FP rejection
    for label in ("agreement by week", "agreement by source", "auto-resolution error rate"):
        assert f'aria-label="{label}' in html
    assert html.count('<line class="whisker"') == 2 + 2 + 1  # weeks, sources, one rule
    assert "<td>20</td><td>15</td><td>20.0 % <small>(3/15;" in html  # auto-fp's audit
    matrix = re.search(r'<table class="usage confusion">.*?</table>', html, re.S)
    assert matrix is not None
    rows = re.findall(r"<tr><th>(\w+)</th>((?:<td>\d+</td>)+)</tr>", matrix.group(0))
    cells = {v: [int(n) for n in re.findall(r"\d+", tds)] for v, tds in rows}
    # columns: true_positive, false_positive, benign, duplicate
    assert cells == {
        "true_positive": [50, 0, 15, 0],
        "false_positive": [13, 60, 0, 10],
        "benign": [0, 0, 32, 0],
        "inconclusive": [5, 0, 0, 0],
    }
    assert html.count('href="/web/investigations/inv-') == 33
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "observational comparison" in html and "learning.holdout_share" in html

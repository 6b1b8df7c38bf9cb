"""The case header on an investigation's page (``case_header.html``): its status, owner
(by name, from Slack), disposition and what socbot missed, escaped; nothing for a run
without a case."""

from __future__ import annotations

import aiohttp

from store.cases import transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import CaseDisposition
from tests.bot.web.support import signed_in_site
from tests.store.cases.case_support import a_case, concluded


async def test_the_case_header(db: Database) -> None:
    case = await a_case(db, "run-case", channel="CSOC00001")
    await concluded(db, "run-bare", alert_id=None)
    hostile = "<script>alert(1)</script> the VPN range"
    resolution = Resolution(CaseDisposition.FALSE_POSITIVE, True, "scanner", hostile)
    await transitions.resolve(db, case.id, "UANA00001", resolution, seen=1, via="cli")
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        site.api.add_user("UANA00001", profile={"display_name": "Ana"})
        async with s.get(f"{site.url}/web/investigations/run-case") as r:
            page = await r.text()
        async with s.get(f"{site.url}/web/investigations/run-bare") as r:
            bare = await r.text()
    assert f"case #{case.id}" in page and "disposition" in page and "escalated" in page
    assert 'owner <span class="name" title="UANA00001">@Ana</span>' in page
    assert "socbot missed: &lt;script&gt;alert(1)&lt;/script&gt; the VPN range" in page
    assert "<script>alert(1)" not in page
    assert 'id="case"' not in bare

"""The cases list page over HTTP, through the front as users reach it: a member sees only
the cases of their channels (the investigation list's rule), each view, the sort order
and its links, keyset pages, hostile titles escaped, the empty state, the nav link."""

from __future__ import annotations

import re

import aiohttp

from store.db.engine import Database
from store.schema import CaseStatus
from tests.bot.web.pages.test_pages import sign_in
from tests.bot.web.support import ADMIN, Site, signed_in_site
from tests.store.cases.listed_rows import Spec, store

ALICE, BOB = "U0ALICE1", "U0BOB001"
MINE, THEIRS = "C0MINE01", "C0THEIR1"
HOSTILE = '<script>alert("case")</script><img src=x onerror=alert(1)>'
ACK = CaseStatus.ACKNOWLEDGED
SPECS = [
    Spec(1, channel=MINE, severity="low", host="web-01"),
    Spec(2, channel=MINE, severity="critical", status=ACK, owner=ALICE, title=HOSTILE),
    Spec(3, channel=MINE, severity="high", status=ACK, owner=BOB, host="db-02"),
    Spec(
        4,
        channel=MINE,
        severity="high",
        status=CaseStatus.RESOLVED,
        owner=ALICE,
        disposition="false_positive",
    ),
    Spec(5, channel=THEIRS, severity="critical", title="Their case"),
    Spec(6, channel=None, severity="critical", title="A terminal case"),
]


def case_ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<a class="case" href="[^"]+">#(\d+)</a>', html)]


async def get(session: aiohttp.ClientSession, site: Site, query: str = "") -> str:
    async with session.get(f"{site.url}/web/cases{query}") as r:
        assert r.status == 200
        return await r.text()


async def test_a_member_sees_the_cases_of_their_channels_in_each_view(db: Database) -> None:
    await store(db, SPECS)
    async with signed_in_site(db) as site:
        site.openid.members = {MINE: {ALICE, BOB}, THEIRS: {BOB}}
        async with await sign_in(site, ALICE) as alice:
            default = await get(alice, site)
            views = {v: await get(alice, site, f"?view={v}") for v in ("mine", "unowned")}
            resolved = await get(alice, site, "?view=resolved")
            oldest = await get(alice, site, "?order=oldest")
            newest = await get(alice, site, "?order=newest&view=open")
            odd = await get(alice, site, "?view=all';--&order=%3Cx%3E")
            async with alice.get(f"{site.url}/web/investigations") as r:
                investigations = await r.text()
        async with await sign_in(site, ADMIN) as admin:
            everything = await get(admin, site)
    assert case_ids(default) == [2, 3, 1]  # all open, most severe first
    assert case_ids(views["mine"]) == [2] and case_ids(views["unowned"]) == [1]
    assert case_ids(resolved) == [4]
    assert case_ids(oldest) == [1, 2, 3] and case_ids(newest) == [3, 2, 1]
    assert case_ids(odd) == case_ids(default)  # an unknown view or order: the default
    assert case_ids(everything) == [2, 5, 6, 3, 1]
    # the same rule as the investigation list: the runs behind the cases Alice sees
    assert sorted(set(re.findall(r'/web/investigations/(run-\d+)"', default + resolved))) == [
        "run-000001",
        "run-000002",
        "run-000003",
        "run-000004",
    ]
    assert sorted(set(re.findall(r'/web/investigations/(run-\d+)"', investigations))) == [
        "run-000001",
        "run-000002",
        "run-000003",
        "run-000004",
    ]
    assert "Their case" not in default + resolved and "A terminal case" not in default
    row = re.search(
        r"<tr>\s*<td[^>]*><a class=\"case\" href=\"/web/investigations/run-000003\".*?</tr>",
        default,
        re.S,
    )
    assert row is not None
    cells = row.group(0)
    assert '<span class="sev s-high">high</span>' in cells
    assert '<span class="st st-acknowledged">acknowledged</span>' in cells
    assert BOB in cells and '<span class="entity">host db-02</span>' in cells
    assert re.search(
        r'<time datetime="2026-11-01T00:03:00\+00:00">2026-11-01 00:03 UTC</time> '
        r'<small class="ago">\d+ d ago</small>',
        cells,
    )
    assert "nobody" in default  # case 1 has no owner
    assert "false positive" in resolved and "Disposition" in resolved
    assert "Disposition" not in default
    assert '<span class="sorted" aria-current="page">Mine</span>' in views["mine"]
    assert '<a href="/web/cases">Cases</a>' in default  # in the site's navigation
    assert "<script>alert" not in default and "<img src=x" not in default
    assert "&lt;script&gt;alert(&#34;case&#34;)&lt;/script&gt;&lt;img src=x" in default


async def test_pages_and_the_empty_state(db: Database) -> None:
    await store(db, [Spec(k, channel=MINE, severity="medium") for k in range(1, 121)])
    async with signed_in_site(db) as site:
        site.openid.members = {MINE: {ALICE}}
        async with await sign_in(site, ALICE) as alice:
            seen: list[int] = []
            query = "?order=newest"
            while True:
                html = await get(alice, site, query)
                seen += case_ids(html)
                found = re.search(r'<a id="older" href="/web/cases(\?[^"]+)">', html)
                if found is None:
                    break
                query = found.group(1).replace("&amp;", "&")
                assert "First page" in html or len(seen) == 50
            empty = await get(alice, site, "?view=mine")
            resolved = await get(alice, site, "?view=resolved")
        async with await sign_in(site, BOB) as bob:  # in no channel
            nothing = await get(bob, site)
    assert seen == list(range(120, 0, -1))
    assert case_ids(empty) == [] and "none of the open cases is yours" in empty
    assert case_ids(resolved) == [] and "No cases to show." in resolved
    assert case_ids(nothing) == [] and "No cases to show." in nothing

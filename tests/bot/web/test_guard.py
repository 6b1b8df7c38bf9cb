"""The guard in front of every ``/web/`` route, over HTTP: which methods need the CSRF
token, where it is read (the ``X-CSRF-Token`` header first, then the form), which
Origin a state-changing request must come from (the configured base URL behind
sign-in, the address asked for on the local pages, whatever Host says), and what a
refused request is told."""

from __future__ import annotations

import re

import aiohttp
from yarl import URL

from store.db.engine import Database
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from tests.bot.web.pages.test_pages import sign_in
from tests.bot.web.support import Site, signed_in_site

REFUSED = "Cross-site request refused."


async def csrf_of(session: aiohttp.ClientSession, site: Site) -> str:
    """The token of the page's forms (a proposal's on the local pages, sign-out's else)."""
    if site.pages.signin is None:
        await PlaybookStore(site.pages.db).add(PlaybookBullet(id="pb-1", content="Check VPNs"))
    page = "/web/playbook" if site.pages.signin is None else "/web/investigations"
    async with session.get(f"{site.url}{page}") as r:
        found = re.search(r'name="csrf" value="([^"]+)"', await r.text())
    assert found is not None
    return found.group(1)


async def test_the_token_is_read_from_the_header_before_the_form(db: Database) -> None:
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        token = await csrf_of(s, site)
        signout = f"{site.url}/web/signout"
        async with s.post(signout, headers={"X-CSRF-Token": "forged"}, data={"csrf": token}) as r:
            assert (r.status, await r.text()) == (403, REFUSED)
        async with s.post(signout, data={"csrf": "forged"}) as r:
            assert (r.status, await r.text()) == (403, REFUSED)
        async with s.post(
            signout, headers={"X-CSRF-Token": token}, data={"other": "x"}, allow_redirects=False
        ) as r:
            assert r.status == 302 and r.headers["Location"] == "/web/signin"
        async with s.post(signout, json={"csrf": token}) as r:  # not a form: header only
            assert (r.status, await r.text()) == (403, REFUSED)


async def test_reads_need_no_token_and_other_methods_do(db: Database) -> None:
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        async with s.head(f"{site.url}/web/investigations") as r:
            assert r.status == 200
        async with s.options(f"{site.url}/web/signout") as r:
            assert r.status == 405  # not refused by the guard: no such route
        async with s.delete(f"{site.url}/web/signout") as r:
            assert (r.status, await r.text()) == (403, REFUSED)


async def test_local_pages_take_the_origin_of_the_address_asked_for(db: Database) -> None:
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        token = await csrf_of(s, site)
        port = URL(site.url).port
        as_localhost = {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
        async with s.post(
            f"{site.url}/web/signout",
            headers={**as_localhost, "X-CSRF-Token": token},
            allow_redirects=False,
        ) as r:
            assert r.status == 302


async def test_behind_sign_in_the_origin_is_the_base_url_whatever_host_says(
    db: Database,
) -> None:
    async with signed_in_site(db) as site:
        site.openid.members = {}
        async with await sign_in(site, "U0ALICE1") as alice:
            token = await csrf_of(alice, site)
            forged = {"Host": "evil.example", "Origin": "http://evil.example"}
            signout = f"{site.url}/web/signout"
            async with alice.post(signout, headers={**forged, "X-CSRF-Token": token}) as r:
                assert (r.status, await r.text()) == (403, REFUSED)
            async with alice.post(
                signout,
                headers={"Origin": site.url, "X-CSRF-Token": token},
                allow_redirects=False,
            ) as r:
                assert r.status == 302


async def test_signed_out_api_calls_are_told_to_sign_in(db: Database) -> None:
    async with signed_in_site(db) as site, aiohttp.ClientSession() as anon:
        async with anon.get(f"{site.url}/web/api/investigations") as r:
            assert (r.status, await r.text()) == (401, "Sign in first.")
        async with anon.post(f"{site.url}/web/signout") as r:
            assert (r.status, await r.text()) == (401, "Sign in first.")

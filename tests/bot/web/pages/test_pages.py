"""The pages over HTTP (no browser): sign-in checks, access by channel, headers, CSRF, list."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp
import pytest
from typer.testing import CliRunner
from yarl import URL

from alerts.parse import parse_alert
from bench.loopback import free_port
from bot.web.auth.session import Signer
from cli.main import app as cli_app
from store.db.engine import Database
from store.investigations.browse import BrowseStore, Filters, Visibility
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookBullet, PlaybookStore
from store.triage.alerts import AlertStore
from tests.bot.web.seed import seed
from tests.bot.web.support import ADMIN, Site, signed_in_site
from tests.cli.test_cli import ALERTS


def jar(site: Site) -> aiohttp.CookieJar:
    """A cookie jar that, like a browser, sends Secure cookies to http://127.0.0.1."""
    return aiohttp.CookieJar(unsafe=True, treat_as_secure_origin=[site.url])


def carrying(site: Site, session_cookie: str) -> aiohttp.ClientSession:
    """A client that sends ``session_cookie`` to ``site`` (as a browser would)."""
    session = aiohttp.ClientSession(cookie_jar=jar(site))
    session.cookie_jar.update_cookies({"socbot_session": session_cookie}, URL(site.url))
    return session


async def sign_in(site: Site, user: str) -> aiohttp.ClientSession:
    """A client session signed in as ``user`` through the fake provider."""
    site.openid.user = user
    session = aiohttp.ClientSession(cookie_jar=jar(site))
    async with session.get(f"{site.url}/web/auth/start?next=/web/investigations") as r:
        assert r.status == 200 and r.url.path == "/web/investigations"
    return session


async def test_a_member_sees_their_channel_and_not_another(db: Database) -> None:
    mine = await seed(db, channel="C0MINE01", text="mine-185.220.101.42")
    theirs = await seed(db, channel="C0THEIR1", text="theirs-10.0.0.1")
    terminal = await seed(db, channel=None, text="terminal-run")
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}, "C0THEIR1": {"U0BOB001"}}
        async with await sign_in(site, "U0ALICE1") as alice:
            async with alice.get(f"{site.url}/web/investigations") as r:
                html = await r.text()
            assert mine in html and theirs not in html and terminal not in html
            for other in (theirs, terminal, "0" * 32):  # IDOR: refused like an unknown id
                for path in ("", "/body", "/calls/1", "/calls/3"):
                    async with alice.get(f"{site.url}/web/investigations/{other}{path}") as r:
                        assert r.status == 404
                async with alice.get(f"{site.url}/web/api/investigations/{other}/events") as r:
                    assert r.status == 404
            async with alice.get(f"{site.url}/web/investigations/{mine}") as r:
                assert r.status == 200 and "mine-185.220.101.42" in await r.text()
            theirs_call = next(
                e["seq"]
                for e in await InvestigationStore(db).trace(theirs)
                if e["type"] == "tool_called"
            )  # another run's tool call, asked for under my run's id
            async with alice.get(f"{site.url}/web/investigations/{mine}/calls/{theirs_call}") as r:
                assert r.status == 404
        async with await sign_in(site, ADMIN) as admin:
            async with admin.get(f"{site.url}/web/investigations") as r:
                html = await r.text()
            assert mine in html and theirs in html and terminal in html


async def test_signed_out_is_sent_to_sign_in_and_api_gets_401(db: Database) -> None:
    async with signed_in_site(db) as site, aiohttp.ClientSession() as anon:
        async with anon.get(f"{site.url}/web/investigations?q=x", allow_redirects=False) as r:
            assert r.status == 302
            assert r.headers["Location"] == "/web/signin?next=/web/investigations%3Fq%3Dx"
        async with anon.get(f"{site.url}/web/api/investigations") as r:
            assert r.status == 401
        async with anon.get(f"{site.url}/web/signin") as r:
            headers = r.headers
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert "'unsafe-inline'" not in headers["Content-Security-Policy"]
        assert headers["Referrer-Policy"] == "same-origin"  # nothing to other sites
        assert headers["X-Frame-Options"] == "DENY"


async def test_sign_in_from_another_workspace_or_with_a_forged_state_is_refused(
    db: Database,
) -> None:
    async with signed_in_site(db) as site:
        site.openid.team = "T0OTHER1"
        async with aiohttp.ClientSession(cookie_jar=jar(site)) as s:
            async with s.get(f"{site.url}/web/auth/start") as r:
                assert r.status == 403
            async with s.get(f"{site.url}/web/investigations", allow_redirects=False) as r:
                assert r.status == 302  # no session was made
        site.openid.team = site.api.team_id
        async with aiohttp.ClientSession(cookie_jar=jar(site)) as s:
            async with s.get(f"{site.url}/web/auth/start", allow_redirects=False) as r:
                location = r.headers["Location"]
            async with s.get(re.sub(r"state=[^&]+", "state=forged", location)) as r:
                assert r.status == 403


async def test_session_cookie_attributes_and_tampering(db: Database) -> None:
    async with signed_in_site(db) as site:
        site.openid.user = ADMIN
        async with aiohttp.ClientSession(cookie_jar=jar(site)) as s:
            async with s.get(f"{site.url}/web/auth/start", allow_redirects=False) as r:
                start = r
            async with s.get(start.headers["Location"], allow_redirects=False) as r:
                back = r.headers["Location"]
            async with s.get(back, allow_redirects=False) as r:
                cookie = r.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Lax" in cookie
            value = r.cookies["socbot_session"].value
        forged = value.replace(value[5], "A" if value[5] != "A" else "B", 1)
        for cookie, status in ((value, 200), (forged, 302)):  # the same cookie, one bit off
            async with carrying(site, cookie) as s:
                async with s.get(f"{site.url}/web/investigations", allow_redirects=False) as r:
                    assert r.status == status


def test_signer_refuses_expired_and_tampered_values() -> None:
    now = [1000.0]
    signer = Signer(b"k" * 32, clock=lambda: now[0])
    token = signer.sign({"u": "U1"}, 60)
    assert signer.read(token) == {"u": "U1", "exp": 1060}
    assert signer.read(token[:-2] + "xx") is None
    now[0] = 1061
    assert signer.read(token) is None
    assert signer.check_csrf("sid", signer.csrf_token("sid"))
    assert not signer.check_csrf("sid", signer.csrf_token("other"))


async def test_list_pages_by_keyset_and_filters(db: Database) -> None:
    ids = [await seed(db, channel="C0MINE01", text=f"host-{i}", steps=1) for i in range(7)]
    other = await seed(db, channel="C0THEIR1", text="needle.example.com", steps=1)
    browse = BrowseStore(db)
    everyone = Visibility(channels=None, terminal=True)
    seen, cursor = [], None
    while True:
        page = await browse.page(Filters(), everyone, cursor=cursor, size=3)
        seen += [r.id for r in page.rows]
        if not (cursor := page.next_cursor):
            break
    assert seen == [other, *reversed(ids)]  # newest first, each once
    found = await browse.page(Filters(text="NEEDLE.example"), everyone, cursor=None)
    assert [r.id for r in found.rows] == [other]
    in_channel = await browse.page(Filters(channel="C0THEIR1"), everyone, cursor=None)
    assert [r.id for r in in_channel.rows] == [other]
    high = await browse.page(Filters(severity="high", source="scc"), everyone, cursor=None)
    assert len(high.rows) == 8
    assert not (await browse.page(Filters(verdict="benign"), everyone, cursor=None)).rows
    members = Visibility(channels=frozenset({"C0MINE01"}), terminal=False)
    assert other not in [r.id for r in (await browse.page(Filters(), members, cursor=None)).rows]
    wild = await browse.page(Filters(text="%"), everyone, cursor=None)  # LIKE is escaped
    assert not wild.rows


def test_web_refuses_another_address_without_sign_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOCBOT_DATABASE_URL", "sqlite+aiosqlite:///./var/x.db")
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_app, ["web", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "refusing to serve the pages on '0.0.0.0' without sign-in" in result.output


async def store_alert(db: Database, channel: str | None, investigation_id: str) -> str:
    """A real GuardDuty finding (tests/fixtures/alerts), its title made hostile (edited)."""
    data = json.loads((ALERTS / "leveret-guardduty.json").read_text())
    data["Findings"][0]["Title"] = "<script>alert(1)</script> <!channel> " + "Z" * 10_000
    alert = parse_alert(data, "guardduty")
    await AlertStore(db).save(alert, investigation_id=investigation_id, slack_channel=channel)
    return alert.id


async def test_alert_page_shows_the_parsed_alert_to_its_channel_only(db: Database) -> None:
    investigation = await seed(db, channel="C0MINE01", steps=1)
    alert_id = await store_alert(db, "C0MINE01", investigation)
    async with signed_in_site(db) as site:
        site.openid.members = {"C0MINE01": {"U0ALICE1"}}
        async with await sign_in(site, "U0ALICE1") as alice:
            async with alice.get(f"{site.url}/web/investigations/{investigation}") as r:
                assert f"/web/alerts/{alert_id}" in await r.text()
            async with alice.get(f"{site.url}/web/alerts/{alert_id}") as r:
                html = await r.text()
            assert r.status == 200 and "guardduty" in html
            assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
            assert "<td>ip</td>" in html  # the entities table
        async with await sign_in(site, "U0BOB001") as bob:
            async with bob.get(f"{site.url}/web/alerts/{alert_id}") as r:
                assert r.status == 404
            async with bob.get(f"{site.url}/web/usage") as r:
                assert r.status == 403  # usage is for admins
            async with bob.get(f"{site.url}/web/playbook") as r:
                assert r.status == 403
        async with await sign_in(site, ADMIN) as admin:
            async with admin.get(f"{site.url}/web/usage") as r:
                html = await r.text()
            assert r.status == 200 and "planner" in html and "scc" in html
            assert html.count('aria-label="cost by ') == 4  # day, source, channel, stage
            assert '<rect class="bar"' in html


async def test_local_pages_need_no_sign_in_but_refuse_foreign_posts(db: Database) -> None:
    terminal = await seed(db, channel=None, text="terminal-run", steps=1)
    await PlaybookStore(db).add(PlaybookBullet(id="pb-local", content="Check the VPN ranges"))
    async with signed_in_site(db, local=True) as site, aiohttp.ClientSession() as s:
        async with s.get(f"{site.url}/web/investigations") as r:
            assert r.status == 200 and terminal in await r.text()
        async with s.get(f"{site.url}/web/auth/start", allow_redirects=False) as r:
            assert r.status == 404  # no sign-in routes at all
        async with s.get(f"{site.url}/web/playbook") as r:
            token = re.search(r'name="csrf" value="([^"]+)"', await r.text())
        assert token is not None
        url = f"{site.url}/web/playbook/pb-local/decide"
        form = {"csrf": token.group(1), "decision": "approve"}
        async with s.post(url, data=form, headers={"Origin": "https://evil.example"}) as r:
            assert r.status == 403
        async with s.post(url, data={"decision": "approve"}) as r:
            assert r.status == 403
        async with s.post(url, data=form, allow_redirects=False) as r:
            assert r.status == 302
        assert (await PlaybookStore(db).get("pb-local")).status == "active"  # type: ignore[union-attr]


async def test_socbot_web_serves_the_local_pages_until_stopped(tmp_path: Path) -> None:
    """The command as a user runs it: a real process on 127.0.0.1, stopped with SIGTERM."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'var' / 'socbot.db'}"
    db = Database(url)
    await db.create()
    shown = await seed(db, channel="C0MINE01", text="from-the-terminal", steps=1)
    await db.close()
    port = free_port()
    env = {**os.environ, "SOCBOT_DATABASE_URL": url}
    env.pop("SOCBOT_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from cli.main import run; run()",
        "web",
        "--port",
        str(port),
        cwd=tmp_path,
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        while b"socbot pages on" not in (line := await process.stderr.readline()):
            assert line, "socbot web ended before serving"
        async with (
            aiohttp.ClientSession() as s,
            s.get(f"http://127.0.0.1:{port}/web/investigations") as r,
        ):
            assert r.status == 200 and shown in await r.text()
    finally:
        process.send_signal(signal.SIGTERM)
        assert await process.wait() == 0


async def test_a_session_outlives_a_restart_of_the_server(db: Database) -> None:
    async with signed_in_site(db) as first, await sign_in(first, ADMIN) as session:
        value = session.cookie_jar.filter_cookies(URL(first.url))["socbot_session"].value
    async with signed_in_site(db) as second, carrying(second, value) as s:  # a new process
        async with s.get(f"{second.url}/web/investigations", allow_redirects=False) as r:
            assert r.status == 200

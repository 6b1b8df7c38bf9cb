"""Sign in with Slack as an operator serves it and a browser goes through it: a real
``socbot serve --mode http`` (the app behind its acknowledging front process), a client
that keeps cookies and follows nothing by itself, the fake Slack and OpenID provider on
loopback. Each redirect and cookie of the flow is checked where the browser gets it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bench.bench_slack import free_port
from tests.fakes.slack_openid import FakeSlackOpenID
from tests.serve_cluster import Cluster
from tests.serve_scenario import script, settings_toml

USER = "U0ALICE1"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Cluster, str]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    cluster = Cluster(url, tmp_path, script(), settings_toml(limit=1, lease_s=4, poll_s=0.5))
    openid = FakeSlackOpenID(cluster.slack, user=USER)
    cluster.run(openid.__aenter__())
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cluster.env_extra.update(
        SOCBOT_WEB__BASE_URL=base,
        SOCBOT_WEB__CLIENT_ID="1234.5678",
        SOCBOT_WEB__CLIENT_SECRET="client-secret-for-tests",
        SOCBOT_WEB__SESSION_SECRET="s" * 40,
        SOCBOT_WEB__AUTHORIZE_URL=openid.authorize_url,
    )
    try:
        cluster.ready(cluster.spawn(port))
        yield cluster, base
    finally:
        cluster.run(openid.__aexit__(None, None, None))
        cluster.close()


async def test_the_whole_sign_in_through_socbot_serve(served: tuple[Cluster, str]) -> None:
    _cluster, base = served
    jar = aiohttp.CookieJar(unsafe=True, treat_as_secure_origin=[base])  # a browser's
    async with aiohttp.ClientSession(cookie_jar=jar) as browser:

        async def get(url: str) -> aiohttp.ClientResponse:
            async with browser.get(url, allow_redirects=False) as answer:
                await answer.read()
                return answer

        # the guard sends a stranger to the sign-in page, at the address asked for
        guarded = await get(f"{base}/web/investigations?q=x")
        assert guarded.status == 302
        assert guarded.headers["Location"] == "/web/signin?next=/web/investigations%3Fq%3Dx"
        # sign-in starts: off to Slack's authorize page, with the state cookie
        start = await get(f"{base}/web/auth/start?next=/web/investigations")
        assert start.status == 302
        assert start.headers["Location"].startswith(_authorize(served))
        assert "socbot_signin" in start.cookies
        # Slack sends the browser back to the callback on the public address
        back = await get(start.headers["Location"])
        assert back.status == 302 and back.headers["Location"].startswith(
            f"{base}/web/auth/callback?"
        )
        # the callback signs in: the session cookie, the state cookie cleared
        callback = await get(back.headers["Location"])
        assert callback.status == 302 and callback.headers["Location"] == "/web/investigations"
        cookies = callback.headers.getall("Set-Cookie")
        session = next(c for c in cookies if c.startswith("socbot_session="))
        assert "HttpOnly" in session and "Secure" in session and "SameSite=Lax" in session
        assert any(c.startswith("socbot_signin=") for c in cookies)
        # signed in: the page itself
        page = await get(f"{base}/web/investigations")
        assert page.status == 200
        async with browser.get(f"{base}/web/investigations") as answer:
            token = re.search(r'name="csrf" value="([^"]+)"', await answer.text())
        assert token is not None
        # signing out ends the session
        async with browser.post(
            f"{base}/web/signout",
            data={"csrf": token.group(1)},
            headers={"Origin": base},
            allow_redirects=False,
        ) as out:
            assert out.status == 302 and out.headers["Location"] == "/web/signin"
        assert (await get(f"{base}/web/investigations")).status == 302


def _authorize(served: tuple[Cluster, str]) -> str:
    cluster, _ = served
    return cluster.env_extra["SOCBOT_WEB__AUTHORIZE_URL"]

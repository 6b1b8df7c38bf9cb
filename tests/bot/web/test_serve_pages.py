"""``socbot serve``'s one server carries the pages when Sign in with Slack is configured."""

from __future__ import annotations

from pathlib import Path

from tests.bot.web.seed import seed
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, make_settings


async def test_serve_adds_the_pages_behind_sign_in(tmp_path: Path, fake: FakeSlackAPI) -> None:
    settings = make_settings(tmp_path, fake.base_url)
    settings.web = settings.web.model_validate(
        {
            "base_url": "https://socbot.example.com",
            "client_id": "1234.5678",
            "client_secret": "client-secret-for-tests",
            "session_secret": "s" * 40,
        }
    )
    async with SlackHarness(fake, settings, RecordingInvestigate(fake)) as h:
        investigation = await seed(h.db, channel="C0MINE01", steps=1)
        http = h.client
        page = await http.get(f"/web/investigations/{investigation}", allow_redirects=False)
        assert page.status == 302 and page.headers["Location"].startswith("/web/signin")
        signin = await http.get("/web/signin")
        assert signin.status == 200 and "Sign in with Slack" in await signin.text()
        assert "Content-Security-Policy" in signin.headers
        health = await http.get("/healthz")  # the rest of the server is as it was
        assert health.status == 200 and "Content-Security-Policy" not in health.headers


async def test_serve_without_sign_in_serves_no_pages(tmp_path: Path, fake: FakeSlackAPI) -> None:
    settings = make_settings(tmp_path, fake.base_url)
    async with SlackHarness(fake, settings, RecordingInvestigate(fake)) as h:
        assert (await h.client.get("/web/investigations")).status == 404
        assert (await h.client.get("/healthz")).status == 200

"""The sign-in callback alone, against the fake Slack Web API: the session lasts exactly
``web.session_hours`` (the cookie's Max-Age and the signed expiry), and the ID token is
refused without the nonce the start gave, or when the workspace cannot be checked
(``web.team_id`` unset and ``auth.test`` failing): no session either way."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from http.cookies import SimpleCookie
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.session import SESSION_COOKIE, SIGNIN_COOKIE, Signer
from bot.web.auth.signin import SIGNIN_TTL_S, TEAM_CLAIM, USER_CLAIM, SignIn
from config.web_settings import WebSettings
from tests.fakes.slack_api import TEAM_ID, FakeSlackAPI

NOW = 1_800_000_000.0
NONCE = "nonce-from-the-start"
CLIENT_ID = "1234.5678"


def _part(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def claims(**changes: Any) -> dict[str, Any]:
    """A good ID token's claims; ``None`` drops one."""
    good = {
        "aud": CLIENT_ID,
        "nonce": NONCE,
        "name": "Alice Analyst",
        USER_CLAIM: "U0ALICE1",
        TEAM_CLAIM: TEAM_ID,
    }
    return {k: v for k, v in (good | changes).items() if v is not None}


@pytest.fixture
async def api() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


def answer_with(api: FakeSlackAPI, token_claims: dict[str, Any]) -> None:
    token = f"{_part({'alg': 'RS256'})}.{_part(token_claims)}.ZmFrZQ"
    api.set_handler("openid.connect.token", lambda _call: {"ok": True, "id_token": token})


def signin(api: FakeSlackAPI, *, team: str | None = TEAM_ID, hours: float = 5.0) -> SignIn:
    settings = WebSettings(
        base_url="https://socbot.example",
        client_id=CLIENT_ID,
        client_secret="client-secret-for-tests",
        session_secret="s" * 40,
        session_hours=hours,
        team_id=team,
    )
    signer = Signer(b"s" * 40, clock=lambda: NOW)
    return SignIn(settings, signer, AsyncWebClient(token="xoxb-test", base_url=api.base_url), team)


async def call_back(pages: SignIn) -> web.Response:
    pending = pages.signer.sign({"state": "st", "nonce": NONCE, "next": "/web/x"}, SIGNIN_TTL_S)
    request = make_mocked_request(
        "GET",
        "/web/auth/callback?code=the-code&state=st",
        headers={"Cookie": f"{SIGNIN_COOKIE}={pending}"},
    )
    return await pages.callback(request)


def session_cookie(response: web.Response) -> Any:
    cookie: SimpleCookie = response.cookies
    return cookie[SESSION_COOKIE]


@pytest.mark.parametrize("hours", [5.0, 0.5, 12.0])
async def test_the_session_lasts_exactly_session_hours(api: FakeSlackAPI, hours: float) -> None:
    answer_with(api, claims())
    pages = signin(api, hours=hours)
    response = await call_back(pages)
    assert (response.status, response.headers["Location"]) == (302, "/web/x")
    morsel = session_cookie(response)
    assert morsel["max-age"] == str(int(hours * 3600))
    assert (morsel["path"], morsel["httponly"], morsel["secure"]) == ("/", True, True)
    session = pages.signer.read(morsel.value)
    assert session is not None
    assert session["exp"] == int(NOW + hours * 3600)
    assert (session["u"], session["t"], session["n"]) == ("U0ALICE1", TEAM_ID, "Alice Analyst")


def test_a_signed_session_ends_at_its_expiry() -> None:
    clock = [NOW]
    signer = Signer(b"k" * 32, clock=lambda: clock[0])
    token = signer.sign({"u": "U0ALICE1"}, 5 * 3600)
    clock[0] = NOW + 5 * 3600 - 1
    assert signer.read(token) == {"u": "U0ALICE1", "exp": int(NOW) + 5 * 3600}
    clock[0] = NOW + 5 * 3600
    assert signer.read(token) is None


@pytest.mark.parametrize(
    "token_claims",
    [
        pytest.param(claims(nonce=None), id="no-nonce"),
        pytest.param(claims(nonce="another"), id="another-nonce"),
        pytest.param(claims(nonce=""), id="empty-nonce"),
        pytest.param(claims(aud="9999.1"), id="another-app"),
        pytest.param(claims(**{TEAM_CLAIM: "T0OTHER1"}), id="another-workspace"),
        pytest.param(claims(**{USER_CLAIM: None}), id="no-user"),
    ],
)
async def test_an_untrusted_id_token_signs_nobody_in(
    api: FakeSlackAPI, token_claims: dict[str, Any]
) -> None:
    answer_with(api, token_claims)
    with pytest.raises(web.HTTPForbidden):
        await call_back(signin(api))


async def test_the_workspace_check_fails_closed_when_auth_test_fails(api: FakeSlackAPI) -> None:
    answer_with(api, claims())
    api.fail_next("auth.test", error="invalid_auth")
    pages = signin(api, team=None)
    with pytest.raises(web.HTTPForbidden):
        await call_back(pages)
    assert len(api.calls_to("auth.test")) == 1 and pages.team is None
    # once auth.test answers, the bot token's workspace is the one checked
    response = await call_back(pages)
    assert session_cookie(response).value and pages.team == TEAM_ID


async def test_without_team_id_the_bot_tokens_workspace_is_required(api: FakeSlackAPI) -> None:
    answer_with(api, claims(**{TEAM_CLAIM: "T0OTHER1"}))
    with pytest.raises(web.HTTPForbidden):
        await call_back(signin(api, team=None))
    assert len(api.calls_to("auth.test")) == 1

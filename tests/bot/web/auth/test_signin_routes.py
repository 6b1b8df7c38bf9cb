"""Sign in with Slack, route by route, against the fake Slack Web API: the authorize URL
and the short-lived sign-in cookie the start sets, what the callback refuses before it
asks Slack anything, the exact token exchange, and the session it writes."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.session import SESSION_COOKIE, SIGNIN_COOKIE
from bot.web.auth.signin import (
    SIGNIN_TTL_S,
    TEAM_CLAIM,
    USER_CLAIM,
    SignIn,
    SignInRefused,
    id_token_claims,
    safe_next,
)
from config.web_settings import WebSettings
from tests.bot.web.auth.test_signin_callback import (
    CLIENT_ID,
    NONCE,
    NOW,
    _part,
    answer_with,
    api,
    call_back,
    claims,
    signin,
)
from tests.fakes.slack_api import TEAM_ID, FakeSlackAPI

__all__ = ["api"]  # the fixture, shared with the callback's tests


async def start(pages: SignIn, query: str = "") -> web.Response:
    return await pages.start(make_mocked_request("GET", f"/web/auth/start{query}"))


def location(response: web.Response) -> tuple[str, dict[str, list[str]]]:
    url = urlsplit(response.headers["Location"])
    return f"{url.scheme}://{url.netloc}{url.path}", parse_qs(url.query)


async def test_the_start_sends_the_browser_to_slacks_authorize_page(api: FakeSlackAPI) -> None:
    pages = signin(api)
    response = await start(pages, "?next=/web/investigations/abc")
    assert response.status == 302
    where, query = location(response)
    assert where == "https://slack.com/openid/connect/authorize"
    assert query["response_type"] == ["code"]
    assert query["scope"] == ["openid,profile"]  # as slack_sdk joins them
    assert query["client_id"] == [CLIENT_ID]
    assert query["redirect_uri"] == ["https://socbot.example/web/auth/callback"]
    assert query["team"] == [TEAM_ID]
    morsel = response.cookies[SIGNIN_COOKIE]
    assert morsel["max-age"] == str(SIGNIN_TTL_S) == "600"
    assert (morsel["path"], morsel["httponly"], morsel["secure"]) == ("/web/auth/", True, True)
    assert morsel["samesite"] == "Lax"
    pending = pages.signer.read(morsel.value)
    assert pending == {
        "state": query["state"][0],
        "nonce": query["nonce"][0],
        "next": "/web/investigations/abc",
        "exp": int(NOW + SIGNIN_TTL_S),
    }
    # 24 random bytes each (192 bits), base64url: 32 characters
    assert len(pending["state"]) == len(pending["nonce"]) == 32
    assert pending["state"] != pending["nonce"]
    assert api.calls_to("auth.test") == []  # web.team_id is set: nothing to ask


async def test_each_start_draws_a_fresh_state_and_nonce(api: FakeSlackAPI) -> None:
    pages = signin(api)
    first, second = [location(await start(pages))[1] for _ in range(2)]
    assert first["state"] != second["state"] and first["nonce"] != second["nonce"]


async def test_the_start_returns_only_to_our_own_pages(api: FakeSlackAPI) -> None:
    pages = signin(api)
    response = await start(pages, "?next=//evil.example/web/x")
    pending = pages.signer.read(response.cookies[SIGNIN_COOKIE].value)
    assert pending is not None and pending["next"] == "/web/investigations"


async def test_without_a_workspace_the_start_names_none(api: FakeSlackAPI) -> None:
    api.fail_next("auth.test", error="invalid_auth")
    pages = signin(api, team=None)
    _, query = location(await start(pages))
    assert "team" not in query and pages.team is None
    _, query = location(await start(pages))  # auth.test answers now: its workspace, kept
    assert query["team"] == [TEAM_ID] and pages.team == TEAM_ID
    await start(pages)
    assert len(api.calls_to("auth.test")) == 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/web/alerts/1", "/web/alerts/1"),
        ("/web/", "/web/"),
        (None, "/web/investigations"),
        ("", "/web/investigations"),
        ("/web//evil.example", "/web/investigations"),
        ("/web/\\evil.example", "/web/investigations"),
        ("https://evil.example/web/", "/web/investigations"),
        ("/metrics", "/web/investigations"),
        ("/we/b", "/web/investigations"),
    ],
)
def test_safe_next(value: str | None, expected: str) -> None:
    assert safe_next(value) == expected


@pytest.mark.parametrize(
    "token",
    ["", "no-dots", "a.%%%.c", f"a.{_part({'x': 1})[:-2]}!.c", "a.WzEsMl0.c", "a.bnVsbA.c"],
    ids=["empty", "one-part", "not-base64", "bad-json", "a-list", "null"],
)
def test_an_unreadable_id_token_is_refused(token: str) -> None:
    with pytest.raises(SignInRefused, match=r"^unreadable ID token$"):
        id_token_claims(token)


def test_id_token_claims_read_unpadded_base64url() -> None:
    value = {"name": "Zoë ~~~???", "n": 1}  # ~ and ? give - and _ in base64url
    for extra in ("", "a", "ab"):  # every padding length
        body = value | {"pad": extra}
        assert id_token_claims(f"h.{_part(body)}.s") == body


def callback_request(pages: SignIn, query: str, pending: dict[str, Any] | None) -> web.Request:
    headers = {}
    if pending is not None:
        headers["Cookie"] = f"{SIGNIN_COOKIE}={pages.signer.sign(pending, SIGNIN_TTL_S)}"
    return make_mocked_request("GET", f"/web/auth/callback{query}", headers=headers)


@pytest.mark.parametrize(
    ("query", "pending"),
    [
        ("?code=c&state=st", None),
        ("?code=c&state=other", {"state": "st", "nonce": NONCE}),
        ("?code=c", {"state": "st", "nonce": NONCE}),
        ("?state=st", {"state": "st", "nonce": NONCE}),
        ("?code=&state=st", {"state": "st", "nonce": NONCE}),
    ],
    ids=["no-cookie", "state-differs", "no-state", "no-code", "empty-code"],
)
async def test_the_callback_refuses_before_asking_slack(
    api: FakeSlackAPI, query: str, pending: dict[str, Any] | None
) -> None:
    answer_with(api, claims())
    pages = signin(api)
    with pytest.raises(web.HTTPForbidden) as refused:
        await pages.callback(callback_request(pages, query, pending))
    assert refused.value.text == "Sign-in refused."
    assert api.calls_to("openid.connect.token") == []


@pytest.mark.parametrize(
    ("query", "pending", "token_claims", "reason"),
    [
        ("?code=c&state=st", None, claims(), "state does not match"),
        ("?state=st", {"state": "st", "nonce": NONCE}, claims(), "no code"),
        (
            "?code=c&state=st",
            {"state": "st", "nonce": NONCE},
            claims(nonce="x"),
            "nonce does not match",
        ),
        (
            "?code=c&state=st",
            {"state": "st", "nonce": NONCE},
            claims(aud="1.2"),
            "ID token is for another app",
        ),
        (
            "?code=c&state=st",
            {"state": "st", "nonce": NONCE},
            claims(**{TEAM_CLAIM: "T9"}),
            "another workspace",
        ),
        (
            "?code=c&state=st",
            {"state": "st", "nonce": NONCE},
            claims(**{USER_CLAIM: ""}),
            "no user in the ID token",
        ),
        (
            "?code=c&state=st",
            {"state": "st", "nonce": NONCE},
            None,
            "token exchange failed: invalid_code",
        ),
    ],
    ids=["state", "code", "nonce", "audience", "workspace", "user", "exchange"],
)
async def test_each_refusal_is_logged_with_its_reason(
    api: FakeSlackAPI,
    caplog: pytest.LogCaptureFixture,
    query: str,
    pending: dict[str, Any] | None,
    token_claims: dict[str, Any] | None,
    reason: str,
) -> None:
    """The operator reads why a sign-in failed; the browser only learns that it did."""
    if token_claims is None:
        api.fail_next("openid.connect.token", error="invalid_code")
    else:
        answer_with(api, token_claims)
    pages = signin(api)
    with caplog.at_level(logging.INFO, logger="bot.web.auth.signin"):
        with pytest.raises(web.HTTPForbidden) as refused:
            await pages.callback(callback_request(pages, query, pending))
    assert refused.value.text == "Sign-in refused."
    assert [r.getMessage() for r in caplog.records] == [f"sign-in refused: {reason}"]


async def test_the_code_is_swapped_with_the_apps_credentials_only(api: FakeSlackAPI) -> None:
    answer_with(api, claims())
    await call_back(signin(api))
    [exchange] = api.calls_to("openid.connect.token")
    assert exchange.args == {
        "client_id": CLIENT_ID,
        "client_secret": "client-secret-for-tests",
        "code": "the-code",
        "redirect_uri": "https://socbot.example/web/auth/callback",
    }
    assert exchange.token is None  # never the bot token


async def test_a_failed_token_exchange_signs_nobody_in(api: FakeSlackAPI) -> None:
    api.fail_next("openid.connect.token", error="invalid_code")
    with pytest.raises(web.HTTPForbidden):
        await call_back(signin(api))


async def test_the_session_names_the_person_and_forgets_the_sign_in(api: FakeSlackAPI) -> None:
    answer_with(api, claims(name="A" * 200))
    pages = signin(api)
    first = await call_back(pages)
    session = pages.signer.read(first.cookies[SESSION_COOKIE].value)
    assert session is not None and session["n"] == "A" * 80
    gone = first.cookies[SIGNIN_COOKIE]
    assert (gone.value, gone["path"], gone["max-age"]) == ("", "/web/auth/", "0")
    answer_with(api, claims(name=None))
    second = pages.signer.read((await call_back(pages)).cookies[SESSION_COOKIE].value)
    assert second is not None and second["n"] == claims()[USER_CLAIM]
    assert len(session["sid"]) >= 16 and session["sid"] != second["sid"]
    assert first.cookies[SESSION_COOKIE]["samesite"] == "Lax"


async def test_the_callback_returns_only_to_our_own_pages(api: FakeSlackAPI) -> None:
    answer_with(api, claims())
    pages = signin(api)
    pending = {"state": "st", "nonce": NONCE, "next": "https://evil.example/"}
    response = await pages.callback(callback_request(pages, "?code=c&state=st", pending))
    assert response.headers["Location"] == "/web/investigations"


@pytest.mark.parametrize(
    "changes",
    [{"client_id": None}, {"client_secret": None}, {"session_secret": None}, {"base_url": None}],
    ids=["client-id", "client-secret", "session-secret", "base-url"],
)
def test_sign_in_needs_every_setting(api: FakeSlackAPI, changes: dict[str, Any]) -> None:
    settings = signin(api).settings.model_copy(update=changes)
    needs = r"^Sign in with Slack needs web\.base_url, client_id, secrets$"
    with pytest.raises(ValueError, match=needs):
        SignIn(settings, signin(api).signer, AsyncWebClient(base_url=api.base_url), TEAM_ID)


def test_the_callback_url_is_under_the_base_url(api: FakeSlackAPI) -> None:
    settings = WebSettings(
        base_url="https://socbot.example/SOCX/",
        client_id=CLIENT_ID,
        client_secret="x",
        session_secret="s" * 40,
    )
    pages = SignIn(settings, signin(api).signer, AsyncWebClient(base_url=api.base_url), None)
    assert pages.redirect_uri == "https://socbot.example/SOCX/web/auth/callback"
    app = web.Application()
    pages.add_routes(app)
    routes = {(r.method, r.resource.canonical) for r in app.router.routes() if r.resource}
    assert routes >= {("GET", "/web/auth/start"), ("GET", "/web/auth/callback")}

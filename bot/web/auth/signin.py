"""Sign in with Slack (OpenID Connect): ``/web/auth/start`` → Slack → ``/web/auth/callback``.

The start sets a short-lived signed cookie with a random ``state`` and ``nonce`` and
sends the browser to Slack's authorize page (``slack_sdk``'s URL generator, pinned to
the app's workspace). The callback checks the state, swaps the code for tokens with
``openid.connect.token`` (straight from Slack over TLS, so the ID token's claims are
taken as sent), checks the nonce, the audience and the workspace, and sets the session
cookie. Anything wrong: 403, no session.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from typing import Any

from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth import OpenIDConnectAuthorizeUrlGenerator
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.session import SESSION_COOKIE, SIGNIN_COOKIE, Signer, new_sid
from config.web_settings import WebSettings

log = logging.getLogger(__name__)

SIGNIN_TTL_S = 600
TEAM_CLAIM = "https://slack.com/team_id"
USER_CLAIM = "https://slack.com/user_id"


def redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location})


class SignInRefused(Exception):
    """The sign-in cannot be trusted (state, nonce, audience or workspace)."""


def safe_next(value: str | None) -> str:
    """A page of ours to return to: a path under ``/web/``, never another site."""
    if value and value.startswith("/web/") and "//" not in value and "\\" not in value:
        return value
    return "/web/investigations"


def id_token_claims(token: str) -> dict[str, Any]:
    """The ID token's claims (received directly from Slack's token endpoint)."""
    try:
        part = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (IndexError, ValueError) as error:
        raise SignInRefused("unreadable ID token") from error
    if not isinstance(claims, dict):
        raise SignInRefused("unreadable ID token")
    return claims


class SignIn:
    """The sign-in routes; ``team`` is the workspace people must come from."""

    def __init__(
        self, settings: WebSettings, signer: Signer, client: AsyncWebClient, team: str | None
    ) -> None:
        if not settings.sign_in_configured() or not settings.base_url:
            raise ValueError("Sign in with Slack needs web.base_url, client_id, secrets")
        self.settings = settings
        self.signer = signer
        self.client = client
        self.team = team
        self.redirect_uri = settings.base_url.rstrip("/") + "/web/auth/callback"
        self.urls = OpenIDConnectAuthorizeUrlGenerator(
            client_id=settings.client_id or "",
            redirect_uri=self.redirect_uri,
            scopes=["openid", "profile"],
            authorization_url=settings.authorize_url,
        )

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/auth/start", self.start)
        app.router.add_get("/web/auth/callback", self.callback)

    async def workspace(self) -> str | None:
        """The app's workspace: ``web.team_id``, else the bot token's (``auth.test``)."""
        if self.team is None:
            try:
                self.team = (await self.client.auth_test()).get("team_id")
            except SlackApiError:
                return None
        return self.team

    async def start(self, request: web.Request) -> web.Response:
        state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        cookie = self.signer.sign(
            {"state": state, "nonce": nonce, "next": safe_next(request.query.get("next"))},
            SIGNIN_TTL_S,
        )
        response = redirect(self.urls.generate(state, nonce, team=await self.workspace()))
        response.set_cookie(
            SIGNIN_COOKIE,
            cookie,
            max_age=SIGNIN_TTL_S,
            httponly=True,
            secure=True,
            samesite="Lax",
            path="/web/auth/",
        )
        return response

    async def callback(self, request: web.Request) -> web.Response:
        pending = self.signer.read(request.cookies.get(SIGNIN_COOKIE))
        try:
            if pending is None or request.query.get("state") != pending.get("state"):
                raise SignInRefused("state does not match")
            code = request.query.get("code")
            if not code:
                raise SignInRefused("no code")
            claims = await self._claims(code, str(pending.get("nonce")))
        except SignInRefused as error:
            log.info("sign-in refused: %s", error)
            raise web.HTTPForbidden(text="Sign-in refused.") from None
        session = {
            "u": str(claims[USER_CLAIM]),
            "t": str(claims[TEAM_CLAIM]),
            "n": str(claims.get("name") or claims[USER_CLAIM])[:80],
            "sid": new_sid(),
        }
        ttl = self.settings.session_hours * 3600
        response = redirect(safe_next(str(pending.get("next"))))
        response.set_cookie(
            SESSION_COOKIE,
            self.signer.sign(session, ttl),
            max_age=int(ttl),
            httponly=True,
            secure=True,
            samesite="Lax",
            path="/",
        )
        response.del_cookie(SIGNIN_COOKIE, path="/web/auth/")
        return response

    async def _claims(self, code: str, nonce: str) -> dict[str, Any]:
        secret = self.settings.client_secret
        try:
            # the form body, not HTTP Basic (slack_sdk's helper uses aiohttp's deprecated
            # BasicAuth), and a client without the bot token: the code is all it needs
            answer = await AsyncWebClient(base_url=self.client.base_url).api_call(
                "openid.connect.token",
                data={
                    "client_id": self.settings.client_id or "",
                    "client_secret": secret.get_secret_value() if secret else "",
                    "code": code,
                    "redirect_uri": self.redirect_uri,
                },
            )
        except SlackApiError as error:
            raise SignInRefused(f"token exchange failed: {error.response.get('error')}") from None
        claims = id_token_claims(str(answer.get("id_token") or ""))
        if claims.get("nonce") != nonce:
            raise SignInRefused("nonce does not match")
        if claims.get("aud") != self.settings.client_id:
            raise SignInRefused("ID token is for another app")
        team = await self.workspace()
        if team is None or claims.get(TEAM_CLAIM) != team:
            raise SignInRefused("another workspace")
        if not claims.get(USER_CLAIM):
            raise SignInRefused("no user in the ID token")
        return claims

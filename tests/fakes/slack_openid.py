"""A fake Sign in with Slack provider for tests: the authorize page and the token method.

``FakeSlackOpenID(api)`` serves ``/openid/connect/authorize`` on 127.0.0.1: it signs in
whoever ``fake.user`` names (no consent screen) and sends the browser back to the
``redirect_uri`` with a one-time ``code`` and the ``state`` it was given. On the
``FakeSlackAPI`` ``api`` it answers ``openid.connect.token`` (the code for an ID token
whose claims carry the nonce, the client id as audience, the user and the workspace)
and ``users.conversations`` (``fake.members``: channel → user ids). The ID token is
shaped like Slack's (header.claims.signature, base64url) but its signature is fake:
socbot takes the claims as sent by the token endpoint over TLS.
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bench.loopback import serve
from tests.fakes.slack_api import TEAM_ID, Call, FakeSlackAPI


def _part(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@dataclass
class Grant:
    user: str
    team: str
    nonce: str
    client_id: str
    redirect_uri: str


@dataclass
class FakeSlackOpenID:
    api: FakeSlackAPI
    user: str = "U0ALICE1"
    team: str = TEAM_ID
    name: str = "Alice Analyst"
    members: dict[str, set[str]] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    authorize_url: str = ""
    _runner: web.AppRunner | None = None

    async def __aenter__(self) -> FakeSlackOpenID:
        app = web.Application()
        app.router.add_get("/openid/connect/authorize", self._authorize)
        self._runner, url = await serve(app)
        self.authorize_url = f"{url}/openid/connect/authorize"
        self.api.set_handler("openid.connect.token", self._token)
        self.api.set_handler("users.conversations", self._conversations)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _authorize(self, request: web.Request) -> web.Response:
        q = request.query
        code = secrets.token_urlsafe(12)
        self.grants[code] = Grant(
            self.user, self.team, q.get("nonce", ""), q.get("client_id", ""), q["redirect_uri"]
        )
        back = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", "")})
        return web.Response(status=302, headers={"Location": back})

    def _token(self, call: Call) -> dict[str, Any]:
        grant = self.grants.pop(str(call.args.get("code")), None)
        if grant is None or call.args.get("redirect_uri") != grant.redirect_uri:
            return {"ok": False, "error": "invalid_code"}
        claims = {
            "iss": "https://slack.com",
            "sub": grant.user,
            "aud": grant.client_id,
            "nonce": grant.nonce,
            "name": self.name,
            "https://slack.com/user_id": grant.user,
            "https://slack.com/team_id": grant.team,
        }
        token = f"{_part({'alg': 'RS256', 'kid': 'fake'})}.{_part(claims)}.ZmFrZQ"
        return {"ok": True, "access_token": "xoxp-fake", "id_token": token}

    def _conversations(self, call: Call) -> dict[str, Any]:
        user = str(call.args.get("user"))
        channels = [{"id": c} for c, users in sorted(self.members.items()) if user in users]
        return {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}}

"""Signed cookie sessions and CSRF tokens for the pages.

A session is ``base64(json) . hmac-sha256`` in an HttpOnly, Secure, SameSite=Lax
cookie: the Slack user and workspace, a random session id and an expiry checked on
every request. A CSRF token is the HMAC of the session id: forms carry it, every
state-changing request must send it back (``check_csrf``). Nothing here is stored
server-side, so signing out clears the cookie and expiry bounds a stolen one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

SESSION_COOKIE = "socbot_session"
SIGNIN_COOKIE = "socbot_signin"


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a signed-in Slack user, or the terminal's single local user."""

    user: str
    team: str | None
    name: str
    admin: bool
    sid: str
    local: bool = False


class Signer:
    """HMAC signing of small JSON values with an expiry (sessions, sign-in state)."""

    def __init__(self, secret: bytes, clock: Any = time.time) -> None:
        self.secret = secret
        self.clock = clock

    def _mac(self, body: bytes) -> str:
        digest = hmac.new(self.secret, body, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def sign(self, value: dict[str, Any], ttl_s: float) -> str:
        data = {**value, "exp": int(self.clock() + ttl_s)}
        body = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode())
        text = body.decode().rstrip("=")
        return f"{text}.{self._mac(text.encode())}"

    def read(self, token: str | None) -> dict[str, Any] | None:
        """The value, or ``None`` when unsigned, tampered with, malformed or expired."""
        if not token or token.count(".") != 1:
            return None
        text, mac = token.split(".")
        if not hmac.compare_digest(mac, self._mac(text.encode())):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except ValueError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("exp"), int):
            return None
        return data if data["exp"] > self.clock() else None

    def csrf_token(self, sid: str) -> str:
        return self._mac(b"csrf:" + sid.encode())

    def check_csrf(self, sid: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(str(token), self.csrf_token(sid))


def new_sid() -> str:
    return secrets.token_urlsafe(18)

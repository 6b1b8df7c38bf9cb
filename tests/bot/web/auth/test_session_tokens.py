"""The signed values of ``bot.web.auth.session`` against the scheme computed here, not
with socbot's code: ``base64url(compact JSON) . base64url(HMAC-SHA256)``, no padding;
CSRF tokens are the HMAC of ``csrf:<session id>``. A value signed right but not a
session (no whole-number expiry, not an object) is no session."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from bot.web.auth.session import Signer, new_sid

KEY = b"k" * 32
NOW = 1_800_000_000.0


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def mac(text: str) -> str:
    return b64(hmac.new(KEY, text.encode(), hashlib.sha256).digest())


def signed(value: object) -> str:
    text = b64(json.dumps(value, separators=(",", ":")).encode())
    return f"{text}.{mac(text)}"


@pytest.mark.parametrize("user", ["U0ALICE1", "U0BOB", "U0CAROL12"])  # every padding length
def test_a_token_is_compact_json_and_its_hmac_unpadded(user: str) -> None:
    signer = Signer(KEY, clock=lambda: NOW)
    token = signer.sign({"u": user}, 3600)
    assert token == signed({"u": user, "exp": int(NOW) + 3600})
    assert "=" not in token
    assert signer.read(token) == {"u": user, "exp": int(NOW) + 3600}


def test_the_csrf_token_is_the_hmac_of_the_session_id() -> None:
    signer = Signer(KEY)
    assert signer.csrf_token("sid-1") == mac("csrf:sid-1")
    assert signer.check_csrf("sid-1", mac("csrf:sid-1"))
    assert not signer.check_csrf("sid-2", mac("csrf:sid-1"))
    assert not signer.check_csrf("sid-1", None) and not signer.check_csrf("sid-1", "")


@pytest.mark.parametrize(
    "value",
    [[1, 2], "text", {"u": "U0ALICE1"}, {"exp": "1900000000"}, {"exp": 1.9e9}],
    ids=["list", "string", "no-exp", "exp-text", "exp-float"],
)
def test_a_signed_value_that_is_no_session_reads_as_none(value: object) -> None:
    assert Signer(KEY, clock=lambda: NOW).read(signed(value)) is None


def test_a_session_id_is_18_random_bytes() -> None:
    ids = {new_sid() for _ in range(50)}
    assert len(ids) == 50 and {len(i) for i in ids} == {24}
    assert all(len(base64.urlsafe_b64decode(i)) == 18 for i in ids)

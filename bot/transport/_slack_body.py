"""``POST /slack/events`` bodies checked before bolt sees them.

bolt parses the body while building its request object, before verifying the
signature, and trusts its shape: a body that is not JSON, a form without
``payload``, or ``"team": 5`` raise inside bolt and become a 500. Here the order is
the safe one: signature first (401), then content type (415), UTF-8 and the JSON
rules of ``alerts.json_input`` (400), then the types of the envelope fields bolt and
socbot's middleware and listeners read (400). Reasons never quote the body.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from alerts.json_input import BadJson, loads_object

MAX_AGE_S = 300  # as bolt and slack_sdk
JSON = "application/json"
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
FORM = "application/x-www-form-urlencoded"
_STR_KEYS = frozenset(
    "type subtype token ts thread_ts event_ts action_ts message_ts channel_type text "
    "trigger_id response_url callback_id event_context".split()
)
_OBJECT_KEYS = frozenset("team user channel container message view state".split())
_LIST_OF_OBJECTS_KEYS = frozenset({"authorizations", "actions"})
_EVENT_OBJECT_KEYS = frozenset("message previous_message item bot_profile edited view".split())


class BadSlackRequest(Exception):
    """The request is refused; ``status`` and a reason that quotes nothing from it."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def check_slack_request(raw: bytes, headers: Mapping[str, str], signing_secret: str) -> str:
    """The body as text, once it is signed, well-formed and shaped as bolt expects."""
    if not signature_valid(raw, headers, signing_secret):
        raise BadSlackRequest(401, "invalid or stale request signature")
    content_type = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    if content_type not in (JSON, FORM):
        raise BadSlackRequest(415, f"content type must be {JSON} or {FORM}")
    try:
        text = raw.decode("utf-8")
        body = _parse(text, content_type)
    except UnicodeDecodeError:
        raise BadSlackRequest(400, "body is not valid UTF-8") from None
    except BadJson as error:
        raise BadSlackRequest(400, str(error)) from None
    reason = envelope_problem(body)
    if reason is not None:
        raise BadSlackRequest(400, reason)
    return text


def signature_valid(
    raw: bytes, headers: Mapping[str, str], signing_secret: str, *, now: float | None = None
) -> bool:
    """Slack's v0 signature over the raw bytes (whatever they decode to), at most
    ``MAX_AGE_S`` old."""
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not _TIMESTAMP.fullmatch(timestamp):
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > MAX_AGE_S:
        return False
    base = b"v0:" + timestamp.encode() + b":" + raw
    expected = "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def _parse(text: str, content_type: str) -> dict[str, Any]:
    """The body as bolt will read it (``slack_bolt.request.internals.parse_body``)."""
    if not text:
        raise BadJson("body is empty")
    if content_type == JSON or text.startswith("{"):
        return loads_object(text)
    try:
        fields = parse_qsl(text, keep_blank_values=True, strict_parsing=True, errors="strict")
    except ValueError:  # UnicodeDecodeError included
        raise BadJson("body is not a valid form encoding") from None
    form = dict(fields)
    if "payload" in text:
        if "payload" not in form:
            raise BadJson("form body without a payload field")
        return loads_object(form["payload"], what="payload")
    return form


def envelope_problem(body: dict[str, Any]) -> str | None:
    """What is wrong with the types of the fields bolt and socbot read, or None."""
    problem = _fields_problem(body, "body", objects=_OBJECT_KEYS)
    if problem:
        return problem
    if "enterprise" in body and not isinstance(body["enterprise"], str | dict | None):
        return "body.enterprise must be a string or an object"
    for key in _LIST_OF_OBJECTS_KEYS:
        value = body.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(item, dict) for item in value)
        ):
            return f"body.{key} must be a list of objects"
        for item in value or []:
            if problem := _fields_problem(item, f"body.{key}[]", objects=frozenset()):
                return problem
    for key in _OBJECT_KEYS:
        if isinstance(body.get(key), dict):
            problem = _fields_problem(body[key], f"body.{key}", objects=frozenset())
            if problem:
                return problem
    event = body.get("event")
    if event is None:
        return "body.event is missing" if body.get("type") == "event_callback" else None
    if not isinstance(event, dict):
        return "body.event must be an object"
    return _event_problem(event)


def _event_problem(event: dict[str, Any]) -> str | None:
    problem = _fields_problem(event, "body.event", objects=_EVENT_OBJECT_KEYS)
    if problem:
        return problem
    for key in ("channel", "user"):
        value = event.get(key)
        if value is not None and not isinstance(value, str | dict):
            return f"body.event.{key} must be a string or an object"
        if isinstance(value, dict) and not isinstance(value.get("id"), str | None):
            return f"body.event.{key}.id must be a string"
    # ids (``*_id``), attachments and blocks: already checked by ``_fields_problem``
    for key in ("team", "user_team", "source_team"):
        if not isinstance(event.get(key), str | None):
            return f"body.event.{key} must be a string"
    if not isinstance(event.get("files"), list | None):
        return "body.event.files must be a list"
    for key in _EVENT_OBJECT_KEYS:
        if isinstance(event.get(key), dict):
            problem = _fields_problem(event[key], f"body.event.{key}", objects=frozenset())
            if problem:
                return problem
    return None


def _fields_problem(data: dict[str, Any], where: str, *, objects: frozenset[str]) -> str | None:
    for key, value in data.items():
        if (key in _STR_KEYS or key == "id" or key.endswith("_id")) and not isinstance(
            value, str | None
        ):
            if not (key == "text" and where.endswith("[]")):  # a button's text is an object
                return f"{where}.{key} must be a string"
        if key in objects and not isinstance(value, dict | None):
            return f"{where}.{key} must be an object"
        if key in ("attachments", "blocks") and not isinstance(value, list | None):
            return f"{where}.{key} must be a list"
    return None

"""A local fake of the Slack Web API for tests: an aiohttp server on 127.0.0.1.

Point a real ``AsyncWebClient(token="xoxb-test", base_url=fake.base_url)`` (or a bolt
``AsyncApp(client=...)``) at it. Every call is recorded in ``fake.calls`` with its
arguments merged from the query string, form body and JSON body, so tests assert on
exactly what the app sent::

    async with FakeSlackAPI() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        await client.chat_postMessage(channel="C1", text="hi")
        assert fake.calls_to("chat.postMessage")[0].args["text"] == "hi"

Canned responses exist for chat.postMessage (returns a fresh ``ts``), chat.update,
chat.postEphemeral, views.open (needs a ``trigger_id`` and a modal; the view is
recorded decoded),
assistant.threads.setStatus / setTitle / setSuggestedPrompts (``slack_assistant``),
reactions.add, conversations.replies (returns what was
posted or seeded in that thread), conversations.history (a channel's top-level messages,
newest first), chat.getPermalink (of a message it holds), auth.test,
users.info, conversations.info, usergroups.users.list and conversations.members (seed with
``add_user`` / ``add_channel`` / ``add_usergroup`` / ``add_members``; users.info answers
``user_not_found`` for an id not shaped like a user's or one ``remove_user`` forgot,
conversations.info ``channel_not_found`` for a channel never seeded, as Slack does).
Unknown methods answer ``{"ok": false, "error": "unknown_method"}`` like Slack does.
Failures can be scripted per method: ``fake.fail_next("chat.update", status=429, retry_after=1)``,
``fake.fail_next("chat.postMessage", status=500)`` or
``fake.fail_next("assistant.threads.setStatus", error="not_allowed_token_type")``.
Tests wait for calls with ``await fake.wait_for(lambda: ...)``, woken by each call.

Message ``metadata`` (``event_type`` + ``event_payload``) given to chat.postMessage
is kept with the message (chat.update keeps it unless it passes new metadata) and
returned by conversations.replies when called with ``include_all_metadata``.
Every message (chat.postMessage, chat.update, chat.postEphemeral) and view (views.open,
views.update, views.push, views.publish) is checked as Slack checks it and refused as Slack
refuses it (``tests/fakes/block_kit.py``: ``no_text``, ``invalid_blocks``,
``msg_blocks_too_long``, ``invalid_arguments``); ``fake.checked`` counts the payloads that
passed the check.
``fake.scopes = [...]`` makes every answer carry ``x-oauth-scopes`` as Slack's do.
``fake.hold("chat.postMessage", when=...)`` makes matching calls take effect but
never answer (the caller's process "dies" mid-call) until ``release_held()`` or
``stop()``. Streams (``chat.startStream`` / ``appendStream`` / ``stopStream``) are
``fake.streams`` (``tests/fakes/slack_stream.py``): refused until ``fake.streams.allow()``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bench.loopback import serve
from tests.fakes.block_kit import check_message, check_view
from tests.fakes.signals import WAIT_S, Changes
from tests.fakes.slack_assistant import ASSISTANT
from tests.fakes.slack_stream import FakeStreams

BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM_ID = "T0TEST01"
USER_ID = re.compile(r"[UW][A-Z0-9]+")  # what users.info reads as a user id

Handler = Callable[["Call"], dict[str, Any]]


@dataclass
class Call:
    """One recorded Web API request."""

    method: str  # Slack method name, e.g. "chat.postMessage"
    args: dict[str, Any]  # query + form + JSON body merged; JSON strings decoded for blocks
    token: str | None  # the bearer token sent, if any
    http_verb: str
    status: int = 200  # the HTTP status the fake answered with
    at: float = field(default_factory=time.monotonic)  # when it arrived


@dataclass
class _Failure:
    status: int
    error: str | None
    retry_after: int | None


@dataclass
class _Message:
    channel: str
    ts: str
    text: str
    user: str
    thread_ts: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text}
        out["user"] = self.user
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        out.update(self.extra)
        return out


class FakeSlackAPI:
    """Records every call; answers like the Slack Web API for the methods socbot uses."""

    def __init__(self, *, bot_user_id: str = BOT_USER_ID, team_id: str = TEAM_ID) -> None:
        self.bot_user_id = bot_user_id
        self.team_id = team_id
        self.calls: list[Call] = []
        self.messages: list[_Message] = []
        self.users: dict[str, dict[str, Any]] = {}
        self.absent_users: set[str] = set()  # users.info: user_not_found
        self.channels: dict[str, dict[str, Any]] = {}  # conversations.info
        self.usergroups: dict[str, list[str]] = {}
        self.members: dict[str, list[str]] = {}
        self._handlers: dict[str, Handler] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._holds: list[tuple[str, Callable[[Call], bool]]] = []
        self._released = asyncio.Event()
        self.held: list[Call] = []  # calls that took effect but were never answered
        self._ts = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.changes = Changes()  # notified once each call is answered
        self.scopes: list[str] | None = None  # sent as ``x-oauth-scopes`` when set
        self.streams = FakeStreams(self)  # chat.*Stream: ``tests/fakes/slack_stream.py``
        self.checked = 0  # messages and views that passed ``tests.fakes.block_kit``

    # lifecycle ---------------------------------------------------------------

    async def start(self) -> str:
        """Start listening on a free loopback port; returns ``base_url`` (ends with '/')."""
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._serve)
        self._runner, url = await serve(app)
        self.base_url = f"{url}/api/"
        return self.base_url

    async def stop(self) -> None:
        self.release_held()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlackAPI:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # scripting ---------------------------------------------------------------

    def set_handler(self, method: str, handler: Handler) -> None:
        """Replace the canned answer for ``method`` (the handler gets the recorded Call)."""
        self._handlers[method] = handler

    def fail_next(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Make the next ``times`` calls of ``method`` fail.

        ``status=429`` answers ``ratelimited`` with a ``Retry-After`` header (default 1 s);
        ``status>=500`` answers a server error; ``status=200`` with ``error`` answers
        ``{"ok": false, "error": error}``.
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        if error is None:
            error = "ratelimited" if status == 429 else "fatal_error"
        self._failures.setdefault(method, []).extend(
            _Failure(status, error, retry_after) for _ in range(times)
        )

    def clear_failures(self, method: str) -> None:
        """Forget the failures still scripted for ``method`` (the service recovers)."""
        self._failures.pop(method, None)

    def hold(self, method: str, *, when: Callable[[Call], bool] = lambda _c: True) -> None:
        """Calls of ``method`` matching ``when`` take effect, then never answer.

        The caller hangs as if its process died right after Slack acted on the call.
        """
        self._holds.append((method, when))

    def release_held(self) -> None:
        """Answer every held call (and stop holding new ones)."""
        self._holds.clear()
        self._released.set()

    def add_user(self, user_id: str, **fields: Any) -> None:
        """Seed users.info for ``user_id`` (e.g. ``is_bot=True``, ``team_id="TOTHER"``)."""
        self.users[user_id] = fields

    def remove_user(self, user_id: str) -> None:
        """users.info answers ``user_not_found`` for ``user_id`` (an id Slack does not know)."""
        self.absent_users.add(user_id)

    def add_channel(self, channel_id: str, name: str, **fields: Any) -> None:
        """Seed conversations.info for ``channel_id`` (e.g. ``is_private=True``); an
        unseeded channel answers ``channel_not_found``."""
        self.channels[channel_id] = {"name": name, **fields}

    def add_usergroup(self, group_id: str, users: list[str]) -> None:
        """Seed usergroups.users.list for ``group_id``."""
        self.usergroups[group_id] = list(users)

    def add_members(self, channel: str, users: list[str]) -> None:
        """Seed conversations.members for ``channel`` (an unseeded one: channel_not_found)."""
        self.members[channel] = list(users)

    def add_message(
        self,
        channel: str,
        ts: str,
        text: str,
        *,
        user: str = "UHUMAN01",
        thread_ts: str | None = None,
        **extra: Any,
    ) -> None:
        """Seed a message that conversations.replies will return."""
        self.messages.append(_Message(channel, ts, text, user, thread_ts, dict(extra)))

    # queries -----------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    async def wait_for(self, check: Callable[[], bool], within_s: float = WAIT_S) -> None:
        """Return once ``check()`` holds; re-checked after each call the fake answers."""
        await self.changes.until(check, within_s)

    # serving -----------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        try:
            return await self._answer(request)
        finally:
            self.changes.notify()

    async def _answer(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        call = Call(method, await _read_args(request), _bearer(request), request.method)
        self.calls.append(call)
        pending = self._failures.get(method)
        if pending:
            failure = pending.pop(0)
            call.status = failure.status
            return _failure_response(failure)
        handler = self._handlers.get(method) or self._canned().get(method)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        answer = handler(call)
        if any(m == method and when(call) for m, when in self._holds):
            self.held.append(call)
            self.changes.notify()  # the call took effect: waiters may look now
            await self._released.wait()
        headers = {"x-oauth-scopes": ",".join(self.scopes)} if self.scopes is not None else None
        return web.json_response(answer, headers=headers)

    def _canned(self) -> dict[str, Handler]:
        return {
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.getPermalink": self._permalink,
            "conversations.replies": self._replies,
            "conversations.history": self._history,
            "auth.test": self._auth_test,
            "users.info": self._users_info,
            "conversations.info": self._conversations_info,
            "usergroups.users.list": self._usergroup_users,
            "conversations.members": self._members,
            **ASSISTANT,  # assistant.threads.* (tests/fakes/slack_assistant.py)
            "reactions.add": _ok,
            "reactions.remove": _ok,
            "chat.postEphemeral": self._ephemeral,
            "views.open": self._views_open,
            **self.streams.handlers(),
            "views.update": self._view_shown,
            "views.push": self._views_open,
            "views.publish": self._view_shown,
        }

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    def _post_message(self, call: Call) -> dict[str, Any]:
        channel = str(call.args.get("channel", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if refused := self.refusal(call):
            return refused
        ts = self._next_ts()
        text = str(call.args.get("text") or "")
        thread = call.args.get("thread_ts")
        extra: dict[str, Any] = {"bot_id": BOT_ID}
        if call.args.get("blocks") is not None:
            extra["blocks"] = call.args["blocks"]
        if isinstance(call.args.get("metadata"), dict):
            extra["metadata"] = call.args["metadata"]
        self.messages.append(
            _Message(channel, ts, text, self.bot_user_id, str(thread) if thread else None, extra)
        )
        message = {"type": "message", "text": text, "user": self.bot_user_id, "ts": ts}
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def refusal(self, call: Call) -> dict[str, Any] | None:
        """Slack's refusal of a message call (``block_kit.check_message``), or None."""
        refused = check_message(call.args)
        self.checked += refused is None
        return refused

    def _ephemeral(self, call: Call) -> dict[str, Any]:
        if not call.args.get("channel") or not call.args.get("user"):
            return {"ok": False, "error": "channel_not_found"}
        if refused := self.refusal(call):
            return refused
        return {"ok": True, "message_ts": self._next_ts()}

    def _views_open(self, call: Call) -> dict[str, Any]:
        """Like Slack: needs a trigger_id and a modal view; answers the opened view."""
        view = call.args.get("view")
        if isinstance(view, str):
            view = json.loads(view)
            call.args["view"] = view
        if not call.args.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        if not isinstance(view, dict) or view.get("type") != "modal":
            return {"ok": False, "error": "invalid_arguments"}
        if refused := check_view(view):
            return refused
        self.checked += 1
        return {"ok": True, "view": {**view, "id": f"V{next(self._ts):08d}"}}

    def _view_shown(self, call: Call) -> dict[str, Any]:
        """views.update (a view_id or external_id) and views.publish (a user_id): checked."""
        view = call.args.get("view")
        if isinstance(view, str):
            view = json.loads(view)
            call.args["view"] = view
        needed = "user_id" if call.method == "views.publish" else "view_id"
        if not call.args.get(needed) and not call.args.get("external_id"):
            return {"ok": False, "error": "invalid_arguments"}
        if refused := check_view(view):
            return refused
        self.checked += 1
        return {"ok": True, "view": {**view, "id": str(call.args.get("view_id") or "VHOME001")}}

    def _update(self, call: Call) -> dict[str, Any]:
        channel, ts = str(call.args.get("channel", "")), str(call.args.get("ts", ""))
        if refused := self.refusal(call):
            return refused
        for msg in self.messages:
            if msg.channel == channel and msg.ts == ts:
                msg.text = str(call.args.get("text") or "")
                if call.args.get("blocks") is not None:
                    msg.extra["blocks"] = call.args["blocks"]
                if isinstance(call.args.get("metadata"), dict):
                    msg.extra["metadata"] = call.args["metadata"]
                return {"ok": True, "channel": channel, "ts": ts, "text": msg.text}
        return {"ok": False, "error": "message_not_found"}

    def _permalink(self, call: Call) -> dict[str, Any]:
        """Like Slack: the workspace URL, the channel and the ts without its dot."""
        channel, ts = str(call.args.get("channel", "")), str(call.args.get("message_ts", ""))
        if not any(m.channel == channel and m.ts == ts for m in self.messages):
            return {"ok": False, "error": "message_not_found"}
        link = f"https://socbot-test.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        return {"ok": True, "channel": channel, "permalink": link}

    def _replies(self, call: Call) -> dict[str, Any]:
        channel, root = str(call.args.get("channel", "")), str(call.args.get("ts", ""))
        thread = [
            m.as_dict()
            for m in self.messages
            if m.channel == channel and (m.ts == root or m.thread_ts == root)
        ]
        if str(call.args.get("include_all_metadata")).lower() not in ("true", "1"):
            for message in thread:
                message.pop("metadata", None)
        thread.sort(key=lambda m: float(m["ts"]))
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        return {"ok": True, "messages": thread, "has_more": False}

    def _history(self, call: Call) -> dict[str, Any]:
        """Like Slack: a channel's top-level messages, newest first, ``limit`` of them;
        metadata only with ``include_all_metadata``; replies stay in their threads."""
        channel = str(call.args.get("channel", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        found = [
            m.as_dict()
            for m in self.messages
            if m.channel == channel and (not m.thread_ts or m.thread_ts == m.ts)
        ]
        if str(call.args.get("include_all_metadata")).lower() not in ("true", "1"):
            for message in found:
                message.pop("metadata", None)
        found.sort(key=lambda m: float(m["ts"]), reverse=True)
        limit = int(call.args.get("limit") or 100)
        return {"ok": True, "messages": found[:limit], "has_more": len(found) > limit}

    def _auth_test(self, call: Call) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://socbot-test.slack.com/",
            "team": "socbot test",
            "user": "socbot",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _usergroup_users(self, call: Call) -> dict[str, Any]:
        group = str(call.args.get("usergroup", ""))
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[group]}

    def _members(self, call: Call) -> dict[str, Any]:
        channel = str(call.args.get("channel", ""))
        if channel not in self.members:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "members": self.members[channel], "response_metadata": {}}

    def _users_info(self, call: Call) -> dict[str, Any]:
        user_id = str(call.args.get("user", ""))
        if not USER_ID.fullmatch(user_id) or user_id in self.absent_users:
            return {"ok": False, "error": "user_not_found"}
        user: dict[str, Any] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": user_id.lower(),
            "real_name": f"User {user_id}",
            "is_bot": user_id == self.bot_user_id,
            "deleted": False,
            "profile": {"display_name": user_id.lower()},
        }
        user.update(self.users.get(user_id, {}))
        return {"ok": True, "user": user}

    def _conversations_info(self, call: Call) -> dict[str, Any]:
        channel_id = str(call.args.get("channel", ""))
        seeded = self.channels.get(channel_id)
        if seeded is None:
            return {"ok": False, "error": "channel_not_found"}
        private = bool(seeded.get("is_private"))
        channel: dict[str, Any] = {
            "id": channel_id,
            "is_channel": not private,
            "is_group": private,
            "is_im": False,
            "is_private": private,
            "is_archived": False,
            "created": 1700000000,
            "creator": "U0CREATOR",
            "name_normalized": str(seeded.get("name") or "").lower(),
        }
        channel.update(seeded)
        if channel.get("is_im"):  # a direct message has a user and no name
            channel.pop("name", None)
            channel.pop("name_normalized", None)
        return {"ok": True, "channel": channel}


def _ok(call: Call) -> dict[str, Any]:
    return {"ok": True}


async def _read_args(request: web.Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if isinstance(body, dict):
                args.update(body)
        else:
            form = await request.post()
            args.update({k: v for k, v in form.items() if isinstance(v, str)})
    for key in ("blocks", "attachments", "metadata"):
        value = args.get(key)
        if isinstance(value, str):
            try:
                args[key] = json.loads(value)
            except ValueError:
                pass
    return args


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        return auth.removeprefix("Bearer ")
    token = request.query.get("token")
    return token


def _failure_response(failure: _Failure) -> web.Response:
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(failure.retry_after)
    if failure.status >= 500:
        return web.Response(status=failure.status, text="upstream error", headers=headers)
    body = {"ok": False, "error": failure.error}
    return web.json_response(body, status=failure.status, headers=headers)

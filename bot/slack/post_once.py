"""Each message of a work row posted once, also when a replica dies mid-post.

Posting and recording the message's ts with the row cannot be one transaction:
a replica killed between ``chat.postMessage`` and the record would leave a
takeover that posts the message a second time. So every post is written down
before it is made (an *intent*: a random token, and for the outcome the rendered
messages themselves), and made with Slack message metadata naming the row and the
token (``event_type`` ``socbot_post``). A takeover that finds an intent without a
ts looks in the thread (``conversations.replies`` with ``include_all_metadata``)
for socbot's own message carrying that token and adopts it instead of posting
again. Only messages of socbot's bot (``auth.test``) count: anyone can write a
thread message, no one else can post as socbot.

Keys in ``work.posted``: ``status_post`` (token) → ``status_ts``; ``outcome``
(``messages`` and their ``posts`` tokens) → ``outcome_ts`` (one ts or None per
message, in order). With the outcome recorded, a later run only delivers what
is missing: the investigation is not run again. A row given up after its last
attempt has its status message replaced once (``replace_status``: ``gave_up``,
the intent, written before the edit).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.kit import Message
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.slack.posting import POST_ATTEMPTS, POST_BACKOFF_S, post_until_accepted
from bot.work.contracts import Record, RowLost, ThreadRef

log = logging.getLogger(__name__)

EVENT_TYPE = "socbot_post"
MAX_PAGES = 10  # conversations.replies pages read looking for our posts (200 messages each)


def post_metadata(work_id: int, token: str) -> dict[str, Any]:
    """The ``metadata`` argument of ``chat.postMessage`` for one post of a row."""
    return {"event_type": EVENT_TYPE, "event_payload": {"work_id": work_id, "post": token}}


def new_token() -> str:
    return secrets.token_hex(8)


class ThreadSearch:
    """Finds socbot's own posts in a thread by their metadata token."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self._auth: dict[str, str] | None = None

    async def identity(self) -> dict[str, str]:
        """``auth.test``'s ``bot_id``, ``user_id`` and ``team_id`` (empty when Slack cannot say)."""
        if self._auth is None:
            try:
                response = await self.client.auth_test()
            except SLACK_ERRORS as error:
                log.warning("auth.test failed; cannot recognise earlier posts: %s", error)
                return {}
            keys = ("bot_id", "user_id", "team_id")
            self._auth = {k: str(response.get(k) or "") for k in keys}
        return self._auth

    async def bot_id(self) -> str | None:
        """socbot's bot id (``auth.test``), None when Slack cannot say."""
        return (await self.identity()).get("bot_id") or None

    async def find(self, thread: ThreadRef, work_id: int, tokens: set[str]) -> dict[str, str]:
        """``{token: ts}`` of our posts of ``work_id`` in ``thread`` (those not found left out).

        Fails open to "not found" (the message is posted again rather than lost).
        """
        me = await self.bot_id() if tokens else None
        if me is None:
            return {}
        found: dict[str, str] = {}
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                response = await self.client.conversations_replies(
                    channel=thread.channel,
                    ts=thread.thread_ts,
                    include_all_metadata=True,
                    limit=200,
                    cursor=cursor,
                )
            except SLACK_ERRORS as error:
                log.warning("could not read %s for earlier posts: %s", thread.channel, error)
                return found
            for message in response.get("messages") or []:
                token = _our_token(message, me, work_id)
                if token in tokens and isinstance(message.get("ts"), str):
                    found.setdefault(token, message["ts"])
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None or len(found) == len(tokens):
                return found
        return found


def _our_token(message: Any, bot_id: str, work_id: int) -> str | None:
    """The post token of ``message`` if socbot's bot posted it for ``work_id``."""
    if not isinstance(message, dict) or message.get("bot_id") != bot_id:
        return None
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != EVENT_TYPE:
        return None
    payload = metadata.get("event_payload")
    if not isinstance(payload, dict) or payload.get("work_id") != work_id:
        return None
    token = payload.get("post")
    return token if isinstance(token, str) else None


class RunPosts:
    """The posts of one work row in its thread (see the module docstring)."""

    def __init__(
        self,
        client: AsyncWebClient,
        pacer: Pacer,
        search: ThreadSearch,
        thread: ThreadRef,
        *,
        work_id: int | None,
        posted: dict[str, Any],
        record: Record | None,
    ) -> None:
        self.client = client
        self.pacer = pacer
        self.search = search
        self.thread = thread
        self.work_id = work_id
        self.posted = dict(posted)
        self._record = record

    async def record(self, key: str, value: Any) -> None:
        """Remember ``key`` with the row; ``RowLost`` when the row is no longer ours.

        Every post is preceded by a record (its intent), so a replica whose lease
        lapsed and whose row was taken over stops before posting a second answer.
        """
        self.posted[key] = value
        if self._record is not None and await self._record(key, value) is False:
            raise RowLost(f"work {self.work_id} is run by another replica now")

    @property
    def tracked(self) -> bool:
        """True when posts are recorded with a row (a worker runs this)."""
        return self.work_id is not None and self._record is not None

    @property
    def has_outcome(self) -> bool:
        """The run's outcome is recorded: only its delivery may be left."""
        return isinstance(self.posted.get("outcome"), dict)

    # the status message ------------------------------------------------------

    async def status(self) -> tuple[str | None, dict[str, Any] | None]:
        """(the status message's ts if posted already, the metadata to post it with).

        Writes the intent first when it is not written yet.
        """
        if not self.tracked or self.work_id is None:
            return None, None
        ts = await self.posted_status()
        if ts is not None:
            return ts, None
        token = self.posted.get("status_post")
        if not isinstance(token, str):
            token = new_token()
            await self.record("status_post", token)
        return None, post_metadata(self.work_id, token)

    async def posted_status(self) -> str | None:
        """The status message's ts: recorded, or found in the thread by its intent's token
        (then recorded); None when the run never posted one."""
        ts = self.posted.get("status_ts")
        if isinstance(ts, str):
            return ts
        token = self.posted.get("status_post")
        if not isinstance(token, str) or self.work_id is None:
            return None
        found = await self.search.find(self.thread, self.work_id, {token})
        if token not in found:
            return None
        await self.record("status_ts", found[token])
        return found[token]

    async def status_posted(self, ts: str) -> None:
        await self.record("status_ts", ts)

    async def replace_status(self, key: str, message: Message, *, what: str) -> str | None:
        """Say ``message`` once, in place of the status message (a new message in the
        thread when the run never posted one); the ts it is in, None if not said.

        The intent (``key``: a token) is recorded before Slack is called: a crash in
        between loses the notice, it never repeats it; with ``key`` recorded already
        nothing is said.
        """
        if self.work_id is None or self.posted.get(key) is not None:
            return None
        ts = await self.posted_status()
        token = new_token()
        await self.record(key, token)
        if ts is None:
            return await self._post(message, token, what=what)
        try:
            async with self.pacer.update_slot():
                await self.client.chat_update(
                    channel=self.thread.channel,
                    ts=ts,
                    text=message["text"],
                    blocks=message.get("blocks"),
                )
        except SLACK_ERRORS as error:
            log.warning("could not edit the status message of %s: %s", what, error)
            return None
        return ts

    async def _post(
        self,
        message: Message,
        token: str,
        *,
        what: str,
        attempts: int = POST_ATTEMPTS,
        backoff_s: float = POST_BACKOFF_S,
    ) -> str | None:
        """Post ``message`` in the thread until Slack takes it, ``token`` in its metadata."""
        return await post_until_accepted(
            self.client,
            self.pacer,
            channel=self.thread.channel,
            thread_ts=self.thread.thread_ts,
            message=message,
            what=what,
            attempts=attempts,
            backoff_s=backoff_s,
            metadata=post_metadata(self.work_id, token) if self.work_id is not None else None,
        )

    # the outcome -------------------------------------------------------------

    async def outcome(
        self, messages: Sequence[Message] | None, *, what: str, attempts: int, backoff_s: float
    ) -> int:
        """Post the outcome (``messages``, or the recorded ones); how many Slack never took.

        Posts in order and stops at the first message Slack keeps refusing, so a
        later attempt delivers the rest in order.
        """
        plan, sent = await self._outcome_plan(messages)
        if self.tracked and None in sent:
            await self.record("outcome_ts", list(sent))  # still ours? (RowLost if not)
        for index, (message, token) in enumerate(zip(plan["messages"], plan["posts"], strict=True)):
            if sent[index] is not None:
                continue
            ts = await self._post(message, token, what=what, attempts=attempts, backoff_s=backoff_s)
            if ts is None:
                return sum(1 for ts in sent if ts is None)
            sent[index] = ts
            await self.record("outcome_ts", list(sent))
        return 0

    async def _outcome_plan(
        self, messages: Sequence[Message] | None
    ) -> tuple[dict[str, Any], list[str | None]]:
        if self.has_outcome:
            plan: dict[str, Any] = self.posted["outcome"]
            sent = _aligned(self.posted.get("outcome_ts"), len(plan["messages"]))
            missing = {t for t, ts in zip(plan["posts"], sent, strict=True) if ts is None}
            if missing and self.work_id is not None:
                found = await self.search.find(self.thread, self.work_id, missing)
                if found:
                    sent = [ts or found.get(t) for t, ts in zip(plan["posts"], sent, strict=True)]
                    await self.record("outcome_ts", list(sent))
            return plan, sent
        assert messages is not None, "no outcome recorded and none given"
        plan = {"messages": list(messages), "posts": [new_token() for _ in messages]}
        if self.tracked:
            await self.record("outcome", plan)
        return plan, [None] * len(plan["messages"])


def _aligned(value: Any, n: int) -> list[str | None]:
    """``outcome_ts`` as one entry per message (older rows kept a plain list of ts)."""
    items = list(value) if isinstance(value, list) else []
    out: list[str | None] = [v if isinstance(v, str) else None for v in items[:n]]
    return out + [None] * (n - len(out))

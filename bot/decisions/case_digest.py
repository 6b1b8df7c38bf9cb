"""The weekly digest in ``cases.digest_channel``: the ``case_digest`` rows' runner and the
schedule that queues one per ISO week.

Every replica looks every ``cases.remind_every_s`` (with the reminders' period) whether the
last ended week has its digest; ``store.cases.digests.claim`` makes that once across
replicas and restarts (the week's key, inserted with its work row in one transaction).
The replica that claims the row builds the week's period report (``store.cases.report``,
as ``socbot report`` does) and posts it (``bot.blocks.digest``) at the channel's top level,
as ``bot.slack.post_once`` posts in a thread: the post's token is written with the row
before the post and sent as the message's metadata, so an attempt that follows one that
died or had no answer first looks for that message in the channel's latest messages
(``conversations.history``) and adopts it instead of posting again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.digest import digest_message
from bot.blocks.kit import SAFE_POST_FLAGS
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.slack.post_once import ThreadSearch, new_token, post_metadata
from bot.work.contracts import RowLost, ThreadRef, Unavailable, current_run
from bot.work.learning import Silent
from bot.work.periodic import every
from bot.work.worker import Coordinator
from config.cases_settings import CaseSettings
from store.cases import digests
from store.cases.report import period_report
from store.db.engine import Database
from store.queue.work import Work
from store.schema import WorkKind, utcnow

log = logging.getLogger(__name__)

INTENT = "digest_post"  # the post's token, written before the post
PAGES = 5  # of 200 messages: the channel's latest, where a post of this row would be


class CaseDigests:
    """The ``Runner`` of ``case_digest`` rows, and the weekly schedule."""

    reporter = Silent("case digest")

    def __init__(
        self,
        db: Database,
        client: AsyncWebClient,
        pacer: Pacer,
        settings: CaseSettings,
        coordinator: Coordinator,
        *,
        pages_url: str | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.client = client
        self.pacer = pacer
        self.settings = settings
        self.coordinator = coordinator
        self.pages_url = pages_url
        self.clock = clock
        self.search = ThreadSearch(client)  # socbot's bot id
        self._stopped = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        coordinator.register({WorkKind.CASE_DIGEST: self}, reporter=self.reporter)

    @property
    def on(self) -> bool:
        return self.settings.enabled and bool(self.settings.digest_channel)

    async def run(self, thread: ThreadRef, work: Work) -> None:
        request, posted = work.request, work.posted
        if posted.get("digest_ts"):
            return
        token = posted.get(INTENT)
        if isinstance(token, str):  # an earlier attempt meant to post it: did it?
            ts = await self._find(work, token)
            if ts is not None:
                await self._record(work, "digest_ts", ts)
                return
        else:
            token = new_token()
            await self._record(work, INTENT, token)  # the intent first
        since, until = (datetime.fromisoformat(str(request[k])) for k in ("since", "until"))
        report = await period_report(self.db, since, until, disagreements=10)
        message = digest_message(str(request["week"]), report, self.pages_url)
        try:
            async with self.pacer.slot(work.channel):
                response = await self.client.chat_postMessage(
                    channel=work.channel,
                    text=message["text"],
                    blocks=message["blocks"],
                    unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                    unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
                    metadata=post_metadata(work.id, token),
                )
        except SLACK_ERRORS as error:  # the next attempt looks for it before posting
            raise Unavailable(f"Slack did not take the weekly digest: {error}") from None
        await self._record(work, "digest_ts", str(response.get("ts") or ""))

    async def _find(self, work: Work, token: str) -> str | None:
        """The ts of socbot's post of ``work`` with ``token`` in the channel's latest
        messages, or None (also when Slack cannot say: posted again rather than lost)."""
        me = await self.search.bot_id()
        if me is None:
            return None
        wanted, cursor = post_metadata(work.id, token), None
        for _ in range(PAGES):
            try:
                response = await self.client.conversations_history(
                    channel=work.channel, include_all_metadata=True, limit=200, cursor=cursor
                )
            except SLACK_ERRORS as error:
                log.warning("could not read %s for the digest: %s", work.channel, error)
                return None
            for message in response.get("messages") or []:
                if message.get("bot_id") == me and message.get("metadata") == wanted:
                    return str(message.get("ts"))
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return None
        return None

    async def _record(self, work: Work, key: str, value: object) -> None:
        context = current_run.get()
        if context is not None and await context.record(key, value) is False:
            raise RowLost(f"digest {work.id} is run by another replica now")

    async def dropped(self, work: Work) -> None:
        log.warning("weekly digest %s given up: %s", work.request.get("week"), work.error)

    # the schedule ------------------------------------------------------------

    def start(self) -> None:
        if self._loop is None and self.on:
            self._loop = asyncio.create_task(self._schedule(), name="weekly digest")

    async def close(self) -> None:
        self._stopped.set()
        if self._loop is not None:
            await asyncio.gather(self._loop, return_exceptions=True)

    async def queue_due(self) -> str | None:
        """Queue the last ended week's digest unless a replica has; its week, or None."""
        if not self.on:
            return None
        week = await digests.claim(self.db, self.settings.digest_channel, self.clock())
        if week is not None:
            self.coordinator.nudge()
        return week

    async def _schedule(self) -> None:
        period = self.settings.remind_every_s
        await every(period, self._stopped, self.queue_due, "look for a weekly digest due")

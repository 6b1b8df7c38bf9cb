"""The weekly digest in ``cases.digest_channel``: the ``case_digest`` rows' runner and the
schedule that queues one per ISO week.

Every replica looks every ``cases.remind_every_s`` (with the reminders' period) whether the
last ended week has its digest; ``store.cases.digests.claim`` makes that once across
replicas and restarts (the week's key, inserted with its work row in one transaction).
The replica that claims the row builds the week's period report (``store.cases.report``,
as ``socbot report`` does) and posts it (``bot.blocks.digest``). The post's intent is
written with the row before the post and cleared only when Slack refuses it (the row is
then retried): a replica that dies between the two loses that week's digest, never posts
it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.digest import digest_message
from bot.blocks.kit import SAFE_POST_FLAGS
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from bot.work.contracts import RowLost, ThreadRef, Unavailable, current_run
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from config.cases_settings import CaseSettings
from store.cases import digests
from store.cases.report import period_report
from store.db.engine import Database
from store.queue.work import Work
from store.schema import WorkKind, utcnow

log = logging.getLogger(__name__)

INTENT = "digest_post"  # written before the post: never posted twice


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
        self._stopped = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        coordinator.register({WorkKind.CASE_DIGEST: self}, reporter=self.reporter)

    @property
    def on(self) -> bool:
        return self.settings.enabled and bool(self.settings.digest_channel)

    async def run(self, thread: ThreadRef, work: Work) -> None:
        request = work.request
        if work.posted.get(INTENT):
            log.warning("digest %s: an earlier attempt may have posted it; not again", work.id)
            return
        since, until = (datetime.fromisoformat(str(request[k])) for k in ("since", "until"))
        report = await period_report(self.db, since, until, disagreements=10)
        message = digest_message(str(request["week"]), report, self.pages_url)
        await self._record(work, INTENT, True)
        try:
            async with self.pacer.slot(work.channel):
                response = await self.client.chat_postMessage(
                    channel=work.channel,
                    text=message["text"],
                    blocks=message["blocks"],
                    unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                    unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
                )
        except SLACK_ERRORS as error:
            if getattr(error, "response", None) is None:
                raise  # no answer: it may have been posted, so it is not posted again
            await self._record(work, INTENT, False)  # refused: nothing was posted
            raise Unavailable(f"Slack refused the weekly digest: {error}") from None
        await self._record(work, "digest_ts", str(response.get("ts") or ""))

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
        while not self._stopped.is_set():
            try:
                await self.queue_due()
            except Exception:  # fail open: looked at again on the next turn
                log.exception("could not look for a weekly digest due")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.settings.remind_every_s)

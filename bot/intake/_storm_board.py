"""What an alert storm shows in a channel, rendered from the database (``store.triage.storms``).

Every replica shows the same thing, also after a restart: the storm message of a storm
(posted once by the replica whose claim wins, when more than ``QUIET_QUEUE`` alerts
wait; edited in place by any replica until its last edit says the storm is over), and
the card of each alert group ("+N similar alerts", then the group's verdict) or, for a
forwarded alert, one note in its thread, posted when the first similar alert joins.
Changes are coalesced: one background loop looks at what changed, and each message is
edited at most once per interval (``bot.slack.edited``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError

from agent.concluder import VERDICT_LABELS
from bot.blocks.cards import group_card, group_note, moved_card, storm_message
from bot.blocks.kit import SAFE_POST_FLAGS, Message
from bot.slack.edited import EditedMessage, Render
from bot.slack.errors import SLACK_ERRORS
from bot.slack.reporter import SlackReporter
from store.schema import AlertStatus
from store.triage.alerts import AlertStore
from store.triage.storm_posts import StormPosts
from store.triage.storms import StormStore

log = logging.getLogger(__name__)

QUIET_QUEUE = 2  # up to this many waiting alerts get their own "queued" notice
CLOSE_S = 2.0  # at shutdown, how long a note post may take to end by itself
KEPT = 500  # edited messages remembered (an older one is looked up again when it changes)


class StormBoard:
    """The storm messages and group cards of one channel (see the module docstring)."""

    def __init__(
        self,
        reporter: SlackReporter,
        storms: StormStore,
        alerts: AlertStore,
        *,
        interval: float,
    ) -> None:
        self.reporter = reporter
        self.storms = storms
        self.posts = StormPosts(storms.db)
        self.alerts = alerts
        self.channel = storms.channel
        self.interval = interval
        self._messages: OrderedDict[str, EditedMessage] = OrderedDict()
        self._storms: set[int] = set()  # changed since the loop last looked
        self._groups: set[str] = set()
        self._loop: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # notes being posted
        self._edits: set[asyncio.Task[None]] = set()  # edits in place
        self._closing = False

    def storm_changed(self, storm_id: int) -> None:
        """An alert of the storm changed state: open, edit or close its storm message."""
        self._storms.add(storm_id)
        self._wake()

    def group_changed(self, leader_id: str) -> None:
        """An alert joined the group, or its leader concluded: show it."""
        self._groups.add(leader_id)
        self._wake()

    async def card_posted(self, leader_id: str, ts: str, shown: Message) -> str:
        """A webhook group's card was posted (by ``bot.intake.triage``): recorded and kept up
        to date; the alert's card (its thread runs the investigation), ``ts`` unless another
        replica recorded its card first (``StormPosts.alert_card_posted``)."""
        card_ts = await self.posts.alert_card_posted(leader_id, self.channel, ts)
        if card_ts != ts:
            await self._card_moved(leader_id, ts, card_ts)
            return card_ts
        self._edited(f"card:{leader_id}", ts, lambda: self.render_group(leader_id)).posted(
            ts, shown
        )
        return ts

    async def _card_moved(self, alert_id: str, ts: str, card_ts: str) -> None:
        """Our card ``ts`` lost to the alert's card ``card_ts`` (another replica took our
        stalled launch over): edit ours to point to that card's thread, paced as the
        other edits (``bot.slack.edited``)."""
        stored = await self.alerts.get(alert_id)
        if stored is None:
            raise LookupError(f"alert {alert_id!r} is not stored")
        message = moved_card(stored.to_alert(), thread=await self._permalink(card_ts), ts=card_ts)

        async def render() -> Message:
            return message

        self._edited(f"moved:{alert_id}", ts, render).show()

    async def _permalink(self, ts: str) -> str | None:
        try:
            response = await self.reporter.client.chat_getPermalink(
                channel=self.channel, message_ts=ts
            )
        except SLACK_ERRORS as error:  # the card shows the thread's ts instead
            log.info("no permalink for %s in %s: %s", ts, self.channel, error)
            return None
        link = response.get("permalink")
        return link if isinstance(link, str) else None

    async def quiet(self) -> bool:
        """True while waiting alerts get their own "queued" notice (no storm message)."""
        view = await self.storms.view()
        return view is None or (view.waiting <= QUIET_QUEUE and view.board_ts is None)

    async def render_group(self, leader_id: str) -> Message:
        """The group's card (webhook) or note (forwarded) as the database has it."""
        group = await self.posts.group(leader_id)
        stored = await self.alerts.get(leader_id)
        if stored is None:
            raise LookupError(f"alert {leader_id!r} is not stored")
        members = group.members if group is not None else 0
        verdict = None
        if stored.verdict and members:  # a lone alert's verdict is in its thread
            verdict = VERDICT_LABELS.get(stored.verdict, stored.verdict)
        if group is not None and group.thread_ts is not None:
            return group_note(similar=members, verdict=verdict)
        return group_card(stored.to_alert(), similar=members, verdict=verdict)

    async def render_storm(self, storm_id: int) -> Message:
        view = await self.storms.view(storm_id)
        if view is None:
            raise LookupError(f"no storm {storm_id!r}")
        counts = dict(view.counts)
        stopped = counts.pop(AlertStatus.CANCELLED, 0)  # shown as "failed or stopped"
        counts[AlertStatus.FAILED] = counts.get(AlertStatus.FAILED, 0) + stopped
        return storm_message(counts, since=_clock(view.since), over=view.over)

    def _wake(self) -> None:
        if not self._closing and (self._loop is None or self._loop.done()):
            self._loop = asyncio.create_task(self._look(), name=f"storm board {self.channel}")

    async def _look(self) -> None:
        while (self._storms or self._groups) and not self._closing:
            storms, self._storms = self._storms, set()
            groups, self._groups = self._groups, set()
            try:
                for storm_id in storms:
                    await self._show_storm(storm_id)
                for leader_id in groups:
                    await self._show_group(leader_id)
            except (SQLAlchemyError, LookupError) as error:  # fail open: shown on the next change
                log.warning("could not show the alert storm in %s: %s", self.channel, error)

    async def _show_storm(self, storm_id: int) -> None:
        view = await self.storms.view(storm_id)
        if view is None:
            return
        render: Render = lambda: self.render_storm(storm_id)  # noqa: E731
        if view.board_ts is not None:
            self._edited(f"storm:{storm_id}", view.board_ts, render).show()
        elif not view.over and view.waiting > QUIET_QUEUE:
            if await self.posts.claim_board(storm_id):  # this replica posts it
                message = await render()
                ts = await self.reporter.post_top(self.channel, message, background=False)
                await self.posts.board_posted(storm_id, ts)
                if ts is not None:
                    self._edited(f"storm:{storm_id}", ts, render).posted(ts, message)

    async def _show_group(self, leader_id: str) -> None:
        group = await self.posts.group(leader_id)
        if group is None or not group.members:
            return
        render: Render = lambda: self.render_group(leader_id)  # noqa: E731
        if group.card_ts is not None:
            self._edited(f"card:{leader_id}", group.card_ts, render).show()
        elif group.thread_ts is not None and await self.posts.claim_note(leader_id):
            self._spawn(self._post_note(leader_id, group.thread_ts, render))

    async def _post_note(self, leader_id: str, thread_ts: str, render: Render) -> None:
        """Post the group note in the first alert's thread (background: runs go first)."""
        message = await render()
        try:
            async with self.reporter.pacer.slot(self.channel, background=True):
                if self._closing:
                    raise TimeoutError("shutting down")  # the claim lapses; not posted
                response = await self.reporter.client.chat_postMessage(
                    channel=self.channel,
                    thread_ts=thread_ts,
                    text=message["text"],
                    blocks=message["blocks"],
                    unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                    unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
                )
        except SLACK_ERRORS as error:  # the rows keep the grouping; the next join retries
            log.warning("could not post the group note in %s: %s", self.channel, error)
            await self.posts.card_posted(leader_id, None)
            return
        ts = str(response["ts"])
        await self.posts.card_posted(leader_id, ts)
        self._edited(f"card:{leader_id}", ts, render).posted(ts, message)

    def _edited(self, key: str, ts: str, render: Render) -> EditedMessage:
        message = self._messages.get(key)
        if message is None or message.ts != ts:
            message = EditedMessage(
                self.reporter.client,
                self.reporter.pacer,
                self.channel,
                self.interval,
                self._edits,
                render,
                ts,
            )
            self._messages[key] = message
            message.closed = self._closing
        self._messages.move_to_end(key)
        while len(self._messages) > KEPT:
            self._messages.popitem(last=False)
        message.interval = self.interval
        return message

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait until what changed has been looked at and notes are posted (tests)."""
        while self._tasks or (self._loop is not None and not self._loop.done()):
            await asyncio.wait([*self._tasks, *([self._loop] if self._loop else [])])

    async def edits_done(self) -> None:
        """Wait until the pending edits in place are made (tests)."""
        await self.drain()
        while self._edits:
            await asyncio.wait(list(self._edits))

    def stop(self) -> None:
        """Shutdown: post and edit nothing more. Nothing is cancelled inside a database
        transaction (a cancelled SQLite transaction can keep the write lock): the loop
        stops after what it is looking at, edits not rendering stop at once."""
        self._closing = True
        for message in self._messages.values():
            message.stop()

    async def close(self) -> None:
        """Wait briefly for the loop and note posts to stop, then cancel what is left."""
        self.stop()
        tasks = [*([self._loop] if self._loop else []), *self._tasks, *self._edits]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=CLOSE_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _clock(when: datetime) -> str:
    """``01:02 UTC`` (SQLite gives naive UTC datetimes back)."""
    aware = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return aware.strftime("%H:%M UTC")

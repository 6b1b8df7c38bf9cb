"""Triage of alerts, so that an alert storm stays readable and nothing is lost.

Every alert POSTed to ``/alerts``, and every alert another bot or integration posts in an
alert channel ("forwarded"), ends in exactly one state (``AlertRow.status``):

* **grouped** — an alert like one seen in the last ``alert_group_window_s``
  (``alerts.grouping.group_key``) joins that alert's group: no card, no investigation;
  the group's card is edited ("+N similar alerts"), the alert gets its verdict.
* **queued → investigating → concluded / failed / cancelled** — the first alert of a
  group gets a card and an investigation in its thread, while fewer than
  ``max_concurrent_investigations + max_queued_investigations`` alerts of the channel
  are admitted (waiting or running).
* **deferred** — beyond that the alert is only stored; a pump admits deferred alerts,
  most severe first, as investigations end (and after a crash: ``bot.intake._sweep``).

These decisions, the storm's counts and the storm message are the database's
(``store.triage.storms``), so replicas sharing one database triage as one: two similar alerts
reaching two replicas at once make one group, one card, one investigation, and a restarted replica
edits the storm message already posted. What the storm shows in Slack: ``bot.intake._storm_board``.
An admitted alert becomes a work row (``store.queue.work``) that any replica may run (``run``). At
shutdown nothing is posted: alerts whose row is queued or running stay ``queued`` (handed on),
alerts still waiting for their card are stored as ``deferred``; both are resumed on the next start.

A forwarded alert's own message plays the card; a grouped one gets a 🔗 and a group note."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from agent.run import alert_request_text
from alerts.grouping import group_key
from alerts.parse import Alert
from bot.intake._storm_board import StormBoard
from bot.intake._sweep import Sweeper
from bot.slack.errors import SLACK_ERRORS
from bot.slack.reporter import SlackReporter
from bot.work.contracts import Investigate
from bot.work.worker import Coordinator, ThreadRef, Unavailable
from config.settings import SlackSettings
from store.queue.work import Job, priority
from store.schema import AlertStatus, WorkKind
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses
from store.triage.storms import StormStore

log = logging.getLogger(__name__)

Remember = Callable[[str, str], Awaitable[object]]
GROUPED_REACTION = "link"  # on a forwarded alert's message when it joins a group
FREES_ROOM = (AlertStatus.CONCLUDED, AlertStatus.FAILED, AlertStatus.CANCELLED)


class AlertTriage:
    """Groups, admits, defers and resumes the alerts of one channel.

    Alerts it adopts at start-up: ``slack_channel == channel`` when ``own_rows_only``
    (an alert channel), else every row outside ``exclude_channels`` (the webhook
    channel: its cards, alerts without a card yet, and rows of unknown channels).
    """

    def __init__(
        self,
        settings: SlackSettings,
        *,
        channel: str,
        alerts: AlertStore,
        coordinator: Coordinator,
        reporter: SlackReporter,
        investigate: Investigate,
        remember_thread: Remember,
        update_interval: float = 2.0,
        own_rows_only: bool = False,
        exclude_channels: tuple[str, ...] = (),
    ) -> None:
        self.channel = channel
        self.alerts = alerts
        self.coordinator = coordinator
        self.reporter = reporter
        self.investigate = investigate
        self.remember_thread = remember_thread
        self._only = channel if own_rows_only else None
        self._exclude = exclude_channels
        capacity = settings.max_concurrent_investigations + settings.max_queued_investigations
        self.storms = StormStore(
            alerts.db,
            channel,
            capacity=capacity,
            window_s=settings.alert_group_window_s,
            replica=coordinator.replica,
            lease_s=coordinator.queue.lease.total_seconds(),
        )
        self.sweeper = Sweeper(self.sweep, settings.storm_sweep_s, f"sweep {channel}")
        self.statuses = AlertStatuses(alerts.db)
        self.board = StormBoard(reporter, self.storms, alerts, interval=update_interval)
        self._launching: set[str] = set()  # admitted here, card being posted
        self._pump: asyncio.Task[None] | None = None
        self._pump_again = False
        self._tasks: set[asyncio.Task[None]] = set()  # card posts, run hand-overs
        self._posting: set[asyncio.Task[Any]] = set()  # of those, waiting to post a card
        self._closing = False

    @property
    def update_interval(self) -> float:
        """Seconds between two edits of one message in place."""
        return self.board.interval

    @update_interval.setter
    def update_interval(self, seconds: float) -> None:
        self.board.interval = seconds

    async def counts(self) -> dict[str, int]:
        """The current storm's alerts by status (``/healthz``); empty between storms."""
        view = await self.storms.view()
        return view.counts if view is not None else {}

    async def totals(self) -> dict[str, int]:
        """Every alert this channel triaged, by status (``/healthz``)."""
        return await self.statuses.counts(channel=self._only, exclude_channels=self._exclude)

    async def resume(self) -> None:
        """At start-up: resume what an earlier run left, then keep sweeping."""
        await self.sweep()
        self.sweeper.start()

    async def sweep(self) -> None:
        """Place alerts not placed yet; admit again what a dead replica left."""
        aged = self.sweeper.grace_s  # left to its own dispatch first (``_sweep``)
        received = await self.statuses.by_status(
            AlertStatus.RECEIVED, channel=self._only, exclude_channels=self._exclude, for_s=aged
        )
        for row in received:
            if self._closing:
                return
            card = row.slack_ts if row.slack_channel == self.channel else None
            await self.dispatch(row.to_alert(), message_ts=card)
        storm = await self.storms.adopt(own_rows_only=self._only is not None, exclude=self._exclude)
        if storm is not None and not self._closing:
            self.board.storm_changed(storm)
            self._kick_pump()

    async def dispatch(self, alert: Alert, *, message_ts: str | None = None) -> None:
        """A stored alert: group it, admit it or defer it.

        ``message_ts``: a forwarded alert's own message in this channel (its "card").
        """
        placed = await self.storms.place(alert.id, group_key(alert), thread_ts=message_ts)
        if placed is None:
            return  # placed by another replica's sweep, which launches it
        self.board.storm_changed(placed.storm_id)
        if placed.status == AlertStatus.GROUPED:
            if message_ts is not None:
                self._spawn(self._mark_grouped(message_ts))
            self.board.group_changed(placed.leader_id)
        elif placed.status == AlertStatus.QUEUED:
            await self._admitted(alert, message_ts)

    async def _mark_grouped(self, ts: str) -> None:
        """React 🔗 on a grouped forwarded alert (a reaction is not a new message)."""
        try:
            await self.reporter.client.reactions_add(
                channel=self.channel, timestamp=ts, name=GROUPED_REACTION
            )
        except SLACK_ERRORS as error:  # the row and the group note account for it
            log.info("could not mark %s in %s as grouped: %s", ts, self.channel, error)

    async def _admitted(self, alert: Alert, card_ts: str | None) -> None:
        """A queued alert: its card and run start (in the background unless it has one)."""
        self._launching.add(alert.id)
        if card_ts is not None:
            await self._launch(alert, card_ts)  # nothing to post: hand over right away
        else:
            self._spawn(self._launch(alert, None))

    async def _launch(self, alert: Alert, card_ts: str | None) -> None:
        """Post the card (unless it has one) and hand the investigation to the coordinator."""
        if card_ts is None:
            card = await self.board.render_group(alert.id)
            posting = asyncio.current_task()
            assert posting is not None  # spawned by ``_admitted``
            self._posting.add(posting)
            try:
                card_ts = await self.reporter.post_top(self.channel, card)
            finally:
                self._posting.discard(posting)
            if card_ts is None:
                log.error("alert %s stored but its card could not be posted", alert.id)
                self._launching.discard(alert.id)
                await self._move(alert.id, AlertStatus.FAILED)
                return
            # the alert's card: ours, or the one recorded first (a launch taken over)
            card_ts = await self.board.card_posted(alert.id, card_ts, card)
            await self.remember_thread(self.channel, card_ts)
        announce = await self.board.quiet()
        job = Job(
            WorkKind.ALERT,
            self.channel,
            card_ts,
            alert_id=alert.id,
            priority=priority(WorkKind.ALERT, alert.severity),
            launched_by=self.storms.replica,  # fenced: not if the launch was taken over
        )
        if self._closing:
            return  # deferred by ``close``
        self._launching.discard(alert.id)
        thread = ThreadRef(self.channel, card_ts)
        if not await self.coordinator.submit(thread, job, announce=announce):
            await self._move(alert.id, AlertStatus.DEFERRED)  # shutting down: resumed next start

    async def run(self, thread: ThreadRef, alert: Alert) -> None:
        """Investigate a queued alert row (``bot.runners``), also one taken over."""
        status = AlertStatus.FAILED
        try:  # a shutdown may cancel us while the status is written: still ends as queued
            await self._move(alert.id, AlertStatus.INVESTIGATING)
            await self.investigate(thread, alert_request_text(alert), alert)
            stored = await self.alerts.get(alert.id)
            if stored is not None and stored.verdict:
                status = AlertStatus.CONCLUDED
                await self.statuses.conclude_group(alert.id)
                self.board.group_changed(alert.id)
        except Unavailable:
            status = AlertStatus.QUEUED  # its row waits in the queue to run again
            raise
        except asyncio.CancelledError:  # closing: handed on
            status = AlertStatus.QUEUED if self.coordinator.closing else AlertStatus.CANCELLED
            raise
        finally:
            await self._move(alert.id, status)

    async def dropped(self, alert_id: str, status: AlertStatus = AlertStatus.CANCELLED) -> None:
        """The alert's row ended without running here: stopped while queued
        (``cancelled``), or given up after its last attempt (``failed``)."""
        await self._move(alert_id, status)

    async def _move(self, alert_id: str, status: AlertStatus) -> None:
        storm = await self.storms.move(alert_id, status)
        if storm is not None and not self._closing:
            self.board.storm_changed(storm)
        if status in FREES_ROOM:
            self._kick_pump()

    def _kick_pump(self) -> None:
        """Admit deferred alerts if there is room (a run ended, or at start-up)."""
        self._pump_again = True
        if not self._closing and (self._pump is None or self._pump.done()):
            self._pump = asyncio.create_task(self._run_pump(), name=f"deferred {self.channel}")

    async def _run_pump(self) -> None:
        while self._pump_again and not self._closing:
            self._pump_again = False
            while not self._closing and (rows := await self.storms.admit()):
                for row in rows:
                    card = row.slack_ts if row.slack_channel == self.channel else None
                    await self._admitted(row.to_alert(), card)
                if rows[0].storm_id is not None:
                    self.board.storm_changed(rows[0].storm_id)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait until admitted alerts have their card and run, and the board is shown (tests)."""
        while self._tasks or (self._pump is not None and not self._pump.done()):
            await asyncio.wait([*self._tasks, *([self._pump] if self._pump else [])])
        await self.board.drain()

    async def edits_done(self) -> None:
        """Wait until the pending edits in place (cards, storm message) are made (tests)."""
        await self.drain()
        await self.board.edits_done()

    def stop(self) -> None:
        """Shutdown begins: admit nothing more, post and edit nothing more.

        Only card posts are cancelled: nothing is cancelled inside a database
        transaction (a cancelled SQLite transaction can keep the write lock); the pump
        and the hand-overs stop at their next step.
        """
        self._closing = True
        self.sweeper.stop()
        self.board.stop()
        for task in self._posting:
            task.cancel()

    async def close(self) -> None:
        """After the coordinator stopped: store waiting alerts as deferred, post nothing."""
        self.stop()
        await self.sweeper.close()
        await asyncio.gather(
            *([self._pump] if self._pump else []), *self._tasks, return_exceptions=True
        )
        await self.board.close()
        for alert_id in list(self._launching):
            await self.storms.move(alert_id, AlertStatus.DEFERRED)
        self._launching.clear()

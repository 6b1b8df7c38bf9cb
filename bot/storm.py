"""Triage of alerts, so that an alert storm stays readable and nothing is lost.

Every alert POSTed to ``/alerts``, and every alert another bot or integration posts
in an alert channel ("forwarded"), ends in exactly one state (``AlertRow.status``):

* **grouped** — an alert like one seen in the last ``alert_group_window_s`` (same
  source, title with numbers blurred, and primary indicator: ``group_key``) joins that
  alert's group: no new card, no investigation; the group's card is edited in place
  ("+N similar alerts") and the alert gets the group's verdict (``group_id``).
* **queued → investigating → concluded / failed / cancelled** — the first alert of a
  group gets a card and an investigation in its thread, while fewer than
  ``max_concurrent_investigations + max_queued_investigations`` such alerts are
  admitted (waiting or running).
* **deferred** — beyond that the alert is only stored; a pump admits deferred alerts,
  most severe first, as investigations end (and at start-up, after a restart).

When more than a couple of alerts wait, one **storm message** per channel (posted
once, then edited in place, coalesced) counts the states, and queued alerts get no
per-thread "queued" notice. An admitted alert becomes a work row (``store.work``)
that any replica may run (``run``). At shutdown nothing is posted: alerts whose
row is queued or running stay ``queued`` (the row is handed on), alerts still
waiting for their card are stored as ``deferred``; both are resumed on the next
start. Storm counts and groups are this replica's (kept in memory).

A forwarded alert's own message plays the card: no card is posted, it is investigated
in its own thread (also when resumed after a restart). A grouped forwarded alert gets
a 🔗 reaction (not a message), and the group is shown by one note in the thread of
its first alert, posted when the first similar alert joins, then edited in place.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent.alerts import Alert
from agent.concluder import VERDICT_LABELS
from bot.blocks import SAFE_POST_FLAGS, Message
from bot.cards import group_card, group_note, storm_message
from bot.coordinator import Coordinator, ThreadRef, Unavailable
from bot.edited import SLACK_ERRORS, EditedMessage
from bot.listeners import Investigate, alert_request_text
from bot.reporter import SlackReporter
from config.settings import SlackSettings
from store.alerts import AlertStore
from store.work import Job, priority

log = logging.getLogger(__name__)

QUIET_QUEUE = 2  # up to this many waiting alerts get their own "queued" notice
MAX_GROUPS = 2000
_DIGITS = re.compile(r"\d+")
Remember = Callable[[str, str], Awaitable[object]]
GROUPED_REACTION = "link"  # on a forwarded alert's message when it joins a group


def group_key(alert: Alert) -> str:
    """Alerts with equal keys are "the same alert again" (see the module docstring)."""
    title = " ".join(_DIGITS.sub("#", alert.title.lower()).split())
    ranked = sorted(alert.indicators, key=lambda i: i.private)  # public ones first
    indicator = f"{ranked[0].kind}:{ranked[0].value.lower()}" if ranked else ""
    return f"{alert.source}|{title}|{indicator}"


@dataclass
class Group:
    """Alerts treated as one: the leader is investigated, members join it."""

    leader: Alert
    started: float
    card: EditedMessage
    members: int = 0
    verdict: str | None = None  # label, once the leader concluded
    thread_ts: str | None = None  # a forwarded leader's message: the note goes in its thread
    noting: bool = False  # the note (forwarded leaders) is posted or being posted

    def render(self) -> Message:
        if self.thread_ts is not None:
            return group_note(similar=self.members, verdict=self.verdict)
        return group_card(self.leader, similar=self.members, verdict=self.verdict)


@dataclass
class Storm:
    """Counts since the channel was last idle; every alert sits in exactly one state."""

    since: str = ""
    counts: Counter[str] = field(default_factory=Counter)

    def move(self, old: str | None, new: str) -> None:
        if old is not None:
            self.counts[old] -= 1
        self.counts[new] += 1

    @property
    def waiting(self) -> int:
        return self.counts["queued"] + self.counts["deferred"]

    @property
    def idle(self) -> bool:
        return self.waiting + self.counts["investigating"] == 0


class AlertTriage:
    """Groups, admits, defers and resumes the alerts of one channel.

    Deferred rows it resumes: ``slack_channel == channel`` when ``own_rows_only``
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
        self.settings = settings
        self.channel = channel
        self.alerts = alerts
        self.coordinator = coordinator
        self.reporter = reporter
        self.investigate = investigate
        self.remember_thread = remember_thread
        self.update_interval = update_interval
        self._only = channel if own_rows_only else None
        self._exclude = exclude_channels or None
        self.capacity = settings.max_concurrent_investigations + settings.max_queued_investigations
        self.storm = Storm()
        self.totals: Counter[str] = Counter()  # since start, final states and received
        self._groups: OrderedDict[str, Group] = OrderedDict()
        self._admitted = 0  # queued or investigating, ours
        self._queued: set[str] = set()  # admitted, card being posted
        self._handed: set[str] = set()  # admitted, its work row queued
        self._backlog = 0  # deferred alerts in the database (ours and earlier runs')
        self._board: EditedMessage | None = None  # the storm message, while a storm lasts
        self._pump: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # card posts, run hand-overs
        self._edits: set[asyncio.Task[None]] = set()  # edits in place
        self._closing = False

    def _edited(self) -> EditedMessage:
        return EditedMessage(
            self.reporter.client,
            self.reporter.pacer,
            self.channel,
            self.update_interval,
            self._edits,
        )

    def counts(self) -> dict[str, int]:
        """The current storm's counts (``/healthz``); all zero between storms."""
        return {k: v for k, v in self.storm.counts.items() if v}

    async def resume(self, *, requeue: bool = True) -> None:
        """At start-up: pick up alerts deferred (or interrupted) by an earlier run.

        ``requeue=False`` when the caller already requeued (several channels' triages).
        """
        if requeue:
            await self.alerts.requeue_interrupted()  # one socbot per database
        counts = await self.alerts.status_counts(channel=self._only, exclude_channels=self._exclude)
        self._backlog = counts.get("deferred", 0)
        self._kick_pump()

    async def dispatch(self, alert: Alert, *, message_ts: str | None = None) -> None:
        """A stored alert: group it, admit it or defer it.

        ``message_ts``: a forwarded alert's own message in this channel (its "card").
        """
        self.totals["received"] += 1
        if not self.storm.since:
            self.storm.since = datetime.now(UTC).strftime("%H:%M UTC")
        key = group_key(alert)
        group = self._group(key)
        if group is not None:
            await self._join(group, alert, message_ts)
            return
        group = Group(alert, time.monotonic(), self._edited(), thread_ts=message_ts)
        self._groups[key] = group
        while len(self._groups) > MAX_GROUPS:
            self._groups.popitem(last=False)
        if self._backlog or self._admitted >= self.capacity:
            await self._defer(alert)
            return
        await self._admit(alert, None, message_ts)

    def _group(self, key: str) -> Group | None:
        window = self.settings.alert_group_window_s
        now = time.monotonic()
        while self._groups and next(iter(self._groups.values())).started < now - window:
            self._groups.popitem(last=False)  # oldest first: insertion order is time order
        return self._groups.get(key) if window > 0 else None

    async def _join(self, group: Group, alert: Alert, message_ts: str | None) -> None:
        self._set("grouped", None)
        self.totals["grouped"] += 1
        await self.alerts.set_status(alert.id, "grouped", group_id=group.leader.id)
        if group.verdict is not None:
            await self.alerts.conclude_group(group.leader.id)
        group.members += 1
        if message_ts is not None:
            self._spawn(self._mark_grouped(message_ts))
        self._refresh(group)

    async def _mark_grouped(self, ts: str) -> None:
        """React 🔗 on a grouped forwarded alert (a reaction is not a new message)."""
        try:
            await self.reporter.client.reactions_add(
                channel=self.channel, timestamp=ts, name=GROUPED_REACTION
            )
        except SLACK_ERRORS as error:  # the row and the group note account for it
            log.info("could not mark %s in %s as grouped: %s", ts, self.channel, error)

    def _refresh(self, group: Group) -> None:
        """Show the group's state: its card, or the note in its first alert's thread."""
        if group.thread_ts is None or group.card.ts is not None:
            group.card.show(group.render)
        elif not group.noting and group.members:
            group.noting = True
            self._spawn(self._post_note(group, group.thread_ts))

    async def _post_note(self, group: Group, thread_ts: str) -> None:
        """Post the group note in the first alert's thread (background: runs go first)."""
        shown = group.render()
        try:
            async with self.reporter.pacer.slot(self.channel, background=True):
                response = await self.reporter.client.chat_postMessage(
                    channel=self.channel,
                    thread_ts=thread_ts,
                    text=shown["text"],
                    blocks=shown["blocks"],
                    unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                    unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
                )
        except SLACK_ERRORS as error:  # the rows keep the grouping; the next join retries
            log.warning("could not post the group note in %s: %s", self.channel, error)
            group.noting = False
            return
        group.card.posted(str(response["ts"]))
        if group.render() != shown:  # joined or concluded while it was posted
            group.card.show(group.render)

    async def _defer(self, alert: Alert) -> None:
        self._backlog += 1
        self._set("deferred", None)
        await self.alerts.set_status(alert.id, "deferred")
        self._kick_pump()

    async def _admit(self, alert: Alert, old: str | None, card_ts: str | None = None) -> None:
        """Count the alert as queued; its card and run start in the background."""
        self._admitted += 1
        self._queued.add(alert.id)
        self._set("queued", old)
        await self.alerts.set_status(alert.id, "queued")
        if card_ts is not None:
            await self._launch(alert, card_ts)  # nothing to post: hand over right away
        else:
            self._spawn(self._launch(alert, card_ts))

    async def _launch(self, alert: Alert, card_ts: str | None) -> None:
        """Post the card (unless it has one) and hand the investigation to the coordinator."""
        group = self._groups.get(group_key(alert))
        if group is not None and group.leader.id != alert.id:
            group = None
        if card_ts is None:
            card = group.render() if group is not None else group_card(alert, similar=0)
            card_ts = await self.reporter.post_top(self.channel, card)
            if card_ts is None:
                log.error("alert %s stored but its card could not be posted", alert.id)
                self._queued.discard(alert.id)
                await self._ended(alert.id, "queued", "failed")
                return
            await self.alerts.set_slack_message(alert.id, self.channel, card_ts)
            await self.remember_thread(self.channel, card_ts)
        if group is not None and group.thread_ts is None:
            group.card.posted(card_ts)  # members who joined meanwhile are shown
        thread = ThreadRef(self.channel, card_ts)
        announce = self.storm.waiting <= QUIET_QUEUE and self._board is None
        job = Job(
            "alert",
            self.channel,
            card_ts,
            alert_id=alert.id,
            priority=priority("alert", alert.severity),
        )
        self._queued.discard(alert.id)
        self._handed.add(alert.id)  # before submit: the run may start inside it
        if not await self.coordinator.submit(thread, job, announce=announce):
            self._handed.discard(alert.id)  # shutting down: resumed on the next start
            await self._ended(alert.id, "queued", "deferred")

    async def run(self, thread: ThreadRef, alert: Alert) -> None:
        """Investigate a queued alert row (``bot.runners``), also one taken over."""
        group = self._groups.get(group_key(alert))
        await self._investigate(
            thread, alert, group if group and group.leader.id == alert.id else None
        )

    async def dropped(self, alert_id: str) -> None:
        """The alert's row ended without running (stopped while queued, or given up)."""
        counted = alert_id in self._handed
        self._handed.discard(alert_id)
        await self._ended(alert_id, "queued", "cancelled", counted=counted)

    async def _investigate(self, thread: ThreadRef, alert: Alert, group: Group | None) -> None:
        counted = alert.id in self._handed  # queued here (not a row another replica left)
        self._handed.discard(alert.id)
        if counted:
            self._set("investigating", "queued")
        status = "failed"
        try:  # a shutdown may cancel us while the status is written: still ends as queued
            await self.alerts.set_status(alert.id, "investigating")
            await self.investigate(thread, alert_request_text(alert), alert)
            stored = await self.alerts.get(alert.id)
            if stored is not None and stored.verdict:
                status = "concluded"
                await self.alerts.conclude_group(alert.id)
                if group is not None:
                    group.verdict = VERDICT_LABELS.get(stored.verdict, stored.verdict)
                    if group.members:  # a lone alert's verdict is in its thread: save edits
                        self._refresh(group)
        except Unavailable:
            status = "queued"  # its row waits in the queue to run again
            raise
        except asyncio.CancelledError:
            status = "queued" if self.coordinator.closing else "cancelled"  # closing: handed on
            raise
        finally:
            await self._ended(alert.id, "investigating", status, counted=counted)

    async def _ended(self, alert_id: str, old: str, status: str, *, counted: bool = True) -> None:
        """The alert left ``old``; ``counted``: it was admitted here (storm counts)."""
        if counted:
            self._admitted -= 1
            self._set("failed" if status == "cancelled" else status, old)
        if status == "deferred":
            self._backlog += 1
        elif status != "queued":
            self.totals[status] += 1
        await self.alerts.set_status(alert_id, status)
        self._kick_pump()

    def _kick_pump(self) -> None:
        if self._closing or (self._pump is not None and not self._pump.done()):
            return
        if self._backlog and self._admitted < self.capacity:
            self._pump = asyncio.create_task(self._run_pump(), name="deferred alerts")

    async def _run_pump(self) -> None:
        """Admit deferred alerts, most severe first, while there is room."""
        while self._backlog and self._admitted < self.capacity and not self._closing:
            rows = await self.alerts.by_status(
                "deferred",
                limit=self.capacity - self._admitted,
                channel=self._only,
                exclude_channels=self._exclude,
            )
            if not rows:
                self._backlog = 0
                break
            for row in rows:
                self._backlog -= 1
                old = "deferred" if self.storm.counts["deferred"] > 0 else None
                card = row.slack_ts if row.slack_channel == self.channel else None
                await self._admit(row.to_alert(), old, card)

    def _set(self, new: str, old: str | None) -> None:
        """Move one alert between states and show it on the storm message."""
        self.storm.move(old, new)
        if self._board is None and self.storm.waiting > QUIET_QUEUE:
            self._board = self._edited()
            self._spawn(self._open_board(self._board))
        elif self._board is not None:
            self._board.show(self._render_board)
        if self.storm.idle:  # the storm is over: last edit, the next one gets a new message
            if self._board is not None:
                self._board.show(self._render_board_over(dict(self.storm.counts)))
                self._board = None
            self.storm = Storm()

    async def _open_board(self, board: EditedMessage) -> None:
        ts = await self.reporter.post_top(self.channel, self._render_board(), background=False)
        if ts is not None:
            board.posted(ts)  # counts changed while it was posted: edited right away

    def _render_board(self) -> Message:
        return storm_message(dict(self.storm.counts), since=self.storm.since, over=False)

    def _render_board_over(self, counts: dict[str, int]) -> Callable[[], Message]:
        since = self.storm.since
        return lambda: storm_message(counts, since=since, over=True)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait until admitted alerts have their card and run (tests)."""
        while self._tasks or (self._pump is not None and not self._pump.done()):
            await asyncio.wait([*self._tasks, *([self._pump] if self._pump else [])])

    async def edits_done(self) -> None:
        """Wait until the pending edits in place (cards, storm message) are made (tests)."""
        while self._edits:
            await asyncio.wait(list(self._edits))

    def stop(self) -> None:
        """Shutdown begins: admit nothing more, post no more cards."""
        self._closing = True
        for task in [*([self._pump] if self._pump else []), *self._tasks]:
            task.cancel()

    async def close(self) -> None:
        """After the coordinator stopped: store waiting alerts as deferred, post nothing."""
        self.stop()
        tasks = [*([self._pump] if self._pump else []), *self._tasks, *self._edits]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for alert_id in list(self._queued):
            await self.alerts.set_status(alert_id, "deferred")
        self._queued.clear()

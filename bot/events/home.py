"""App Home: each person's own page of socbot in Slack (``bot.blocks.home``).

* ``app_home_opened`` (the Home tab): the person's Home is published (``views.publish``)
  unless this replica published it less than ``slack.home_refresh_s`` ago or is about to
  (nothing changed since, or the refresh is already due).
* A case changed (``changed``: the ``case_post`` runner calls it once the thread is told of
  a take, assignment, resolution, reopening or reminder): the Homes of the people who
  opened theirs in the last hour (on any replica: ``store.cases.home_openers``) and may
  see the case are published again, at most once a person per ``slack.home_refresh_s``
  and at most ``MOST`` people a change (``bot.events._home_refresh``; the pace is kept
  per replica).
* The queue of a channel moved (``moved``: the worker's ``watchers`` — a row queued,
  started or ended; a run ends once its new case and verdict are in — and the policy
  gate's, an alert held by a budget): the same refresh for that channel, the channels
  that move while one is under way handled by the same task (a storm of alerts costs
  each person at most one publish per ``slack.home_refresh_s``).
* *Take it* on the Home (``bot.decisions.cases``, decided as in the case's thread): the
  clicker's Home is published again at once (``clicked``), with what became of the click.

What a Home shows is only what the person may see — the pane's rule
(``bot.events._pane_rules.visible_channels`` over Slack's channel members, cached a
minute: ``bot.slack.members``), fail closed: every row and figure is read for the
channels alerts live in (the alert channels, the webhook channel, the channels policy
rules route to) and the channels of the person's own open cases, those the person is a
member of (``store.cases.home``: each read walks an index of those channels, bounded by
what is shown), and a Slack error about a channel shows nothing of it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.home import HomeFigures, HomeRow, home_view
from bot.events._home_refresh import MOST, REMEMBER_S, REMEMBERED, Refresher
from bot.events._pane_rules import visible, visible_channels
from bot.events.scope import alert_homes
from bot.intake.policy.gate import PolicyGate
from bot.slack.errors import SLACK_ERRORS
from bot.slack.members import ChannelMembers
from bot.work.worker import Coordinator
from config.settings import Settings
from store.cases import home_openers
from store.cases.home import CHANNELS, home_data, owned_channels
from store.db.engine import Database
from store.schema import CaseRow

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
_USER = re.compile(r"[UW][A-Z0-9]{2,20}")
_LATELY = timedelta(seconds=REMEMBER_S)


class AppHome:
    """The Home tab's listener, its publishing and its refreshes (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        members: ChannelMembers,
        client: AsyncWebClient,
        *,
        gate: PolicyGate | None = None,
        queue: Coordinator | None = None,
        most: int = MOST,
    ) -> None:
        self.db = db
        self.settings = settings
        self.members = members
        self.client = client
        self.refresh = Refresher(self.publish, every_s=settings.slack.home_refresh_s, most=most)
        self.routes = gate.route_channels if gate is not None else list  # where rules route
        self._moved: set[str] = set()  # channels whose Homes wait for ``_drain``
        self._draining: asyncio.Task[None] | None = None
        for source in (gate, queue):  # an alert held; a row queued, started, ended
            if source is not None:
                source.watchers.append(self.moved)

    def register(self, app: AsyncApp) -> None:
        app.event("app_home_opened")(self.on_opened)

    async def on_opened(self, ack: Ack, event: dict[str, Any]) -> None:
        await ack()
        user = event.get("user")
        if event.get("tab") != "home" or not isinstance(user, str) or not _USER.fullmatch(user):
            return  # the Messages tab, or a payload of the wrong shape
        try:
            await home_openers.opened(self.db, user)
        except Exception:  # fail open: this Home is still published, not refreshed later
            log.exception("could not record that %s opened their Home", user)
        if not self.refresh.fresh(user):
            await self.publish(user)

    async def clicked(self, user: str, note: str) -> None:
        """After a click on ``user``'s Home: published again now, ``note`` first."""
        await self.publish(user, note)

    async def changed(self, case: CaseRow) -> None:
        """``case`` changed: refresh the Homes of recent openers who may see it."""
        if case.channel:
            scheduled = await self._refresh(case.channel)
            log.info("case %s changed: %d Homes to refresh", case.id, scheduled)

    def moved(self, channel: str) -> None:
        """``channel``'s queue moved (a row queued, started or ended: a run's end is when its
        new case and verdict are in) or an alert was held there: as ``changed``, in one
        task for all the channels that moved meanwhile (a storm costs a set of channels)."""
        if not channel:
            return
        self._moved.add(channel)
        if self._draining is None or self._draining.done():
            self._draining = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        while self._moved:
            channel = self._moved.pop()
            try:
                await self._refresh(channel)
            except Exception:  # fail open: the next move or opening publishes it
                log.exception("could not refresh the Homes of %s", channel)

    async def _refresh(self, channel: str) -> int:
        """Schedule the Homes of recent openers who may see ``channel``; how many."""
        recent = await home_openers.recent(self.db, _LATELY, REMEMBERED)
        if not recent:
            return 0  # nobody's Home to refresh: Slack is not asked who is a member
        members = await self.members.of(channel)
        users = [u for u in recent if visible(u, channel, members)]
        return len(self.refresh.soon(users))

    async def publish(self, user: str, note: str = "") -> None:
        """Read ``user``'s Home and publish it (a Slack error is logged)."""
        self.refresh.published(user)  # from the read on: a change after it refreshes again
        view = await self.view(user, note)
        try:
            await self.client.views_publish(user_id=user, view=view)
        except SLACK_ERRORS as error:
            log.warning("could not publish %s's Home: %s", user, error)

    async def view(self, user: str, note: str = "") -> dict[str, Any]:
        """``user``'s Home view: only the channels they are a member of."""
        candidates = [*alert_homes(self.settings.slack), *self.routes()]
        candidates += await owned_channels(self.db, user)
        wanted = [c for c in dict.fromkeys(candidates) if c][:CHANNELS]
        members = {c: await self.members.of(c) for c in wanted}
        data = await home_data(self.db, user, visible_channels(user, wanted, members))
        figures = HomeFigures(
            waiting=data.queue.waiting,
            running=data.queue.running,
            held=data.queue.held,
            cases=data.week.cases,
            decided=data.week.decided,
            agreed=data.week.agreed,
            cost_usd=data.week.cost_usd,
        )
        return home_view(
            _rows(data.mine),
            _rows(data.unowned),
            _rows(data.verdicts),
            self.settings.web.base_url or "",
            figures=figures,
            notice=note,
        )

    async def close(self) -> None:
        if self._draining is not None:
            self._draining.cancel()
            await asyncio.gather(self._draining, return_exceptions=True)
        await self.refresh.close()


def _rows(cases: Sequence[CaseRow]) -> list[HomeRow]:
    return [
        HomeRow(c.id, c.title or "", c.severity or "", c.investigation_id, c.socbot_verdict or "")
        for c in cases
    ]

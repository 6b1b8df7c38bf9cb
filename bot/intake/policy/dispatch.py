"""The alert policy in front of a channel's triage: ``PolicedTriage.dispatch`` asks the
``PolicyGate`` first, then hands the alert to its own triage, to the triage of the
channel a ``route`` rule names, or to nobody (ignored, suppressed, over budget).

An alert forwarded into an alert channel that the policy holds gets a 🔕 reaction on
its message (a reaction, not a message: quiet), one it routes a ↪ reaction; the
alert's card and thread are then in the routed channel. An alert a budget held is
followed the same way when its window frees (``bot.intake.policy.held``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from alerts.model import Alert
from bot.intake.policy.gate import PolicyGate, Verdict
from bot.slack.errors import SLACK_ERRORS
from bot.slack.reporter import SlackReporter
from bot.work.contracts import AlertDispatch

log = logging.getLogger(__name__)

Routes = Callable[[str], AlertDispatch]
HELD_REACTION = "no_bell"
ROUTED_REACTION = "arrow_right_hook"


class PolicedTriage:
    """``AlertDispatch`` for one channel, with the policy decided first."""

    def __init__(
        self,
        channel: str,
        home: AlertDispatch,
        gate: PolicyGate,
        routes: Routes,
        reporter: SlackReporter,
    ) -> None:
        self.channel = channel
        self.home = home
        self.gate = gate
        self.routes = routes
        self.reporter = reporter

    async def dispatch(self, alert: Alert, *, message_ts: str | None = None) -> None:
        verdict = await self.gate.decide(alert, channel=self.channel)
        await self.follow(verdict, alert, message_ts=message_ts)

    async def follow(
        self, verdict: Verdict, alert: Alert, *, message_ts: str | None = None
    ) -> None:
        """Do what ``verdict`` says with the alert (also for one a budget held until now)."""
        if not verdict.investigate:
            await self._react(message_ts, HELD_REACTION)
            return
        if verdict.channel is not None and verdict.channel != self.channel:
            await self.routes(verdict.channel).dispatch(alert)
            await self._react(message_ts, ROUTED_REACTION)
            return
        await self.home.dispatch(alert, message_ts=message_ts)

    async def _react(self, message_ts: str | None, name: str) -> None:
        if message_ts is None:
            return  # a webhook alert has no message of its own: nothing is posted
        try:
            await self.reporter.client.reactions_add(
                channel=self.channel, timestamp=message_ts, name=name
            )
        except SLACK_ERRORS as error:  # the alert's row and the counts say it anyway
            log.info("could not mark %s in %s: %s", message_ts, self.channel, error)

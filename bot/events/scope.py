"""Which past alerts a Slack request may see (``core.scope``), decided once per run.

* a run in a channel — an alert's investigation in its alert channel (a webhook alert's
  runs in the webhook channel), a mention or a thread question there: that channel only,
  since whatever is answered there its members read;
* a run in a DM — the assistant pane, a direct message: the channels where alerts live
  (``alert_homes``: the alert channels, the webhook channel and the channels the policy's
  ``route`` rules send alerts to, read at each run: rule files reload) that the asking person is
  a member of, by the pane's rule (``bot.events._pane_rules``, Slack's
  ``conversations.members`` through ``bot.slack.members``: a Slack error is no channel);
* anything else — a DM with nobody asking, an id of no known shape: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from bot.events._pane_rules import is_channel, visible_channels
from bot.slack.members import ChannelMembers
from config.settings import SlackSettings
from core.scope import NOTHING, Scope

_DM = re.compile(r"D[A-Z0-9]{2,20}")


def alert_homes(settings: SlackSettings, routed: Iterable[str] = ()) -> list[str]:
    """The channels alerts are posted in: the alert channels, the webhook channel and
    ``routed`` (the channels policy rules route alerts to)."""
    homes = [*settings.alert_channels, settings.webhook_channel, *routed]
    return [c for c in dict.fromkeys(homes) if c]


class Scoping:
    """``of(channel, user)``: the scope of a run in ``channel`` asked by ``user``;
    ``routed`` names the channels policy rules route alerts to (``PolicyGate.route_channels``,
    known once the gate is built: ``cli.serve`` sets it)."""

    def __init__(
        self,
        settings: SlackSettings,
        members: ChannelMembers,
        routed: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self.settings = settings
        self.members = members
        self.routed = routed

    async def of(self, channel: str, user: str | None) -> Scope:
        if is_channel(channel):
            return Scope.of([channel])
        if not user or not _DM.fullmatch(channel):
            return NOTHING
        homes = alert_homes(self.settings, self.routed())
        members = {c: await self.members.of(c) for c in homes}
        return Scope.of(visible_channels(user, homes, members))

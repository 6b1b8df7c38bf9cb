"""Whether an investigation streams into its thread or shows the updated checklist.

``slack.streaming = "auto"`` streams (``chat.startStream``, ``bot.slack.streaming``) where
the workspace allows it; ``"off"`` never does. Slack says no with an error code, and the
code says how far the no reaches: the method or feature is not there for this app or
workspace (``WORKSPACE_REFUSALS``: plan, workspace setting, token) — or not in this
channel (``CHANNEL_REFUSALS``: a channel type, a recipient Slack will not take). The first
refusal is remembered for the workspace or the channel in ``seen_events``
(``store.slack``), so every replica and restart knows it and no later run asks again;
when the key is pruned (a day) Slack is asked once more, so a workspace that turned
streaming on gets it. Other errors (a 5xx, a rate limit Slack kept up) decide nothing:
that run shows the checklist. ``CLOSED`` are the codes of a stream that ended under a
run (Slack ends a stream some five minutes after it started, or the person stopped it).
"""

from __future__ import annotations

import logging
from typing import Literal

from slack_sdk.errors import SlackApiError

from bot.slack.post_once import ThreadSearch
from store.slack import SlackStore

log = logging.getLogger(__name__)

StreamingMode = Literal["auto", "off"]

WORKSPACE_REFUSALS = frozenset(
    {
        "unknown_method",
        "feature_not_enabled",
        "not_allowed",
        "not_allowed_token_type",
        "missing_scope",
        "team_access_not_granted",
    }
)
CHANNEL_REFUSALS = frozenset(
    {
        "method_not_supported_for_channel_type",
        "missing_recipient_team_id",
        "missing_recipient_user_id",
        "restricted_action",
        "cannot_reply_to_message",
    }
)
CLOSED = frozenset(
    {
        "message_not_in_streaming_state",
        "stopped_by_user",
        "streaming_state_conflict",
        "message_not_found",
    }
)
KEY = "slack-streaming-refused:"


def error_code(error: BaseException) -> str:
    """Slack's error code of a refused call ('' for a network error)."""
    if isinstance(error, SlackApiError):
        return str(error.response.get("error") or "")
    return ""


class StreamGate:
    """Decides, per run, whether to stream; remembers Slack's refusals."""

    def __init__(self, search: ThreadSearch, store: SlackStore, mode: StreamingMode) -> None:
        self.search = search
        self.store = store
        self.mode = mode
        self._refused: set[str] = set()  # keys known refused in this process

    async def _keys(self, channel: str) -> tuple[str, str] | None:
        team = (await self.search.identity()).get("team_id")
        if not team:
            return None  # Slack cannot say who we are: no stream
        return f"{KEY}{team}", f"{KEY}{team}:{channel}"

    async def allows(self, channel: str) -> bool:
        """True when a run in ``channel`` should try streaming."""
        if self.mode == "off":
            return False
        keys = await self._keys(channel)
        if keys is None:
            return False
        for key in keys:
            if key in self._refused:
                return False
            if await self.store.seen(key):
                self._refused.add(key)
                return False
        return True

    async def recipient(self, user: str | None) -> tuple[str, str] | None:
        """(team, user) the stream is for: who asked, else socbot's own user (an alert)."""
        me = await self.search.identity()
        who = user or me.get("user_id")
        team = me.get("team_id")
        return (team, who) if team and who else None

    async def refused(self, channel: str, error: BaseException) -> bool:
        """Remember a refusal of ``chat.startStream``; True when it decides (it was one)."""
        code = error_code(error)
        keys = await self._keys(channel)
        if keys is None or code not in WORKSPACE_REFUSALS | CHANNEL_REFUSALS:
            return False
        key = keys[0] if code in WORKSPACE_REFUSALS else keys[1]
        self._refused.add(key)
        where = "this workspace" if code in WORKSPACE_REFUSALS else f"channel {channel}"
        log.warning("Slack refused streaming (%s) in %s: the checklist is used there", code, where)
        try:
            await self.store.claim(key)
        except Exception:  # fail open: remembered in this process at least
            log.exception("could not remember that streaming is refused")
        return True

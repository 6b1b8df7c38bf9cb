"""What the assistant pane may show a person (``bot.events.pane``): one rule, fail closed.

The pane never shows, offers or brings into a conversation an alert, a case or a verdict
from a channel the person is not a member of (Slack's ``conversations.members``, the check
the case buttons use: ``bot.slack.members``). A DM is nobody's alert channel. What Slack
sends as the pane's context and what a person types are read as shapes: a channel id, a
message ts, ``case #N`` — anything else is no context at all.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

_CHANNEL = re.compile(r"[CG][A-Z0-9]{2,20}")
_TS = re.compile(r"\d{1,12}\.\d{1,8}")
_CASE = re.compile(r"(?<![\w#])case\s*#(\d{1,9})(?!\d)", re.IGNORECASE)


def is_channel(value: str | None) -> bool:
    """A channel's id (public or private; a DM's is not one)."""
    return bool(value) and _CHANNEL.fullmatch(str(value)) is not None


def visible(user: str, channel: str | None, members: Collection[str]) -> bool:
    """Whether ``user`` may see what socbot knows of ``channel``: a member of it."""
    if not user or not is_channel(channel):
        return False
    return user in members


def visible_channels(
    user: str, candidates: Iterable[str | None], members_of: Mapping[str, Collection[str]]
) -> list[str]:
    """The candidates ``user`` may see, in order, each once."""
    seen: list[str] = []
    for channel in candidates:
        if channel and channel not in seen and visible(user, channel, members_of.get(channel, ())):
            seen.append(channel)
    return seen


def context_of(payload: Any) -> tuple[str, str | None] | None:
    """(channel, thread ts or None) of the pane's context as Slack sends it (``channel_id``,
    and ``thread_ts`` when there is one), or None when it names no channel."""
    if not isinstance(payload, Mapping):
        return None
    channel, thread_ts = payload.get("channel_id"), payload.get("thread_ts")
    if not isinstance(channel, str) or not is_channel(channel):
        return None
    if not isinstance(thread_ts, str) or not _TS.fullmatch(thread_ts):
        thread_ts = None
    return channel, thread_ts


def case_named(text: str) -> int | None:
    """The case a question names (``case #12``), or None."""
    found = _CASE.search(text)
    return int(found.group(1)) if found else None

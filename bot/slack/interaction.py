"""Answering a person who clicked: who they are, and an ephemeral note back to them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import SLACK_ERRORS

log = logging.getLogger(__name__)


def clicker(body: Mapping[str, Any]) -> str:
    """The id of the person behind an interactivity payload (button, dialog), or ``""``."""
    return str((body.get("user") or {}).get("id") or "")


def clicked_at(body: Mapping[str, Any]) -> tuple[str, str, str]:
    """Who clicked, in which channel, on which message (its ts); ``""`` for what is missing."""
    channel = str((body.get("channel") or {}).get("id") or "")
    return clicker(body), channel, str((body.get("message") or {}).get("ts") or "")


def clicked_thread(body: Mapping[str, Any]) -> str:
    """The thread of the message clicked on (its own ts when it is the thread's first)."""
    message = body.get("message") or {}
    return str(message.get("thread_ts") or message.get("ts") or "")


async def tell(
    client: AsyncWebClient, channel: str, user: str, text: str, thread_ts: str = ""
) -> None:
    """An ephemeral note to ``user`` (the record is what matters; failures are logged)."""
    if not channel:
        return
    try:
        await client.chat_postEphemeral(
            channel=channel, user=user, thread_ts=thread_ts or None, text=text
        )
    except SLACK_ERRORS as error:
        log.warning("could not tell %s: %s", user, error)

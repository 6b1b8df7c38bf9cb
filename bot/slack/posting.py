"""Posting a run's messages in its Slack thread: paced, unfurling off, retried.

``post_in_thread`` posts one rendered message through the channel's ``Pacer``
(never ``link_names``, unfurling off). ``post_until_accepted`` posts again after
each refusal (``Retry-After``, else exponential backoff) and gives up after a
bounded number of attempts. ``outcome_messages`` turns a finished run into the
messages the analyst reads: the conclusion or answer, then a one-sentence error or
the cancellation notice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.feedback import has_element, with_vote_buttons
from bot.blocks.investigation import (
    answer_messages,
    cancelled_message,
    conclusion_messages,
    error_message,
)
from bot.blocks.kit import SAFE_POST_FLAGS, Block, Message
from bot.blocks.stats import RunStats
from bot.blocks.status import OutcomeView
from bot.slack.errors import SLACK_ERRORS
from bot.slack.pacer import Pacer
from store.schema import InvestigationStatus

log = logging.getLogger(__name__)

POST_ATTEMPTS = 4  # outcome messages, beyond the client's own retries
POST_BACKOFF_S = 1.0


async def post_in_thread(
    client: AsyncWebClient,
    pacer: Pacer,
    *,
    channel: str,
    thread_ts: str,
    message: Message,
    metadata: dict[str, Any] | None = None,
) -> str:
    """Post a rendered message in a thread, paced, unfurling off, never ``link_names``.

    ``metadata``: Slack message metadata (``bot.slack.post_once``). Returns the new
    message's ts; raises ``SlackApiError`` when Slack refuses.
    """
    async with pacer.slot(channel):
        response = await client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=message["text"],
            blocks=message.get("blocks"),
            unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
            unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
            metadata=metadata,
        )
    return str(response["ts"])


async def post_until_accepted(
    client: AsyncWebClient,
    pacer: Pacer,
    *,
    channel: str,
    thread_ts: str,
    message: Message,
    what: str,
    attempts: int = POST_ATTEMPTS,
    backoff_s: float = POST_BACKOFF_S,
    metadata: dict[str, Any] | None = None,
) -> str | None:
    """Post ``message``, again after each refusal; its ts, or None when Slack never took it.

    ``what`` names the message in the log (e.g. the investigation id). A message whose
    feedback element Slack refuses (``invalid_blocks``) goes again at once with today's
    vote buttons (``bot.blocks.feedback``).
    """
    for attempt in range(1, attempts + 1):
        try:
            return await post_in_thread(
                client,
                pacer,
                channel=channel,
                thread_ts=thread_ts,
                message=message,
                metadata=metadata,
            )
        except SLACK_ERRORS as error:
            if _refused(error, "invalid_blocks") and has_element(message):
                log.info("the feedback element was refused for %s: buttons instead", what)
                message = with_vote_buttons(message)
                continue
            log.warning(
                "could not post the outcome of %s (%d/%d): %s", what, attempt, attempts, error
            )
            if attempt < attempts:
                await asyncio.sleep(max(retry_after(error), backoff_s * 2**attempt))
    return None


def outcome_messages(
    outcome: OutcomeView,
    indicators: tuple[str, ...],
    pages_url: str | None = None,
    *,
    alert: bool = False,
    case: Sequence[Block] = (),
    element: bool = False,
) -> list[Message]:
    """What the thread is told at the end of a run, in posting order (``pages_url``: the
    pages' ``web.base_url``, to link the investigation's page; ``alert``: the run
    investigated an alert: its conclusion offers "Suppress similar…"; ``case``: the blocks a
    conclusion ends with (its case's buttons, or an auto-resolved case's state);
    ``element``: its 👍 / 👎 as Slack's feedback element)."""
    messages: list[Message] = []
    stats = RunStats.from_outcome(outcome.usage, outcome.record)
    if outcome.conclusion is not None:
        messages += conclusion_messages(
            outcome.conclusion,
            investigation_id=outcome.investigation_id,
            limits_hit=list(outcome.limits_hit),
            indicators=indicators,
            review=outcome.review,
            stats=stats,
            suppress=alert,
            pages_url=pages_url,
            case=case,
            element=element,
        )
    elif outcome.answer:
        messages += answer_messages(
            outcome.answer,
            investigation_id=outcome.investigation_id,
            indicators=indicators,
            review=outcome.review,
            stats=stats,
            pages_url=pages_url,
        )
    if outcome.status == InvestigationStatus.FAILED:
        messages.append(error_message(outcome.error or "The investigation failed."))
    elif outcome.status == InvestigationStatus.CANCELLED:
        messages.append(cancelled_message())
    return messages


def _refused(error: BaseException, code: str) -> bool:
    data = error.response.data if isinstance(error, SlackApiError) else None
    return isinstance(data, dict) and data.get("error") == code  # a 5xx answers text


def retry_after(error: BaseException) -> float:
    """Seconds Slack asked us to wait (a 429's ``Retry-After``), else 0."""
    if isinstance(error, SlackApiError) and error.response.status_code == 429:
        try:
            return float(error.response.headers.get("Retry-After", 1))
        except (TypeError, ValueError):
            return 1.0
    return 0.0

"""👍 / 👎 under a conclusion (buttons, or Slack's feedback element: ``bot.blocks.feedback``,
one handler for both), and the 👎 dialog asking for the right verdict.

Only an investigation socbot concluded in *that* channel and thread can be voted on
(``FeedbackStore.votable``, against the stored record; anything else is refused, fail
closed). One vote per analyst and investigation: a second click changes it. 👍 and
the dialog's answer queue learning (``Learn``: a work row, ``bot.work.learning``;
votes given before it runs join the same run); 👎 records the vote
at once and opens a dialog (``views.open``) for the right verdict and an optional
reason, which updates the same vote when submitted.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.concluder import VERDICT_LABELS
from bot.blocks.feedback import FEEDBACK_ELEMENT, vote_of
from bot.notify.notifier import Facts, Notifier
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicked_thread, clicker, tell
from store.playbook.feedback import FeedbackStore

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
Learn = Callable[[str], Awaitable[None]]  # queue learning from an investigation
VIEW_ID = "feedback_verdict"
REASON_CHARS = 1000
REFUSED = "I can only take votes on my own conclusions, in the thread where I posted them."


def verdict_modal(investigation_id: str, channel: str, thread_ts: str) -> dict[str, Any]:
    """The 👎 dialog: the right verdict (required) and why (optional)."""
    options = [
        {"text": {"type": "plain_text", "text": label}, "value": value}
        for value, label in VERDICT_LABELS.items()
    ]
    return {
        "type": "modal",
        "callback_id": VIEW_ID,
        "private_metadata": json.dumps(
            {"investigation_id": investigation_id, "channel": channel, "thread_ts": thread_ts}
        ),
        "title": {"type": "plain_text", "text": "Correct the verdict"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "verdict",
                "label": {"type": "plain_text", "text": "What is the right verdict?"},
                "element": {"type": "static_select", "action_id": "verdict", "options": options},
            },
            {
                "type": "input",
                "block_id": "reason",
                "optional": True,
                "label": {"type": "plain_text", "text": "Why? (helps socbot learn)"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "reason",
                    "multiline": True,
                    "max_length": REASON_CHARS,
                },
            },
        ],
    }


class FeedbackActions:
    """The vote buttons and the 👎 dialog, registered on the bolt app."""

    def __init__(
        self, feedback: FeedbackStore, learn: Learn | None = None, notifier: Notifier | None = None
    ) -> None:
        self.feedback = feedback
        self.learn = learn
        self.notifier = notifier

    def register(self, app: AsyncApp) -> None:
        app.action(re.compile(r"^feedback_(correct|incorrect)$"))(self.on_vote)
        app.action(FEEDBACK_ELEMENT)(self.on_vote)  # Slack's own 👍 / 👎 element
        app.view(VIEW_ID)(self.on_verdict)

    async def on_vote(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """A 👍 / 👎 click: check, record (or change) the vote, then thank or ask why."""
        await ack()
        read = vote_of(str(action.get("action_id") or ""), str(action.get("value") or ""))
        correct, investigation_id = read if read is not None else (False, "")
        user, channel, _ = clicked_at(body)
        thread_ts = clicked_thread(body)
        if not user:
            return
        if read is None or not await self.feedback.votable(investigation_id, channel, thread_ts):
            log.warning("vote by %s on %r refused: not socbot's here", user, investigation_id)
            await tell(client, channel, user, REFUSED, thread_ts)
            return
        voted = await self.feedback.vote(
            investigation_id, user, "correct" if correct else "incorrect"
        )
        log.info("vote on %s from %s (%s)", investigation_id, user, voted)
        if self.notifier is not None and voted != "same":  # an unchanged vote is sent once
            vote = {"investigation_id": investigation_id, "user": user, "correct": correct}
            await self.notifier.publish("feedback", vote, Facts())
        if not correct:
            view = verdict_modal(investigation_id, channel, thread_ts)
            if await _open(client, str(body.get("trigger_id") or ""), view):
                return  # learning starts when the dialog is answered
        if self.learn is not None and voted != "same":  # the same opinion is learnt once
            await self.learn(investigation_id)
        word = {"new": "recorded", "changed": "changed", "same": "unchanged"}[voted]
        verdict = "correct" if correct else "incorrect"
        await tell(client, channel, user, f"Thanks, your vote ({verdict}) is {word}.", thread_ts)

    async def on_verdict(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """The 👎 dialog was sent: store the right verdict and the reason, then learn."""
        await ack()
        user = clicker(body)
        try:
            meta = json.loads(str(view.get("private_metadata") or ""))
            values = (view.get("state") or {}).get("values") or {}
            verdict = values["verdict"]["verdict"]["selected_option"]["value"]
            reason = (values.get("reason") or {}).get("reason", {}).get("value")
            investigation_id = str(meta.get("investigation_id") or "")
            channel, thread_ts = str(meta.get("channel") or ""), str(meta.get("thread_ts") or "")
        except (ValueError, KeyError, TypeError, AttributeError):  # not the dialog's shape
            log.warning("unreadable feedback dialog from %s", user)
            return
        if verdict not in VERDICT_LABELS or not user:
            return
        if not await self.feedback.votable(investigation_id, channel, thread_ts):
            log.warning("dialog vote by %s on %r refused", user, investigation_id)
            return
        comment = str(reason)[:REASON_CHARS] if reason else None
        voted = await self.feedback.vote(
            investigation_id, user, "incorrect", verdict=verdict, comment=comment, source="modal"
        )
        if self.learn is not None and voted != "same":
            await self.learn(investigation_id)
        label = VERDICT_LABELS[verdict]
        await tell(client, channel, user, f"Thanks: recorded, the verdict is {label}.", thread_ts)


async def _open(client: AsyncWebClient, trigger_id: str, view: dict[str, Any]) -> bool:
    if not trigger_id:
        return False
    try:
        await client.views_open(trigger_id=trigger_id, view=view)
    except SLACK_ERRORS as error:
        log.warning("could not open the feedback dialog: %s", error)
        return False
    return True

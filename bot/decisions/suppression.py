"""Suppress from Slack: "Suppress similar…" under an alert's conclusion, a dialog, and
approvers who confirm — the path playbook proposals take (``bot.decisions.playbook_review``).

1. The button is honoured only on a conclusion socbot posted in that thread
   (``FeedbackStore.votable``) about a stored alert (the thread's root is its card or
   message); it opens the dialog (``bot.decisions._suppression_dialog``) pre-filled from the alert.
2. The dialog, checked like a rule file's rule, becomes a ``proposed`` suppression
   (who, when, why: ``store.triage.suppressions``) posted in ``learning.review_channel``.
3. Only ``learning.approvers``, in that channel, approve or reject it (fail closed);
   an approved one is a policy rule (``slack-<id>``, tried first, never for a critical
   alert) until it expires or an approver lifts it (here, or ``socbot policy lift``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.kit import SAFE_POST_FLAGS
from bot.decisions._suppression_dialog import VIEW_ID, dialog, read_dialog, review_blocks
from bot.decisions.votes import REFUSED
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicked_thread, clicker, tell
from config.policy_settings import PolicySettings
from config.settings import LearningSettings
from core.ids import row_id
from store.playbook.feedback import FeedbackStore
from store.schema import utcnow
from store.triage.alerts import AlertStore
from store.triage.suppressions import Suppression, SuppressionStore

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
NOT_ALLOWED = (
    "Only the approvers (learning.approvers) can decide on suppressions, in the review channel."
)
NO_REVIEW = (
    "No review channel is set (learning.review_channel): nobody can approve this suppression."
)


class SuppressActions:
    """The button, the dialog and the approvers' decisions, registered on the bolt app."""

    def __init__(
        self,
        *,
        feedback: FeedbackStore,
        alerts: AlertStore,
        suppressions: SuppressionStore,
        policy: PolicySettings,
        learning: LearningSettings,
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        self.feedback = feedback
        self.alerts = alerts
        self.suppressions = suppressions
        self.policy = policy
        self.learning = learning
        self.changed = changed  # the approved suppressions changed: rules to re-read

    def register(self, app: AsyncApp) -> None:
        app.action("policy_suppress")(self.on_button)
        app.view(VIEW_ID)(self.on_dialog)
        app.action(re.compile(r"^suppression_(approve|reject|lift)$"))(self.on_decision)

    async def on_button(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, _ = clicked_at(body)
        thread_ts = clicked_thread(body)
        investigation_id = str(action.get("value") or "")
        stored = await self.alerts.find_by_slack_message(channel, thread_ts) if channel else None
        if (
            not user
            or stored is None
            or not await self.feedback.votable(investigation_id, channel, thread_ts)
        ):
            log.warning(
                "suppress by %s on %r refused: not socbot's alert here", user, investigation_id
            )
            await tell(client, channel, user, REFUSED, thread_ts)
            return
        meta = {"alert_id": stored.id, "channel": channel, "thread_ts": thread_ts}
        view = dialog(
            stored.to_alert(),
            meta,
            days=self.policy.default_suppress_days,
            max_days=self.policy.max_suppress_days,
        )
        try:
            await client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
        except SLACK_ERRORS as error:
            log.warning("could not open the suppress dialog: %s", error)

    async def on_dialog(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        user = clicker(body)
        try:
            meta = json.loads(str(view.get("private_metadata") or ""))
            values = (view.get("state") or {}).get("values") or {}
            stored = await self.alerts.get(str(meta["alert_id"]))
        except (ValueError, KeyError, TypeError):
            stored = None
        if stored is None or not user:
            await ack()
            return
        asked, errors = read_dialog(
            values, stored.to_alert(), max_days=self.policy.max_suppress_days
        )
        if asked is None:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        suppression = await self.suppressions.propose(
            asked.rule,
            reason=asked.reason,
            expires_at=utcnow() + timedelta(days=asked.days),
            proposed_by=user,
            alert_id=stored.id,
        )
        log.info("suppression %s proposed by %s", suppression.rule_id, user)
        review = self.learning.review_channel
        where = f"an approver confirms it in <#{review}>" if review else NO_REVIEW
        await self._post_review(client, suppression)
        text = f"Suppression {suppression.rule_id} asked for: {where}"
        await tell(
            client, str(meta.get("channel") or ""), user, text, str(meta.get("thread_ts") or "")
        )

    async def _post_review(self, client: AsyncWebClient, s: Suppression) -> None:
        channel = self.learning.review_channel
        if not channel:
            return
        try:
            response = await client.chat_postMessage(
                channel=channel,
                text=f"Suppression proposal {s.rule_id}",
                blocks=review_blocks(s),
                unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
            )
        except SLACK_ERRORS as error:  # the proposal is stored: socbot policy list shows it
            log.warning("could not post suppression %s for review: %s", s.rule_id, error)
            return
        await self.suppressions.set_review_ts(s.id, str(response.get("ts") or ""))

    def allowed(self, user: str, channel: str) -> bool:
        """An approver, acting in the review channel (fail closed)."""
        review = self.learning.review_channel
        return bool(user and user in self.learning.approvers and review and channel == review)

    async def on_decision(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, ts = clicked_at(body)
        if not self.allowed(user, channel):
            await tell(client, channel, user, NOT_ALLOWED)
            return
        value = str(action.get("value") or "")
        what = str(action.get("action_id") or "").removeprefix("suppression_")
        number = row_id(value) or 0
        if what == "lift":
            done = await self.suppressions.lift(number, by=user)
        else:
            done = await self.suppressions.decide(number, approve=what == "approve", by=user)
        suppression = await self.suppressions.get(number)
        if not done or suppression is None:
            await tell(client, channel, user, "That suppression is no longer waiting for this.")
            return
        log.info("suppression %s: %s by %s", suppression.rule_id, what, user)
        self.changed()
        try:
            await client.chat_update(
                channel=channel,
                ts=ts,
                text=f"Suppression {suppression.rule_id}: {suppression.status}",
                blocks=review_blocks(suppression),
            )
        except SLACK_ERRORS as error:
            log.warning("could not update the suppression message %s: %s", ts, error)

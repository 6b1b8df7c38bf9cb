"""Playbook proposals reviewed in Slack: Approve / Edit / Reject in ``learning.review_channel``.

``post`` shows a proposal with what it would change, its provenance and the evidence
it came from — all escaped and defanged, since that evidence is alert and thread text
an attacker may have written. Only users in ``learning.approvers`` may decide, and only
in the review channel (fail closed: an empty list means nobody in Slack; use
``socbot playbook``). Edit opens a dialog with the text and scope
(``bot.decisions._playbook_dialog``); sending it checks both, saves the edit and approves it. The
message is updated with the decision and who made it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.escape import mrkdwn, plain
from bot.blocks.kit import SAFE_POST_FLAGS, button, context_block, fit_message, section
from bot.decisions._playbook_dialog import EDIT_VIEW, MAX_CONTENT, edit_view, submitted
from bot.notify.notifier import Facts, Notifier
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicker, tell
from config.settings import LearningSettings
from store.playbook.bullets import PlaybookBullet, PlaybookError, PlaybookStore
from store.playbook.rules import BulletInvalid

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
NOT_ALLOWED = "Only the playbook approvers (learning.approvers) can decide on proposals here."
PROPOSAL_FIELDS = {"id", "op", "kind", "scope", "content", "targets", "provenance"}
OPS = {"add": "New bullet", "update": "Change", "merge": "Merge", "retire": "Retire"}


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def proposal_blocks(
    bullet: PlaybookBullet, targets: list[PlaybookBullet], *, evidence_chars: int
) -> list[dict[str, Any]]:
    """The review message: change, text, triggers, provenance, evidence, buttons."""
    prov = bullet.provenance
    evidence = prov.get("evidence") or {}
    insight = evidence.get("insight") or {}
    triggers = ", ".join(
        f"{k}: {', '.join(v)}" for k, v in bullet.triggers.model_dump().items() if v
    )
    lines = [
        f"*{OPS.get(bullet.op, bullet.op)}* `{bullet.id}` · {bullet.kind} · "
        f"scope `{mrkdwn(bullet.scope)}`",
        "> " + mrkdwn(_clip(bullet.content, MAX_CONTENT)).replace("\n", "\n> "),
    ]
    if triggers:
        lines.append(f"Triggers: {mrkdwn(triggers)}")
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": "Playbook proposal"}},
        section("\n".join(lines)),
    ]
    for target in targets:
        blocks.append(
            section(
                f"Replaces `{target.id}` ({target.status}, +{target.helpful}/-{target.harmful}): "
                + mrkdwn(_clip(target.content, 400))
            )
        )
    facts = [
        ("Why", prov.get("reason") or ""),
        ("Analysts said", evidence.get("ground_truth") or ""),
        ("Alert", evidence.get("alert") or ""),
        ("Lesson", insight.get("key_insight") or ""),
        ("Root cause", insight.get("root_cause_analysis") or ""),
    ]
    shown = "\n".join(f"*{k}:* {mrkdwn(_clip(str(v), evidence_chars))}" for k, v in facts if v)
    if shown:
        blocks.append(section(shown))
    origin = ", ".join(f"`{mrkdwn(str(i))}`" for i in prov.get("investigations") or [])
    note = context_block(
        "Evidence is quoted from alerts and analysts: check it before approving.",
        f"Proposed by {mrkdwn(str(prov.get('proposed_by', '?')))}"
        + (f" from investigation {origin}" if origin else ""),
    )
    actions = {
        "type": "actions",
        "block_id": "playbook_review",
        "elements": [
            button("Approve", "playbook_approve", bullet.id, "primary"),
            button("Edit", "playbook_edit", bullet.id),
            button("Reject", "playbook_reject", bullet.id, "danger"),
        ],
    }
    return fit_message(blocks, [note, actions])  # many targets, long evidence: one valid message


def decided_blocks(bullet: PlaybookBullet, user: str, decision: str) -> list[dict[str, Any]]:
    """The review message once decided: the text and who decided, no buttons."""
    return [
        section(
            f"*{decision.capitalize()}* `{bullet.id}` by <@{user}> — now {bullet.status}\n> "
            + mrkdwn(_clip(bullet.content, MAX_CONTENT)).replace("\n", "\n> ")
        )
    ]


class SlackReview:
    """Posts proposals for review (``ReviewPoster``) and handles the decisions."""

    def __init__(
        self,
        client: AsyncWebClient,
        playbook: PlaybookStore,
        settings: LearningSettings,
        notifier: Notifier | None = None,
    ) -> None:
        self.client = client
        self.playbook = playbook
        self.settings = settings
        self.notifier = notifier

    def register(self, app: AsyncApp) -> None:
        app.action(re.compile(r"^playbook_(approve|reject)$"))(self.on_decision)
        app.action("playbook_edit")(self.on_edit)
        app.view(EDIT_VIEW)(self.on_edited)

    def allowed(self, user: str, channel: str) -> bool:
        """An approver, acting in the review channel (fail closed)."""
        return bool(
            user
            and user in self.settings.approvers
            and channel
            and channel == self.settings.review_channel
        )

    async def post(self, bullet: PlaybookBullet) -> None:
        """Show ``bullet`` in the review channel (nothing without one); send it onward."""
        if self.notifier is not None:
            proposal = bullet.model_dump(mode="json", include=PROPOSAL_FIELDS)
            await self.notifier.publish("playbook_proposal", proposal, Facts())
        channel = self.settings.review_channel
        if not channel:
            return
        targets = [t for t in [await self.playbook.get(i) for i in bullet.targets] if t]
        response = await self.client.chat_postMessage(
            channel=channel,
            text=plain(f"Playbook proposal {bullet.id}: {_clip(bullet.content, 200)}"),
            blocks=proposal_blocks(
                bullet, targets, evidence_chars=self.settings.max_evidence_chars
            ),
            unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
            unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
        )
        await self.playbook.set_provenance(
            bullet.id, review={"channel": channel, "ts": str(response.get("ts") or "")}
        )

    async def on_decision(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, ts = clicked_at(body)
        if not self.allowed(user, channel):
            await tell(client, channel, user, NOT_ALLOWED)
            return
        bullet_id = str(action.get("value") or "")
        approve = action.get("action_id") == "playbook_approve"
        try:
            if approve:
                bullet = await self.playbook.approve(bullet_id, user)
            else:
                bullet = await self.playbook.reject(bullet_id, user)
        except PlaybookError as error:
            await tell(client, channel, user, str(error))
            return
        log.info("proposal %s %s by %s", bullet_id, "approved" if approve else "rejected", user)
        await _update(client, channel, ts, bullet, user, "approved" if approve else "rejected")

    async def on_edit(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, ts = clicked_at(body)
        if not self.allowed(user, channel):  # first: nobody else learns which ids exist
            await tell(client, channel, user, NOT_ALLOWED)
            return
        bullet = await self.playbook.get(str(action.get("value") or ""))
        if bullet is None or bullet.status != "proposed":
            await tell(client, channel, user, "No such proposal waiting for a decision.")
            return
        try:
            view = edit_view(bullet, channel, ts)
            await client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
        except SLACK_ERRORS as error:
            log.warning("could not open the edit dialog: %s", error)

    async def on_edited(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """A submitted dialog (``bot.decisions._playbook_dialog``): the sender and the channel
        checked first, then every field; problems keep the dialog open, nothing is stored."""
        user, edit = clicker(body), submitted(view)
        if edit is None:
            await ack()
            return
        if not self.allowed(user, edit.channel):
            await ack(response_action="errors", errors={"content": NOT_ALLOWED})
            return
        problems = edit.problems()
        if problems:  # shown under the fields; the dialog stays open
            await ack(response_action="errors", errors=problems)
            return
        await ack()
        try:
            await self.playbook.edit(edit.bullet_id, edit.content, user, scope=edit.scope)
            bullet = await self.playbook.approve(edit.bullet_id, user)
        except (PlaybookError, BulletInvalid) as error:
            await tell(client, edit.channel, user, str(error))
            return
        await _update(client, edit.channel, edit.ts, bullet, user, "edited and approved")


async def _update(
    client: AsyncWebClient, channel: str, ts: str, bullet: PlaybookBullet, user: str, what: str
) -> None:
    try:
        await client.chat_update(
            channel=channel,
            ts=ts,
            text=f"Playbook proposal {bullet.id}: {what}",
            blocks=decided_blocks(bullet, user, what),
        )
    except SLACK_ERRORS as error:
        log.warning("could not update the review message %s: %s", ts, error)

"""Approvals in Slack: an Approve / Deny message in the thread, a decision by an approver.

``SlackApprovals.for_thread`` gives an investigation its ``Approver``
(``core.approvals``): asked about a call, it records the request (``store.approvals``;
a run started again after a restart finds the same request and no second message is
posted), posts what will run, why and the estimate in the thread, and waits — the
step waits, the rest of the plan goes on — until a decision is recorded or the
request expires. ``on_decision`` handles the buttons: only ``approvals.approvers``
(or, when empty, ``slack.admin_users``) may decide, never on a request of their own
when ``approvals.separate_duty`` is on; the first decision counts, on any replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.kit import SAFE_POST_FLAGS
from bot.decisions._approval_message import decided_blocks, request_blocks
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, tell
from config.approval_settings import ApprovalSettings
from config.settings import Settings
from core.approvals import ApprovalRequest, Decision
from core.ids import row_id
from store.approvals import Approval, ApprovalStore
from store.db.engine import Database
from store.schema import ApprovalStatus

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
ACTIONS = re.compile(r"^approval_(approve|deny)$")
NOT_ALLOWED = "Only the approvers (approvals.approvers) can decide on this request."
OWN_REQUEST = "You asked for this investigation: someone else has to approve its calls."
CLOSED = "This request was already decided or has expired."


class SlackApprovals:
    """The approvers' side: who may decide, the buttons, the waiting runs' wake-ups."""

    def __init__(
        self,
        client: AsyncWebClient,
        store: ApprovalStore,
        settings: ApprovalSettings,
        admin_users: list[str],
        *,
        poll_s: float = 1.0,
    ) -> None:
        self.client = client
        self.store = store
        self.settings = settings
        self.approvers = frozenset(settings.approvers or admin_users)
        self.poll_s = poll_s
        self._decided: dict[int, asyncio.Event] = {}

    @classmethod
    def build(cls, client: AsyncWebClient, db: Database, settings: Settings) -> SlackApprovals:
        """The approvals of ``settings.approvals``, stored in ``db``."""
        admins = settings.slack.admin_users
        return cls(client, ApprovalStore(db), settings.approvals, admins)

    def register(self, app: AsyncApp) -> None:
        app.action(ACTIONS)(self.on_decision)

    def for_thread(self, channel: str, thread_ts: str) -> SlackApprover:
        return SlackApprover(self, channel, thread_ts)

    async def on_decision(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """An Approve / Deny click: check who clicked, record the first decision."""
        await ack()
        user, channel, _ = clicked_at(body)
        if not user or user not in self.approvers:  # first: nobody else learns which ids exist
            await tell(client, channel, user, NOT_ALLOWED)
            return
        value = str(action.get("value") or "")
        number = row_id(value)
        approval = await self.store.get(number) if number is not None else None
        if approval is None or approval.channel != channel:
            await tell(client, channel, user, "No such approval request here.")
            return
        if self.settings.separate_duty and user == approval.requested_by:
            await tell(client, channel, user, OWN_REQUEST)
            return
        approve = action.get("action_id") == "approval_approve"
        decided = await self.store.decide(approval.id, user, approve)
        if decided is None:
            await tell(client, channel, user, CLOSED)
            return
        log.info("approval %d %s by %s", approval.id, decided.status, user)
        self._wake(approval.id)
        await self.show(decided)

    async def show(self, approval: Approval) -> None:
        """Replace the request's buttons with its outcome."""
        if approval.channel is None or approval.message_ts is None:
            return
        try:
            await self.client.chat_update(
                channel=approval.channel,
                ts=approval.message_ts,
                text=f"Approval for {approval.tool}: {approval.status}",
                blocks=decided_blocks(approval),
            )
        except SLACK_ERRORS as error:
            log.warning("could not update approval message %s: %s", approval.message_ts, error)

    async def wait(self, approval_id: int, within_s: float) -> None:
        """Until a decision here may have been made, or ``within_s`` (other replicas)."""
        event = self._decided.setdefault(approval_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(min(within_s, self.poll_s), 0)):
                await event.wait()

    def _wake(self, approval_id: int) -> None:
        event = self._decided.pop(approval_id, None)
        if event is not None:
            event.set()


class SlackApprover:
    """``core.approvals.Approver`` for one thread (see the module docstring)."""

    def __init__(self, approvals: SlackApprovals, channel: str, thread_ts: str) -> None:
        self.approvals = approvals
        self.channel = channel
        self.thread_ts = thread_ts

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision:
        store = self.approvals.store
        approval, new = await store.open(request, within_s)
        if new or (approval.status == ApprovalStatus.PENDING and approval.message_ts is None):
            # Posted and recorded together, also when the run is stopped meanwhile.
            await asyncio.shield(self._post(approval, request))
        while True:
            current = await store.get(approval.id) or approval
            if current.status in (ApprovalStatus.APPROVED, ApprovalStatus.DENIED):
                return _decision(current)
            left = (current.expires_at - datetime.now(UTC)).total_seconds()
            if left <= 0 or current.status == ApprovalStatus.EXPIRED:
                expired = await store.expire(approval.id)
                if expired is None and current.status == ApprovalStatus.PENDING:
                    continue  # decided in the meantime
                await self.approvals.show(expired or current)
                return Decision(approved=False, note=f"no decision within {within_s:g} s")
            await self.approvals.wait(approval.id, left)

    async def _post(self, approval: Approval, request: ApprovalRequest) -> None:
        who = ", ".join(f"<@{u}>" for u in sorted(self.approvals.approvers)) or "nobody"
        try:
            response = await self.approvals.client.chat_postMessage(
                channel=self.channel,
                thread_ts=self.thread_ts,
                text=f"Approval needed to run {request.tool}",
                blocks=request_blocks(approval.id, request, approvers=who),
                unfurl_links=SAFE_POST_FLAGS["unfurl_links"],
                unfurl_media=SAFE_POST_FLAGS["unfurl_media"],
            )
        except SLACK_ERRORS as error:
            log.warning("could not post approval request %d: %s", approval.id, error)
            return  # it stays pending and unposted: the wait ends in a timeout, denied
        await self.approvals.store.set_message(
            approval.id, self.channel, str(response.get("ts") or "")
        )


def _decision(approval: Approval) -> Decision:
    approved = approval.status == ApprovalStatus.APPROVED
    at = approval.decided_at or datetime.now(UTC)
    verb = "approved" if approved else "denied"
    return Decision(
        approved=approved,
        note=f"{verb} by {approval.decided_by} at {at:%Y-%m-%d %H:%M} UTC",
        by=approval.decided_by,
        at=at,
    )

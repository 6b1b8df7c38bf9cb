"""The blind review of an auto-resolved case in Slack: *Review…* under socbot's
auto-resolution (``bot.blocks.case_audit``) opens a dialog that asks what the alert was
without showing socbot's verdict (``bot.decisions._audit_dialog``).

Who may review is who may resolve (``bot.decisions.case_rules``, decision ``audit``: a
member of the case's channel, in its thread; with ``cases.resolve_requires_owner`` an
approver, as socbot owns the case). The click and the submission are both checked. The
answer is recorded once (``store.cases.auto.audit``: a conditional UPDATE): a second
submission, from the same person or another replica, changes nothing and is told so.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks.case_audit import AUDIT_ACTION
from bot.decisions._audit_dialog import AUDIT_VIEW_ID, CHOOSE, audit_dialog, read_answer
from bot.decisions._case_dialog import Target
from bot.decisions.cases import CaseActions
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicked_thread, clicker, tell
from core.ids import row_id
from store.cases import auto, records
from store.schema import CaseRow

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
NOT_DRAWN = "This case was not drawn for a blind review."
REVIEWED = "This case's blind review is recorded already."


def _open_question(case: CaseRow) -> str | None:
    """Why ``case`` takes no review now, or None."""
    if not (case.auto_resolved and case.audit):
        return NOT_DRAWN
    return REVIEWED if case.audit_disposition is not None else None


class CaseAudits:
    """The Review… button and its dialog, registered on the bolt app."""

    def __init__(self, actions: CaseActions) -> None:
        self.actions = actions  # its rules, members and database: authorised as resolving
        self.db = actions.db

    def register(self, app: AsyncApp) -> None:
        app.action(AUDIT_ACTION)(self.on_review_button)
        app.view(AUDIT_VIEW_ID)(self.on_review)

    async def _why_not(
        self, user: str, channel: str, thread_ts: str, case: CaseRow | None
    ) -> str | None:
        why = await self.actions._allowed("audit", user, channel, thread_ts, case, "")
        if why is None and case is not None:
            why = _open_question(case)
        return why

    async def on_review_button(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, _ = clicked_at(body)
        thread_ts = clicked_thread(body)
        value = str(action.get("value") or "")
        number = row_id(value)
        case = await records.get(self.db, number) if number is not None else None
        why = await self._why_not(user, channel, thread_ts, case)
        if why is not None or case is None:
            log.warning("case review by %s in %s refused: %s", user, channel, why)
            await tell(client, channel, user, why or "Refused.", thread_ts)
            return
        view = audit_dialog(Target(case.id, channel, thread_ts), case.title, case.source)
        try:
            await client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
        except SLACK_ERRORS as error:
            log.warning("could not open the review dialog: %s", error)

    async def on_review(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """The dialog was sent: checked again (membership may have changed), recorded once."""
        user = clicker(body)
        target = Target.read(view)
        answer = read_answer((view.get("state") or {}).get("values") or {})
        if answer is None and target is not None:
            await ack(response_action="errors", errors={"disposition": CHOOSE})
            return
        await ack()
        if target is None or answer is None:
            return
        case = await records.get(self.db, target.case_id)
        why = await self._why_not(user, target.channel, target.thread_ts, case)
        if why is not None or case is None:
            log.warning("case review by %s refused: %s", user, why)
            await tell(client, target.channel, user, why or "Refused.", target.thread_ts)
            return
        done = None
        for _ in range(2):  # a decision in between (a reopen) moved the revision: once more
            done = await auto.audit(self.db, case.id, user, answer, seen=case.revision, via="slack")
            now = await records.get(self.db, case.id) if done is None else None
            if now is None or _open_question(now) is not None:
                break
            case = now
        if done is None:
            await tell(client, target.channel, user, REVIEWED, target.thread_ts)
            return
        log.info("case %d: blind review by %s", case.id, user)
        self.actions.nudge()

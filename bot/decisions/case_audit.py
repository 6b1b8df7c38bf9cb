"""The blind review of an auto-resolved case in Slack: *Review…* under socbot's
auto-resolution (``bot.blocks.case_audit``) opens a dialog that asks what the alert was
without showing socbot's verdict (``bot.decisions._audit_dialog``).

Who may review is who may resolve (``bot.decisions.case_rules``, decision ``audit``: a
member of the case's channel, in its thread; with ``cases.resolve_requires_owner`` an
approver, as socbot owns the case). The click and the submission are both checked. The
answer is recorded once (``store.cases.audits.review``: a conditional UPDATE): a second
submission, from the same person or another replica, changes nothing and is told so; one
against socbot's verdict is captured into the team's pack when ``evals.team_pack`` is set.
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
from bot.decisions.case_rules import NOT_HERE
from bot.decisions.cases import CaseActions
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicked_thread, clicker, tell
from core.ids import row_id
from store.cases import audits, records
from store.cases.audits import NOT_DRAWN, REVIEWED, open_question
from store.schema import CaseRow

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
__all__ = ["NOT_DRAWN", "REVIEWED", "CaseAudits"]


class CaseAudits:
    """The Review… button and its dialog, registered on the bolt app."""

    def __init__(self, actions: CaseActions, *, capture: bool = False) -> None:
        self.actions = actions  # its rules, members and database: authorised as resolving
        self.db = actions.db
        self.capture = capture  # a disagreeing review into the team's pack

    def register(self, app: AsyncApp) -> None:
        app.action(AUDIT_ACTION)(self.on_review_button)
        app.view(AUDIT_VIEW_ID)(self.on_review)

    async def _reviewable(
        self, user: str, channel: str, thread_ts: str, case_id: int | None
    ) -> CaseRow | str:
        """The case ``user`` may review from this thread now, or why not."""
        case = await records.get(self.db, case_id) if case_id is not None else None
        why = await self.actions._allowed("audit", user, channel, thread_ts, case, "")
        if case is None or why is not None:
            return why or NOT_HERE
        return open_question(case) or case

    async def on_review_button(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel, _ = clicked_at(body)
        thread_ts = clicked_thread(body)
        value = row_id(str(action.get("value") or ""))
        case = await self._reviewable(user, channel, thread_ts, value)
        if isinstance(case, str):
            log.warning("case review by %s in %s refused: %s", user, channel, case)
            await tell(client, channel, user, case, thread_ts)
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
        case = await self._reviewable(user, target.channel, target.thread_ts, target.case_id)
        done = (
            case
            if isinstance(case, str)
            else await audits.review(self.db, case, user, answer, via="slack", capture=self.capture)
        )
        if isinstance(done, str):
            log.warning("case review by %s refused: %s", user, done)
            await tell(client, target.channel, user, done, target.thread_ts)
            return
        log.info("case %d: blind review by %s", done.case.id, user)
        self.actions.nudge()

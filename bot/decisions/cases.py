"""Cases in Slack: *Take it*, *Assign…*, *Resolve…* under a conclusion, *Reopen* under a
resolution (``bot.blocks.case``), *Take it* on App Home (``bot.blocks.home``).

Every click is checked first (``bot.decisions.case_rules``: the case's own thread, a
member of its channel, the owner or an approver when resolving is restricted), then
decided by one store function (``store.cases.transitions``) on the revision the click
saw: of a double click or two replicas, one decision wins and is recorded once; the
other clicker is told what happened instead. *Take it* on App Home names the case and
counts as clicked in its thread (same rule); the clicker's Home is published again. The
thread hears of a decision from its ``case_post`` work row (``bot.decisions.case_posts``),
so a crash between the decision and the message loses nothing and repeats nothing. A
mention's conclusion becomes a case when someone takes, assigns or resolves it. The
analyst's verdict is one: resolving records the 👎/👍 vote the disposition implies
(``store.playbook.feedback``; learning asked for as a vote would); the Resolve dialog
starts from the verdict given in the 👎 dialog.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.concluder import VERDICT_LABELS
from bot.blocks.case import CASE_BLOCK, NO_CHANGE, unchanged_note
from bot.blocks.home import HOME_TAKE
from bot.decisions._case_dialog import VIEW_ID, Target, read_resolution, resolve_dialog
from bot.decisions.case_rules import Decision, Rules, Where, refusal
from bot.slack.errors import SLACK_ERRORS
from bot.slack.interaction import clicked_at, clicked_thread, clicker, tell
from bot.slack.members import ChannelMembers
from config.cases_settings import CaseSettings
from core.ids import row_id
from store.cases import records, transitions
from store.cases.opening import open_for_run
from store.db.engine import Database
from store.playbook.feedback import FeedbackStore
from store.schema import CaseRow, CaseStatus

log = logging.getLogger(__name__)

Ack = Callable[..., Awaitable[Any]]
Learn = Callable[[str], Awaitable[None]]
Home = Callable[[str, str], Awaitable[None]]  # a person's Home again, with a note (or "")


@dataclass(frozen=True)
class Click:
    """An allowed click: the case, who clicked, and in which thread."""

    case: CaseRow
    user: str
    channel: str
    thread_ts: str
    home: bool = False  # clicked on App Home


class CaseActions:
    """The case buttons and the Resolve dialog, registered on the bolt app."""

    def __init__(
        self,
        db: Database,
        settings: CaseSettings,
        members: ChannelMembers,
        *,
        admins: list[str],
        feedback: FeedbackStore,
        learn: Learn | None = None,
        nudge: Callable[[], None] = lambda: None,
        capture: bool = False,  # disagreements into the team's pack
        home: Home | None = None,
    ) -> None:
        self.db = db
        self.resolve = partial(transitions.resolve, capture=capture)  # store.cases.captures
        self.members = members
        self.feedback = feedback
        self.learn = learn
        self.nudge = nudge  # a case_post row is queued: wake the worker
        self.home = home
        self._bot: str | None = None  # socbot's user id (``auth.test``)
        self.rules = Rules(
            resolve_requires_owner=settings.resolve_requires_owner,
            approvers=frozenset(u for u in (settings.approvers or admins) if u),
        )

    def register(self, app: AsyncApp) -> None:
        app.action("case_take")(self.on_take)
        app.action(HOME_TAKE)(self.on_take)
        app.action("case_assign")(self.on_assign)
        app.action("case_resolve")(self.on_resolve_button)
        app.action("case_reopen")(self.on_reopen)
        app.view(VIEW_ID)(self.on_resolve)

    async def _allowed(
        self,
        decision: Decision,
        user: str,
        channel: str,
        thread_ts: str,
        case: CaseRow | None,
        assignee: str,
    ) -> str | None:
        """Why not (``case_rules``); the channel's members are asked for only about a case
        clicked in its own channel."""
        where = Where(case.channel, case.thread_ts, case.owner) if case is not None else None
        rules = self.rules
        if decision == "assign":  # never to socbot itself
            rules = replace(rules, bot_user=await self._bot_user())
        here = case is not None and bool(channel) and channel == case.channel
        members = await self.members.of(channel) if here else frozenset()
        return refusal(
            decision,
            user,
            channel=channel,
            thread_ts=thread_ts,
            case=where,
            members=members,
            rules=rules,
            assignee=assignee,
        )

    async def _bot_user(self) -> str | None:
        """socbot's user id (``auth.test``, once); None while Slack cannot say."""
        if self._bot is None:
            try:
                self._bot = str((await self.members.client.auth_test())["user_id"])
            except (*SLACK_ERRORS, KeyError) as error:
                log.warning("auth.test failed: %s", error)
        return self._bot

    async def _case_of_run(
        self, investigation_id: str, channel: str, thread_ts: str
    ) -> CaseRow | None:
        """The case of a conclusion clicked in its own thread (opened for a mention)."""
        if not await self.feedback.votable(investigation_id, channel, thread_ts):
            return None
        return await open_for_run(self.db, investigation_id, via="slack")

    async def _decide(
        self,
        kind: Decision,
        ack: Ack,
        body: dict[str, Any],
        client: AsyncWebClient,
        *,
        run: str = "",
        case_id: str = "",
        assignee: str = "",
        home: bool = False,
    ) -> Click | None:
        """A click: acknowledged, who clicked where, the case (of the conclusion ``run``, or
        ``case_id``), allowed or refused (the clicker is told why). None when refused. On
        App Home (``home``) the click is where the case lives."""
        await ack()
        user, channel, _ = clicked_at(body)
        thread_ts = clicked_thread(body)
        if case_id:
            number = row_id(case_id)
            case = await records.get(self.db, number) if number is not None else None
        else:
            case = await self._case_of_run(run, channel, thread_ts)
        if home and case is not None:
            channel, thread_ts = case.channel or "", case.thread_ts or ""
        why = await self._allowed(kind, user, channel, thread_ts, case, assignee)
        if why is not None or case is None:
            log.warning("case %s by %s in %s refused: %s", kind, user, channel, why)
            await self._say(client, user, channel, thread_ts, why, home)
            return None
        return Click(case, user, channel, thread_ts, home)

    async def on_take(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """*Take it* under a conclusion (value: its run) or on App Home (value: the case)."""
        value, home = str(action.get("value") or ""), action.get("action_id") == HOME_TAKE
        run, case_id = ("", value) if home else (value, "")
        click = await self._decide("take", ack, body, client, run=run, case_id=case_id, home=home)
        if click is not None:
            done = await transitions.take(
                self.db, click.case.id, click.user, seen=click.case.revision, via="slack"
            )
            await self._told(client, done, click)

    async def on_assign(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        block = str(action.get("block_id") or "")
        run = block.removeprefix(CASE_BLOCK) if block.startswith(CASE_BLOCK) else ""
        assignee = str(action.get("selected_user") or "")
        click = await self._decide("assign", ack, body, client, run=run, assignee=assignee)
        if click is not None:
            done = await transitions.assign(
                self.db, click.case.id, click.user, assignee, seen=click.case.revision, via="slack"
            )
            await self._told(client, done, click)

    async def on_resolve_button(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        click = await self._decide("resolve", ack, body, client, run=str(action.get("value") or ""))
        if click is None:
            return
        case, user = click.case, click.user
        if case.status == CaseStatus.RESOLVED:
            text = NO_CHANGE.format(state="resolved")
            await tell(client, click.channel, user, text, click.thread_ts)
            return
        votes = await self.feedback.votes(case.investigation_id)
        given = next((v.verdict for v in votes if v.user == user and v.verdict), None)
        target = Target(case.id, click.channel, click.thread_ts)
        view = resolve_dialog(target, case.socbot_verdict, given)
        try:
            await client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
        except SLACK_ERRORS as error:
            log.warning("could not open the resolve dialog: %s", error)

    async def on_resolve(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """The Resolve dialog was sent: check again (the owner may have changed), decide."""
        user = clicker(body)
        target = Target.read(view)
        case = await records.get(self.db, target.case_id) if target is not None else None
        values = (view.get("state") or {}).get("values") or {}
        resolution, errors = read_resolution(values, case.socbot_verdict if case else None)
        if resolution is None and case is not None:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if target is None or case is None or resolution is None:
            return
        why = await self._allowed("resolve", user, target.channel, target.thread_ts, case, "")
        if why is not None:
            log.warning("case resolve by %s in %s refused: %s", user, target.channel, why)
            await tell(client, target.channel, user, why, target.thread_ts)
            return
        done = await self.resolve(
            self.db, case.id, user, resolution, seen=case.revision, via="slack"
        )
        if done is not None:
            await self._vote(
                case, user, resolution.disposition, resolution.missed or resolution.reason
            )
        await self._told(client, done, Click(case, user, target.channel, target.thread_ts))

    async def on_reopen(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        value = str(action.get("value") or "")
        click = await self._decide("reopen", ack, body, client, case_id=value)
        if click is not None:
            done = await transitions.reopen(
                self.db, click.case.id, click.user, seen=click.case.revision, via="slack"
            )
            await self._told(client, done, click)

    async def _vote(self, case: CaseRow, user: str, disposition: str, why: str | None) -> None:
        """The disposition as the analyst's vote on socbot's verdict (one verdict, not two)."""
        if disposition not in VERDICT_LABELS:
            return  # a duplicate says nothing about the verdict
        correct = disposition == case.socbot_verdict
        voted = await self.feedback.vote(
            case.investigation_id,
            user,
            "correct" if correct else "incorrect",
            verdict=None if correct else disposition,
            comment=None if correct else why,
            source="modal",
        )
        if self.learn is not None and voted != "same":
            await self.learn(case.investigation_id)

    async def _told(
        self, client: AsyncWebClient, done: transitions.Decided | None, click: Click
    ) -> None:
        case_id, user = click.case.id, click.user
        if done is not None:
            log.info("case %d: %s by %s", case_id, done.event.action, user)
            self.nudge()
            if click.home and self.home is not None:
                await self.home(user, "")
            return
        text = unchanged_note(await records.get(self.db, case_id), user)
        await self._say(client, user, click.channel, click.thread_ts, text, click.home)

    async def _say(
        self, client: AsyncWebClient, user: str, channel: str, ts: str, text: str | None, home: bool
    ) -> None:
        """Tell the clicker: ephemerally in the thread, or on their Home (App Home)."""
        if not home:
            await tell(client, channel, user, text or "Refused.", ts)
        elif self.home is not None:
            await self.home(user, text or "Refused.")

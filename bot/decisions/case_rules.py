"""Who may decide on a case in Slack (``bot.decisions.cases``): one function, fail closed.

A decision is taken only on the case's own conclusion thread (the click's channel and
thread are the case's), by a member of that channel. An assignee must be a member too
(a case is never handed to someone who cannot see it, nor to socbot — and to nobody
while socbot does not know its own id). With
``cases.resolve_requires_owner`` only the owner or an approver (``cases.approvers``, else
``slack.admin_users``) resolves, reopens or audits a case; an unowned case (and an
auto-resolved one: socbot owns it) then only an approver. An audit (the blind review of an
auto-resolved case, ``bot.decisions.case_audit``) is authorised as a resolution.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

Decision = Literal["take", "assign", "resolve", "reopen", "audit"]
DECISIONS: tuple[Decision, ...] = ("take", "assign", "resolve", "reopen", "audit")
RESTRICTED: tuple[Decision, ...] = ("resolve", "reopen", "audit")  # resolve_requires_owner

NOT_HERE = "I can only take decisions on my own cases, in the thread of their conclusion."
NOT_MEMBER = "Only members of this channel can decide on its cases."
BAD_ASSIGNEE = "A case can only go to a member of its channel."
OWNER_ONLY = "Only the case's owner or an approver (cases.approvers) can resolve or reopen it."


@dataclass(frozen=True)
class Where:
    """Where a case lives (its conclusion's thread) and who owns it."""

    channel: str | None
    thread_ts: str | None
    owner: str | None


@dataclass(frozen=True)
class Rules:
    """The settings the rules read."""

    resolve_requires_owner: bool
    approvers: frozenset[str]
    bot_user: str | None = None  # socbot's user id; None: unknown, so nobody is assigned


def refusal(
    decision: Decision,
    user: str,
    *,
    channel: str,
    thread_ts: str,
    case: Where | None,
    members: Collection[str],
    rules: Rules,
    assignee: str,
) -> str | None:
    """Why ``user`` may not make ``decision`` on ``case`` from this click, or None."""
    if case is None or not user or decision not in DECISIONS:
        return NOT_HERE
    if not case.channel or channel != case.channel or thread_ts != case.thread_ts:
        return NOT_HERE
    if user not in members:
        return NOT_MEMBER
    if decision == "assign" and (
        not assignee or assignee not in members or rules.bot_user in (None, assignee)
    ):
        return BAD_ASSIGNEE
    if decision in RESTRICTED and rules.resolve_requires_owner:
        if user not in rules.approvers and (case.owner is None or user != case.owner):
            return OWNER_ONLY
    return None

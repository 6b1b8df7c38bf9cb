"""A case's Block Kit: its buttons under a conclusion, and what its thread is told of each
decision (taken, assigned, resolved, reopened, an unowned-case reminder).

People's words (a reason, what socbot missed) are escaped; user and group ids are
checked before they become mentions (a stored id is never trusted to be one)."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.blocks.escape import escape
from bot.blocks.kit import Block, Message, button, clip, context_block, fallback_text, section
from store.schema import CaseRow, CaseStatus

CASE_BLOCK = "case:"  # + the investigation id: the block_id of a conclusion's case buttons
DISPOSITION_LABELS = {
    "true_positive": "True positive",
    "false_positive": "False positive",
    "benign": "Benign",
    "duplicate": "Duplicate",
}
VERDICT_WORDS = {**DISPOSITION_LABELS, "inconclusive": "Inconclusive"}
TEXT_CHARS = 1000
TOO_LATE = "Someone decided on this case just before you: it is {state} now."
NO_CHANGE = "Nothing to change: the case is {state} already."
_USER = re.compile(r"^[UW][A-Z0-9]{2,20}$")
_GROUP = re.compile(r"^S[A-Z0-9]{2,20}$")


def mention(user: str | None) -> str:
    """``<@U…>`` for a Slack user id, else the text escaped."""
    if user and _USER.match(user):
        return f"<@{user}>"
    return escape(user or "nobody")


def unchanged_note(case: CaseRow | None, user: str) -> str:
    """What ``user``, whose decision changed nothing, is told: the case as it is now."""
    if case is None:
        state = "gone"
    elif case.status == CaseStatus.RESOLVED:
        state = f"resolved ({escape(case.disposition or 'none')})"
    else:
        state = f"owned by {mention(case.owner)}" if case.owner else "open"
    mine = case is not None and case.owner == user and case.status != CaseStatus.RESOLVED
    return (NO_CHANGE if mine else TOO_LATE).format(state=state)


def case_actions(investigation_id: str) -> Block:
    """Take it · Assign… (a user picker) · Resolve…, for the case of ``investigation_id``."""
    return {
        "type": "actions",
        "block_id": (CASE_BLOCK + investigation_id)[:255],
        "elements": [
            button("🙋 Take it", "case_take", investigation_id, "primary"),
            {
                "type": "users_select",
                "action_id": "case_assign",
                "placeholder": {"type": "plain_text", "text": "Assign…"},
            },
            button("✅ Resolve…", "case_resolve", investigation_id),
        ],
    }


def _label(word: str | None) -> str:
    return VERDICT_WORDS.get(word or "", escape(word or "none"))


def _quoted(text: str | None) -> str:
    return escape(clip(" ".join((text or "").split()), TEXT_CHARS))


def decision_message(
    action: str,
    *,
    case_id: int,
    actor: str,
    owner: str | None,
    disposition: str | None = None,
    socbot_verdict: str | None = None,
    escalated: bool = False,
    reason: str | None = None,
    missed: str | None = None,
    actions_for: str | None = None,
) -> Message:
    """What the case's thread is told of one decision; ``actions_for`` (an investigation
    id) adds Take it · Assign… · Resolve… to a reopening, where the conclusion has none
    (an auto-resolved case's)."""
    if action == "taken":
        text = f"🙋 {mention(actor)} took this case."
    elif action == "assigned":
        text = f"👤 {mention(actor)} assigned this case to {mention(owner)}."
    elif action == "reopened":
        text = f"↩️ {mention(actor)} reopened this case (owner: {mention(owner)})."
        if actions_for:
            blocks = [section(text), case_actions(actions_for)]
            return {"text": fallback_text(text), "blocks": blocks}
    else:
        return _resolved(case_id, actor, disposition, socbot_verdict, escalated, reason, missed)
    return {"text": fallback_text(text), "blocks": [section(text)]}


def _resolved(
    case_id: int,
    actor: str,
    disposition: str | None,
    socbot_verdict: str | None,
    escalated: bool,
    reason: str | None,
    missed: str | None,
) -> Message:
    flag = " · 🚩 escalated" if escalated else ""
    text = f"✅ {mention(actor)} resolved this case: *{_label(disposition)}*{flag}."
    lines = [text]
    if reason:
        lines.append(f"> {_quoted(reason)}")
    agreed = disposition == socbot_verdict
    said = f"socbot said {_label(socbot_verdict)}" + (" — agreed" if agreed else " — differs")
    notes = [said]
    if missed and not agreed:
        notes.append(f"missed: {_quoted(missed)}")
    blocks: list[Block] = [
        section("\n".join(lines)),
        context_block(*notes),
        {
            "type": "actions",
            "block_id": f"case_resolved:{case_id}",
            "elements": [button("↩️ Reopen", "case_reopen", str(case_id))],
        },
    ]
    return {"text": fallback_text(text), "blocks": blocks}


def reminder_message(
    investigation_id: str, *, severity: str | None, waited: timedelta, oncall: str = ""
) -> Message:
    """One reminder of an open case nobody took, with its buttons again."""
    minutes = max(int(waited.total_seconds() // 60), 0)
    age = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
    who = f"<!subteam^{oncall}> " if _GROUP.match(oncall or "") else ""
    level = escape(severity or "unknown")
    text = f"⏰ {who}This {level}-severity case has had no owner for {age}."
    return {"text": fallback_text(text), "blocks": [section(text), case_actions(investigation_id)]}

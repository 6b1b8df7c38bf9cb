"""What a case's thread is told when socbot resolved it itself (a policy rule's
``auto_resolve``) and when a person gave the blind review of such a case.

The auto-resolution says which rule closed the case, offers *Reopen*, and — for a case
drawn for audit — *Review…*, which opens a dialog that does not show socbot's verdict
(``bot.decisions._audit_dialog``); its text does not repeat the verdict either. The
conclusion of such a case shows that state and those actions instead of the case buttons
(``auto_resolved_state``). The review's answer is told afterwards, with whether it agrees
with socbot's."""

from __future__ import annotations

from bot.blocks.case import VERDICT_WORDS, mention
from bot.blocks.escape import escape
from bot.blocks.kit import Block, Message, button, clip, context_block, fallback_text, section

AUDIT_ACTION = "case_audit"  # the Review… button; its value is the case id
RULE_CHARS = 80
REVIEW_ASK = (
    "🔍 Drawn for a blind review of socbot's auto-resolution: what was this alert? "
    "Decide from the alert and its logs before reading socbot's conclusion above."
)


def _label(word: str | None) -> str:
    return VERDICT_WORDS.get(word or "", escape(clip(word or "none", 32)))


def _reopen(case_id: int) -> Block:
    return button("↩️ Reopen", "case_reopen", str(case_id))


def _named(rule: str | None) -> str:
    return f"`{escape(clip(rule or 'unknown', RULE_CHARS))}`"


def _auto_actions(case_id: int, audit: bool) -> Block:
    """*Review…* (a drawn case) and *Reopen*: the actions an auto-resolved case takes."""
    elements = [_reopen(case_id)]
    if audit:
        elements.insert(0, button("🔍 Review…", AUDIT_ACTION, str(case_id), "primary"))
    return {"type": "actions", "block_id": f"case_auto:{case_id}", "elements": elements}


def auto_resolved_state(case_id: int, *, rule: str | None, audit: bool) -> list[Block]:
    """Under the conclusion of a case socbot closed itself, instead of *Take it*, *Assign…*
    and *Resolve…* (which a resolved case refuses): its state and what it still takes."""
    state = f"🤖 Auto-resolved by socbot (rule {_named(rule)})."
    return [context_block(state), _auto_actions(case_id, audit)]


def auto_resolved_message(
    case_id: int, *, rule: str | None, disposition: str | None, audit: bool
) -> Message:
    """socbot resolved the case by ``rule``; a drawn case asks for the review."""
    text = f"🤖 socbot resolved this case automatically by rule {_named(rule)}"
    if audit:  # the review is blind: the verdict is not repeated here
        text += "."
        notes = [REVIEW_ASK]
    else:
        text += f": *{_label(disposition)}*."
        notes = ["Reopen it if socbot was wrong."]
    blocks = [section(text), context_block(*notes), _auto_actions(case_id, audit)]
    return {"text": fallback_text(text), "blocks": blocks}


def audited_message(
    case_id: int, *, actor: str, answer: str | None, socbot_verdict: str | None
) -> Message:
    """A person's blind review, and whether it agrees with socbot's auto-resolution."""
    text = f"🔍 {mention(actor)} gave the blind review: *{_label(answer)}*."
    missed = answer == "true_positive"
    if missed:
        note = f"socbot closed it as {_label(socbot_verdict)}: a real alert was closed. Reopen it."
    elif answer == "duplicate":
        note = "A duplicate: not counted for or against the rule."
    else:
        note = "Agrees with socbot's auto-resolution (both: nothing to do)."
    blocks: list[Block] = [section(text), context_block(note)]
    if missed:
        blocks.append(
            {
                "type": "actions",
                "block_id": f"case_audited:{case_id}",
                "elements": [_reopen(case_id)],
            }
        )
    return {"text": fallback_text(text), "blocks": blocks}

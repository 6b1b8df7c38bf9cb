"""👍 / 👎 on a verdict as Slack's own AI feedback element (``feedback_buttons`` in a
``context_actions`` block), and the way back to today's two buttons.

The element carries the vote in its value (``correct:<investigation id>`` or
``incorrect:<investigation id>``) under one ``action_id`` (``FEEDBACK_ELEMENT``);
``bot.decisions.votes`` reads it as it reads the buttons (``vote_of``), so the votes, the
👎 dialog and learning are the same. Slack documents the element for messages
(docs.slack.dev, "Feedback buttons element", "Context actions block"); a workspace or
client that refuses it answers ``invalid_blocks``, and the message is posted again with
the buttons (``with_vote_buttons``, ``bot.slack.posting``).
"""

from __future__ import annotations

from bot.blocks.kit import Block, Message, button

FEEDBACK_ELEMENT = "feedback_verdict"
ELEMENT_BLOCK = "feedback_vote"
BUTTONS_BLOCK = "feedback_votes"
VOTE_BUTTONS = ("feedback_correct", "feedback_incorrect")


def vote_element(investigation_id: str) -> Block:
    """The ``context_actions`` block with 👍 / 👎 (values name the vote and the run)."""
    return {
        "type": "context_actions",
        "block_id": ELEMENT_BLOCK,
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ELEMENT,
                "positive_button": _face("👍", "Verdict correct", "correct", investigation_id),
                "negative_button": _face("👎", "Verdict incorrect", "incorrect", investigation_id),
            }
        ],
    }


def vote_buttons(investigation_id: str) -> Block:
    """Today's two vote buttons, in a block of their own (the element's fallback)."""
    return {
        "type": "actions",
        "block_id": BUTTONS_BLOCK,
        "elements": [
            button("👍 Verdict correct", VOTE_BUTTONS[0], investigation_id, "primary"),
            button("👎 Verdict incorrect", VOTE_BUTTONS[1], investigation_id, "danger"),
        ],
    }


def vote_of(action_id: str, value: str) -> tuple[bool, str] | None:
    """(correct?, investigation id) of a click on the buttons or the element; None for
    anything else (fail closed)."""
    if action_id in VOTE_BUTTONS:
        return action_id == VOTE_BUTTONS[0], value
    if action_id != FEEDBACK_ELEMENT:
        return None
    word, _, investigation_id = value.partition(":")
    if word not in ("correct", "incorrect") or not investigation_id:
        return None
    return word == "correct", investigation_id


def has_element(message: Message) -> bool:
    return any(b.get("block_id") == ELEMENT_BLOCK for b in message.get("blocks") or [])


def with_vote_buttons(message: Message) -> Message:
    """``message`` with the element swapped for the two buttons (same place, same run)."""
    blocks: list[Block] = []
    for block in message.get("blocks") or []:
        if block.get("block_id") != ELEMENT_BLOCK:
            blocks.append(block)
            continue
        element = block["elements"][0]
        investigation_id = str(element["positive_button"]["value"]).partition(":")[2]
        blocks.append(vote_buttons(investigation_id))
    return {**message, "blocks": blocks}


def _face(emoji: str, label: str, word: str, investigation_id: str) -> Block:
    return {
        "text": {"type": "plain_text", "text": emoji, "emoji": True},
        "accessibility_label": label,
        "value": f"{word}:{investigation_id}"[:2000],
    }

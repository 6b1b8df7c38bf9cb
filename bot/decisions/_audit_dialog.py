"""The blind review dialog of an auto-resolved case: what was this alert? It shows the case
number, the alert's title and source, and the dispositions — never socbot's verdict, its
confidence or the rule's disposition. What comes back is read as data from anyone: only a
listed disposition counts."""

from __future__ import annotations

import json
from typing import Any

from bot.blocks.case import DISPOSITION_LABELS
from bot.decisions._case_dialog import Target
from store.schema import CaseDisposition

AUDIT_VIEW_ID = "case_audit_dialog"
CHOOSE = "Choose what the alert was."
TITLE_CHARS = 300


def _plain(text: str, size: int = 75) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:size] or " ", "emoji": True}


def audit_dialog(target: Target, title: str, source: str | None) -> dict[str, Any]:
    """The modal (``title`` and ``source`` are the alert's: plain text, inert)."""
    options = [
        {"text": _plain(label), "value": value} for value, label in DISPOSITION_LABELS.items()
    ]
    about = f"Case #{target.case_id} · {source or 'unknown source'} · {title}"
    return {
        "type": "modal",
        "callback_id": AUDIT_VIEW_ID,
        "private_metadata": json.dumps(
            {"case_id": target.case_id, "channel": target.channel, "thread_ts": target.thread_ts}
        ),
        "title": _plain("Blind review", 24),
        "submit": _plain("Record", 24),
        "close": _plain("Cancel", 24),
        "blocks": [
            {"type": "context", "elements": [_plain(about, TITLE_CHARS)]},
            {
                "type": "context",
                "elements": [
                    _plain(
                        "socbot closed this alert on its own. Its verdict is not shown here: "
                        "say what the alert was, from the alert and its logs.",
                        200,
                    )
                ],
            },
            {
                "type": "input",
                "block_id": "disposition",
                "label": _plain("What was it?"),
                "element": {
                    "type": "static_select",
                    "action_id": "disposition",
                    "options": options,
                },
            },
        ],
    }


def read_answer(values: dict[str, Any]) -> CaseDisposition | None:
    """The chosen disposition, or None for anything not listed."""
    try:
        chosen = values["disposition"]["disposition"]["selected_option"]["value"]
    except (KeyError, TypeError):
        return None
    return (
        CaseDisposition(chosen)
        if isinstance(chosen, str) and chosen in DISPOSITION_LABELS
        else None
    )

"""The Resolve… dialog of a case: disposition (required, pre-set to the analyst's 👎 verdict
if they gave one), escalated, reason, and what socbot missed — required when the
disposition differs from socbot's verdict, so every disagreement says why. What comes
back is read as data from anyone: only the listed dispositions, text cut to size."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.blocks.case import DISPOSITION_LABELS, VERDICT_WORDS
from store.cases.transitions import REASON_CHARS, Resolution
from store.schema import CaseDisposition

VIEW_ID = "case_resolve_dialog"
MISSED_NEEDED = "Say what socbot missed: your disposition differs from its verdict."


@dataclass(frozen=True)
class Target:
    """The case a dialog is about (its ``private_metadata``)."""

    case_id: int
    channel: str
    thread_ts: str

    @classmethod
    def read(cls, view: dict[str, Any]) -> Target | None:
        try:
            meta = json.loads(str(view.get("private_metadata") or ""))
            return cls(int(meta["case_id"]), str(meta["channel"]), str(meta["thread_ts"]))
        except (ValueError, KeyError, TypeError):
            return None


def _text(label: str, size: int = 75) -> dict[str, Any]:
    return {"type": "plain_text", "text": label[:size], "emoji": True}


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _text(label), "value": value}


def _text_input(block_id: str, label: str, *, optional: bool) -> dict[str, Any]:
    element = {
        "type": "plain_text_input",
        "action_id": block_id,
        "multiline": True,
        "max_length": REASON_CHARS,
    }
    return {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": _text(label),
        "element": element,
    }


def resolve_dialog(
    target: Target, socbot_verdict: str | None, initial: str | None
) -> dict[str, Any]:
    """The modal; ``initial``: the disposition to pre-select (the analyst's 👎 verdict)."""
    options = [_option(value, label) for value, label in DISPOSITION_LABELS.items()]
    select: dict[str, Any] = {
        "type": "static_select",
        "action_id": "disposition",
        "options": options,
    }
    if initial in DISPOSITION_LABELS:
        select["initial_option"] = _option(initial, DISPOSITION_LABELS[initial])
    said = VERDICT_WORDS.get(socbot_verdict or "", "no verdict")
    escalate = _option("yes", "Escalated beyond the SOC")
    return {
        "type": "modal",
        "callback_id": VIEW_ID,
        "private_metadata": json.dumps(
            {"case_id": target.case_id, "channel": target.channel, "thread_ts": target.thread_ts}
        ),
        "title": _text("Resolve the case", 24),
        "submit": _text("Resolve", 24),
        "close": _text("Cancel", 24),
        "blocks": [
            {
                "type": "context",
                "elements": [{"type": "plain_text", "text": f"socbot said: {said}"}],
            },
            {
                "type": "input",
                "block_id": "disposition",
                "label": _text("What was it?"),
                "element": select,
            },
            {
                "type": "input",
                "block_id": "escalated",
                "optional": True,
                "label": _text("Escalated?"),
                "element": {"type": "checkboxes", "action_id": "escalated", "options": [escalate]},
            },
            _text_input("reason", "Why? (the team reads it)", optional=True),
            _text_input("missed", "What did socbot miss? (when it was wrong)", optional=True),
        ],
    }


def read_resolution(
    values: dict[str, Any], socbot_verdict: str | None
) -> tuple[Resolution | None, dict[str, str]]:
    """The dialog's answer, or the errors to show in it."""
    try:
        chosen = values["disposition"]["disposition"]["selected_option"]["value"]
    except (KeyError, TypeError):
        chosen = None
    if chosen not in DISPOSITION_LABELS:
        return None, {"disposition": "Choose what the alert was."}
    ticked = _get(values, "escalated", "selected_options") or []
    escalated = isinstance(ticked, list) and any(
        isinstance(o, dict) and o.get("value") == "yes" for o in ticked
    )
    reason = _get(values, "reason", "value")
    missed = _get(values, "missed", "value")
    differs = chosen != socbot_verdict and chosen != CaseDisposition.DUPLICATE
    if differs and not (isinstance(missed, str) and missed.strip()):
        return None, {"missed": MISSED_NEEDED}
    return (
        Resolution(
            CaseDisposition(chosen),
            escalated=escalated,
            reason=str(reason)[:REASON_CHARS] if isinstance(reason, str) else None,
            missed=str(missed)[:REASON_CHARS] if differs and isinstance(missed, str) else None,
        ),
        {},
    )


def _get(values: dict[str, Any], block: str, key: str) -> Any:
    field = (values.get(block) or {}).get(block) or {}
    return field.get(key) if isinstance(field, dict) else None

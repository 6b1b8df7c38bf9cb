"""The playbook review's edit dialog (``bot.decisions.playbook_review``): the modal, and its
submission read and checked before anything is stored.

The dialog has the bullet's text and scope. A submission is hostile input (anyone with
the app's views can forge one): it is parsed fail-closed (a malformed one is ``None``)
and checked with the same rules as every other entry (``store.playbook.rules``); each
problem is one line under its field (bolt's ``response_action: errors``), naming what
is allowed, and the dialog stays open.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from store.playbook.bullets import PlaybookBullet
from store.playbook.rules import SCOPES, content_problem, scope_problem

EDIT_VIEW = "playbook_edit"
MAX_CONTENT = 600
MAX_SCOPE = 64


@dataclass(frozen=True)
class Edit:
    """What a submitted dialog asks: the proposal, where it was shown, the new text."""

    bullet_id: str
    channel: str
    ts: str
    content: str
    scope: str | None  # None: the dialog had no scope field (opened by an older socbot)

    def problems(self) -> dict[str, str]:
        """``{block_id: one line}`` for each field that may not enter the playbook."""
        problems: dict[str, str] = {}
        content = content_problem(self.content)
        if content is not None:
            problems["content"] = content
        if self.scope is not None and len(self.scope) > MAX_SCOPE:
            problems["scope"] = f"scope is over {MAX_SCOPE} characters; allowed: {SCOPES}"
        elif self.scope is not None and (scope := scope_problem(self.scope)) is not None:
            problems["scope"] = scope
        return problems


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def _input(block_id: str, label: str, value: str, *, max_length: int, multiline: bool) -> Any:
    return {
        "type": "input",
        "block_id": block_id,
        "label": {"type": "plain_text", "text": label},
        "element": {
            "type": "plain_text_input",
            "action_id": block_id,
            "multiline": multiline,
            "max_length": max_length,
            "initial_value": _clip(value, max_length),
        },
    }


def edit_view(bullet: PlaybookBullet, channel: str, ts: str) -> dict[str, Any]:
    """The modal editing ``bullet`` (shown in ``channel`` at ``ts``) before approving it."""
    scope = _input("scope", "Scope", bullet.scope, max_length=MAX_SCOPE, multiline=False)
    scope["hint"] = {"type": "plain_text", "text": f"One of: {SCOPES}"}
    return {
        "type": "modal",
        "callback_id": EDIT_VIEW,
        "private_metadata": json.dumps({"id": bullet.id, "channel": channel, "ts": ts}),
        "title": {"type": "plain_text", "text": "Edit and approve"},
        "submit": {"type": "plain_text", "text": "Approve"},
        "blocks": [
            _input(
                "content", "Bullet text", bullet.content, max_length=MAX_CONTENT, multiline=True
            ),
            scope,
        ],
    }


def submitted(view: dict[str, Any]) -> Edit | None:
    """The edit a submitted dialog asks for; None when the submission is malformed."""
    try:
        meta = json.loads(str(view.get("private_metadata") or ""))
        values = view["state"]["values"]
        content = str(values["content"]["content"]["value"] or "")
        scope_field = values.get("scope")
        scope = None if scope_field is None else str(scope_field["scope"]["value"] or "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(meta, dict):
        return None
    return Edit(
        bullet_id=str(meta.get("id") or ""),
        channel=str(meta.get("channel") or ""),
        ts=str(meta.get("ts") or ""),
        content=content.strip()[:MAX_CONTENT],
        scope=None if scope is None else scope.strip(),
    )

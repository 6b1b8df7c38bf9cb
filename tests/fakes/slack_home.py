"""The fake Slack API's ``views.publish``, refusing what Slack refuses: a ``user_id`` is
required and the ``view`` must be a valid ``home`` view (checked with slack_sdk's own
``View.validate_json``). Stateless like ``slack_assistant``: each user's last view is
``published(fake)[user]``. Registered in ``tests/fakes/slack_api.py`` with ``**HOME``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.views import View

from tests.fakes.block_kit import problems

if TYPE_CHECKING:
    from tests.fakes.slack_api import Call, FakeSlackAPI


def refusal(args: dict[str, Any]) -> str | None:
    """The error Slack answers ``views.publish`` with for ``args``, or None."""
    if not isinstance(args.get("user_id"), str) or not args["user_id"]:
        return "user_not_found"
    view = args.get("view")
    try:
        view = json.loads(view) if isinstance(view, str) else view
        if not isinstance(view, dict) or view.get("type") != "home":
            return "invalid_arguments"
        View(**view).validate_json()
        if problems(view.get("blocks"), "modal"):  # home: same 100-block rules
            return "invalid_arguments"
    except (ValueError, TypeError, SlackObjectFormationError):
        return "invalid_arguments"
    return None


def _publish(call: Call) -> dict[str, Any]:
    error = refusal(call.args)
    return {"ok": False, "error": error} if error else {"ok": True}


HOME: dict[str, Callable[[Call], dict[str, Any]]] = {"views.publish": _publish}


def published(fake: FakeSlackAPI) -> dict[str, dict[str, Any]]:
    """Each user's last accepted home view."""
    out: dict[str, dict[str, Any]] = {}
    for call in fake.calls_to("views.publish"):
        if call.status == 200 and refusal(call.args) is None:
            view = call.args["view"]
            out[call.args["user_id"]] = json.loads(view) if isinstance(view, str) else view
    return out

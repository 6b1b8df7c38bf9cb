"""What the fake Slack API's ``views.publish`` accepted (checked there with ``check_view``):
each user's last Home view, ``published(fake)[user]``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.fakes.block_kit import check_view

if TYPE_CHECKING:
    from tests.fakes.slack_api import FakeSlackAPI


def published(fake: FakeSlackAPI) -> dict[str, dict[str, Any]]:
    """Each user's last accepted home view."""
    out: dict[str, dict[str, Any]] = {}
    for call in fake.calls_to("views.publish"):
        view = call.args.get("view")
        view = json.loads(view) if isinstance(view, str) else view
        if call.status == 200 and call.args.get("user_id") and check_view(view) is None:
            out[call.args["user_id"]] = view
    return out

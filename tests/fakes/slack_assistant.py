"""The fake Slack API's assistant methods (``assistant.threads.*``), refusing what Slack
refuses (docs.slack.dev, reference/methods: ``setSuggestedPrompts`` takes up to four
prompts, each with a ``title`` and a ``message``, for a ``channel_id``; ``setTitle`` a
``title`` for a thread; ``setStatus`` a ``status``, empty to clear, for a thread).

Stateless: what socbot set is in ``fake.calls``; ``accepted(fake, method)`` lists the
calls the fake answered ``ok``. Registered in ``tests/fakes/slack_api.py`` with
``**ASSISTANT``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.slack_api import Call, FakeSlackAPI

MAX_PROMPTS = 4


def refusal(method: str, args: dict[str, Any]) -> str | None:
    """The error Slack answers ``method`` with for ``args``, or None when it takes them."""
    if not isinstance(args.get("channel_id"), str) or not args["channel_id"]:
        return "channel_not_found"
    if method != "assistant.threads.setSuggestedPrompts" and not args.get("thread_ts"):
        return "invalid_thread_ts"
    if method == "assistant.threads.setTitle":
        return None if isinstance(args.get("title"), str) and args["title"] else "invalid_arguments"
    if method == "assistant.threads.setStatus":
        return None if isinstance(args.get("status"), str) else "invalid_arguments"
    prompts = args.get("prompts")
    if isinstance(prompts, str):
        try:
            prompts = json.loads(prompts)
        except ValueError:
            return "invalid_arguments"
    if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
        return "invalid_arguments"
    for prompt in prompts:
        if not isinstance(prompt, dict):
            return "invalid_arguments"
        if not all(isinstance(prompt.get(k), str) and prompt[k] for k in ("title", "message")):
            return "invalid_arguments"
    return None


def _handler(method: str) -> Callable[[Call], dict[str, Any]]:
    def answer(call: Call) -> dict[str, Any]:
        error = refusal(method, call.args)
        return {"ok": False, "error": error} if error else {"ok": True}

    return answer


ASSISTANT: dict[str, Callable[[Call], dict[str, Any]]] = {
    method: _handler(method)
    for method in (
        "assistant.threads.setSuggestedPrompts",
        "assistant.threads.setTitle",
        "assistant.threads.setStatus",
    )
}


def accepted(fake: FakeSlackAPI, method: str) -> list[Call]:
    """The calls of ``method`` the fake's rules took (a failure scripted with
    ``fail_next`` on HTTP 200 is not told apart: count those calls instead)."""
    return [c for c in fake.calls_to(method) if c.status == 200 and refusal(method, c.args) is None]

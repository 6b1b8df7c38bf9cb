"""What a playbook bullet must be to enter the playbook, checked at every entry.

``socbot playbook add`` and ``import``, the Slack edit dialog and the curator's
proposals all pass through ``PlaybookStore.add`` / ``put`` / ``edit``, which call
``check``; the file reader and the CLI call it earlier, so that nothing is written
before the whole input is known good. Each problem is one line naming what is allowed.
"""

from __future__ import annotations

import re

MAX_CONTENT = 2000
SCOPES = "global, source:<alert source> (e.g. source:guardduty) or channel:<channel id>"
SCOPE = re.compile(r"^(global|source:[a-z0-9][a-z0-9_-]{0,40}|channel:[A-Z0-9]{2,20})$")


class BulletInvalid(ValueError):
    """A bullet that may not enter the playbook; the message is one line."""


def scope_problem(scope: str) -> str | None:
    """Why ``scope`` is not allowed (one line), or None."""
    if SCOPE.match(scope):
        return None
    kind, colon, value = scope.partition(":")
    if colon and kind in ("source", "channel") and not value.strip():
        return f"scope {scope!r} needs a value after {kind + ':'!r}; allowed: {SCOPES}"
    return f"scope {scope!r} is not allowed; allowed: {SCOPES}"


def content_problem(content: str) -> str | None:
    """Why ``content`` is not allowed (one line), or None."""
    if not content.strip():
        return "content is empty: write the instruction or fact (one or two sentences)"
    if len(content) > MAX_CONTENT:
        return f"content is {len(content)} characters; at most {MAX_CONTENT} are allowed"
    return None


def check(content: str, scope: str) -> None:
    """Raise ``BulletInvalid`` (one line) unless the bullet may enter the playbook."""
    problem = content_problem(content) or scope_problem(scope)
    if problem is not None:
        raise BulletInvalid(problem)

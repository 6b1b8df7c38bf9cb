"""The egress gate for arguments sent to an ``external`` MCP server.

The same judgement as the threat-intel lookups (``tools.intel.internal``): every
string in the arguments (keys too, and numbers, which may spell an address) is split
into tokens, percent-, base64- and hex-decoded, and refused when it carries an e-mail
address, an internal domain or an address that is not public. The refusal is a
``ToolError``: the model reads why, and nothing was sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tools.base import ToolError
from tools.intel.internal import text_reasons

MAX_REASONS = 5


class ArgumentsWithheld(ToolError):
    """The arguments carry something internal; the call was not made."""


def ensure_sendable(server: str, args: dict[str, Any], internal_suffixes: Iterable[str]) -> None:
    """Raise ``ArgumentsWithheld`` unless nothing internal is in ``args``."""
    suffixes = tuple(internal_suffixes)
    reasons: dict[str, None] = {}
    for text in _texts(args):
        reasons.update(dict.fromkeys(text_reasons(text, suffixes)))
    if reasons:
        shown = list(reasons)[:MAX_REASONS]
        raise ArgumentsWithheld(
            f"not sent: {server!r} is an external service and the arguments contain "
            + "; ".join(shown)
            + ". Internal addresses, names and e-mail addresses never leave the machine."
        )


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
    else:
        yield str(value)

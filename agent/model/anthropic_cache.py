"""Where a request to Anthropic marks ``cache_control``, and how its text is cut into blocks.

Anthropic caches a prompt prefix (tools, system, messages, in that order) only where a
block carries ``cache_control`` (at most ``MAX_BREAKPOINTS``), and a later request reads
it when one of its own breakpoints sits on the same prefix or up to 20 blocks after it.
Prefixes are compared block by block, so a shared text must end on a block boundary.

socbot's requests are laid out for caching (``agent.prompts``): the investigation stages
share one system instruction, and their task turn is the same case file and results,
fenced data item after data item, with the stage's own task section (``socbot stage:``)
last. So a user text is sent as blocks cut where a data item (``<<<DATA-``) or the task
section begins — their concatenation is the text, byte for byte — and the breakpoints
are, in this order of priority: the last tool, the system, the last block, the block
before the last message's task section (the end of what the next stage repeats), and the
last block of the user message before (a tool loop's previous round).
"""

from __future__ import annotations

import re
from typing import Any

MAX_BREAKPOINTS = 4
TASK = "socbot stage: "
_CUT = re.compile(r"(?m)^(?=<<<DATA-|socbot stage: )")
_CACHE = {"type": "ephemeral"}
_UNMARKABLE = ("thinking", "redacted_thinking")


def text_blocks(text: str) -> list[dict[str, Any]]:
    """``text`` as text blocks cut before each data item and the task section; a piece
    that is only whitespace joins the next (the API refuses blank blocks)."""
    pieces: list[str] = []
    carry = ""
    for piece in _CUT.split(text):
        if not piece.strip():
            carry += piece
            continue
        pieces.append(carry + piece)
        carry = ""
    if carry and pieces:
        pieces[-1] += carry
    return [{"type": "text", "text": p} for p in pieces]


def mark_cache(params: dict[str, Any], messages: list[dict[str, Any]]) -> None:
    """Put ``cache_control`` on at most ``MAX_BREAKPOINTS`` blocks of the request."""
    marks: list[dict[str, Any]] = []
    if params.get("tools"):
        marks.append(params["tools"][-1])
    if params.get("system"):
        marks.append(params["system"][-1])
    if messages:
        blocks = messages[-1]["content"]
        marks.append(blocks[-1])
        task = [i for i, b in enumerate(blocks) if str(b.get("text", "")).startswith(TASK)]
        if task and task[-1] > 0:
            marks.append(blocks[task[-1] - 1])
    earlier = [m for m in messages[:-1] if m["role"] == "user"]
    if earlier:
        marks.append(earlier[-1]["content"][-1])
    chosen: list[dict[str, Any]] = []
    for block in marks:
        if block.get("type") not in _UNMARKABLE and all(block is not c for c in chosen):
            chosen.append(block)
    for block in chosen[:MAX_BREAKPOINTS]:
        block["cache_control"] = dict(_CACHE)

"""Block Kit building blocks shared by every message socbot posts.

Slack's Block Kit limits are kept here, one constant each (api.slack.com/reference/
block-kit; the test fake states them again independently, so a wrong number here is
caught). Long text is split on line boundaries; a split inside a ``` code block closes
the block and reopens it in the next section, so every section renders on its own. A
message's blocks carry at most ``MESSAGE_CHARS`` of text, counting every text in them
(notes and footers too): Slack refuses more with ``msg_blocks_too_long`` somewhere
between about 11,300 and 13,200 characters, so the budget keeps a margin below that,
and a long answer arrives as a few readable messages rather than one wall.
Text given to these helpers is already safe mrkdwn (``bot.blocks.escape``), except
``header`` and ``one_line``, which escape what they are given, and a ``button``'s label
(a constant of socbot's own).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bot.blocks.escape import defang, escape, mrkdwn, plain

Block = dict[str, Any]
Message = dict[str, Any]

SECTION_CHARS = 3000  # a section's text
HEADER_CHARS = 150  # a header's text
MAX_BLOCKS = 50  # blocks in a message
VIEW_BLOCKS = 100  # blocks in a modal or Home view
CONTEXT_ELEMENTS = 10  # elements in a context block
ACTIONS_ELEMENTS = 25  # elements in an actions block
BUTTON_TEXT_CHARS = 75
BUTTON_VALUE_CHARS = 2000
ID_CHARS = 255  # block_id, action_id, callback_id
DIALOG_TEXT_CHARS = 24  # a modal's title, submit and close
PRIVATE_METADATA_CHARS = 3000
OPTION_TEXT_CHARS = 75
OPTION_VALUE_CHARS = 150
TEXT_CHARS = 40_000  # a message's top-level ``text``
STREAM_CHARS = 12_000  # markdown_text of one chat.startStream/appendStream/stopStream call
MESSAGE_CHARS = 10_000  # every text in a message's blocks (Slack refuses from ~11,300)
NOTE_CHARS = 100  # kept free in each part for the "continued" note
FALLBACK_CHARS = 300
SAFE_POST_FLAGS: dict[str, bool] = {"unfurl_links": False, "unfurl_media": False}
SEVERITY_EMOJI = {"critical": "🔴", "high": "🟠", "medium": "🟡", "low": "🔵", "info": "⚪"}
FENCE = "```"


def hard_cut(line: str, size: int) -> list[str]:
    """Cut one over-long line into pieces of at most ``size``, never inside an entity."""
    pieces: list[str] = []
    while len(line) > size:
        cut = size
        space = line.rfind(" ", max(0, size - 200), size)
        if space > 0:
            cut = space + 1  # prefer a word boundary
        amp = line.rfind("&", max(0, cut - 6), cut)
        if amp > 0 and ";" not in line[amp:cut]:
            cut = amp  # would split "&amp;" / "&lt;" / "&gt;"
        pieces.append(line[:cut])
        line = line[cut:]
    pieces.append(line)
    return pieces


def split_text(text: str, limit: int = SECTION_CHARS) -> list[str]:
    """Split mrkdwn into chunks of at most ``limit`` chars with balanced code fences."""
    if len(text) <= limit and text.count(FENCE) % 2 == 0:
        return [text] if text.strip() else []
    chunks: list[str] = []
    lines: list[str] = []
    size = 0
    in_code = False  # inside a fence at the current point
    for raw in text.split("\n"):
        for line in hard_cut(raw, limit - 2 * (len(FENCE) + 1)):
            closing = len(FENCE) + 1 if in_code or line.count(FENCE) % 2 else 0
            if lines and size + 1 + len(line) + closing > limit:
                chunks.append("\n".join([*lines, FENCE] if in_code else lines))
                lines = [FENCE] if in_code else []
                size = len(FENCE) if in_code else -1
            lines.append(line)
            size += 1 + len(line)
            if line.count(FENCE) % 2:
                in_code = not in_code
    if lines:
        chunks.append("\n".join([*lines, FENCE] if in_code else lines))
    return [c for c in chunks if c.strip() and c.strip() != f"{FENCE}\n{FENCE}"]


def clip(text: str, size: int) -> str:
    """``text`` cut to at most ``size`` chars, ending in "…", never inside an entity."""
    return text if len(text) <= size else hard_cut(text, size - 1)[0] + "…"


def code_block(text: str, size: int, indicators: Iterable[str] = ()) -> str:
    """Untrusted ``text`` as one mrkdwn code block of at most ``size`` characters.

    Escaped and defanged; a run of backticks in it is broken with zero-width spaces, so
    a triple backtick the text carries cannot close the block early (nor open one), and the
    body is cut after escaping, so the closing fence is always there.
    """
    body = escape(defang(text.replace("`", "`\u200b"), indicators)).strip("\n")
    return f"{FENCE}\n{clip(body, size - 2 * (len(FENCE) + 1))}\n{FENCE}"


def section(text: str) -> Block:
    """One section of ``text`` (already mrkdwn), clipped to Slack's limit."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, SECTION_CHARS)}}


def section_blocks(text: str, *, heading: str = "") -> list[Block]:
    """``text`` (already mrkdwn) as section blocks; ``heading`` goes on the first one."""
    body = f"{heading}\n{text}" if heading else text
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": chunk}} for chunk in split_text(body)
    ]


def block_chars(value: Any) -> int:
    """Every character of text in ``value`` (a block, a list of them): each ``text`` string
    at any depth (sections, fields, context elements, headers, buttons' labels)."""
    if isinstance(value, list):
        return sum(block_chars(v) for v in value)
    if not isinstance(value, dict):
        return 0
    own = value.get("text")
    return (len(own) if isinstance(own, str) else 0) + sum(
        block_chars(v) for k, v in value.items() if not (k == "text" and isinstance(v, str))
    )


def pack_messages(blocks: Sequence[Block], tail: Sequence[Block] = ()) -> list[list[Block]]:
    """Group blocks into messages (≤ MAX_BLOCKS, ≤ MESSAGE_CHARS of text with the
    "continued" note ``continued_messages`` adds); ``tail`` ends the last."""
    room = MAX_BLOCKS - 1  # one block kept for the "continued" note
    budget = MESSAGE_CHARS - NOTE_CHARS
    messages: list[list[Block]] = [[]]
    chars = 0
    for block in blocks:
        size = block_chars(block)
        current = messages[-1]
        if current and (len(current) >= room or chars + size > budget):
            messages.append([])
            chars = 0
        messages[-1].append(block)
        chars += size
    if tail:
        full = len(messages[-1]) + len(tail) > room or chars + block_chars(list(tail)) > budget
        if messages[-1] and full:
            messages.append([])
        messages[-1].extend(tail)
    return [m for m in messages if m]


def continued_messages(messages: list[list[Block]], fallback: str) -> list[Message]:
    total = len(messages)
    out: list[Message] = []
    for n, blocks in enumerate(messages, start=1):
        if total > 1 and n == 1:
            blocks = [*blocks, context_block(f"part 1 of {total} · continued below")]
        elif total > 1:
            blocks = [context_block(f"continued · part {n} of {total}"), *blocks]
        text = fallback if n == 1 else f"{fallback} (part {n} of {total})"
        out.append({"text": text, "blocks": blocks})
    return out


def context_block(*texts: str) -> Block:
    """A context line of ``texts`` (already mrkdwn): at most ``CONTEXT_ELEMENTS`` of them,
    ``SECTION_CHARS`` in all (the later ones clipped, or left out once none is left)."""
    elements, room = [], SECTION_CHARS
    for text in [t for t in texts if t][:CONTEXT_ELEMENTS]:
        if room < 2:
            break
        shown = clip(text, room)
        elements.append({"type": "mrkdwn", "text": shown})
        room -= len(shown)
    return {"type": "context", "elements": elements}


def fit_message(blocks: Sequence[Block], tail: Sequence[Block] = ()) -> list[Block]:
    """``blocks`` then ``tail`` in one message: the blocks that fit ``MAX_BLOCKS`` and
    ``MESSAGE_CHARS`` (``tail`` always kept), and a note of how many were left out."""
    room = MESSAGE_CHARS - NOTE_CHARS - block_chars(list(tail))
    kept: list[Block] = []
    for block in blocks[: MAX_BLOCKS - 1 - len(tail)]:
        room -= block_chars(block)
        if room < 0:
            break
        kept.append(block)
    if len(kept) < len(blocks):
        kept.append(context_block(f"…{len(blocks) - len(kept)} more not shown (too long)"))
    return [*kept, *tail]


def header_block(text: str) -> Block:
    text = plain(" ".join(text.split()))
    if len(text) > HEADER_CHARS:
        text = text[: HEADER_CHARS - 1] + "…"
    return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}


def button(label: str, action_id: str, value: str, style: str | None = None) -> Block:
    """A button whose ``value`` (an id) comes back with the click; ``style``: primary, danger."""
    block: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(label, BUTTON_TEXT_CHARS), "emoji": True},
        "action_id": action_id,
        "value": value[:BUTTON_VALUE_CHARS],
    }
    if style:
        block["style"] = style
    return block


def fallback_text(text: str) -> str:
    """Notification text from already-safe mrkdwn: one line, clipped, no entity cut."""
    return clip(" ".join(text.split()), FALLBACK_CHARS)


def one_line(text: str, indicators: Iterable[str] = ()) -> str:
    return mrkdwn(" ".join(text.split()), indicators)


def notice_message(text: str) -> Message:
    return {"text": text, "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}


def pages_base(pages_url: str | None) -> str | None:
    """``web.base_url`` without its trailing slash, or None when it is not a plain
    http(s) URL (characters that would break a link's syntax)."""
    base = (pages_url or "").rstrip("/")
    if not base.startswith(("https://", "http://")) or any(c in base for c in "<>| "):
        return None
    return base

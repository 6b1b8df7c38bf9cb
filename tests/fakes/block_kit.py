"""What Slack refuses in a message, a view or a stream chunk, as the fake Slack API checks it.

Two checks, both from outside socbot. First ``slack_sdk``'s own models: each block goes
through ``Block.parse`` (an unknown type is refused) and ``to_dict()``, which runs every
``JsonValidator`` of the block and of each nested element and text object (``validate_json``
alone checks only the outer object); a view goes through ``View``. Then the limits those
models do not check, stated here from Slack's reference (api.slack.com/reference/block-kit:
blocks, block elements, composition objects, surfaces; chat.postMessage; chat.appendStream)
independently of socbot's own constants, so a wrong product constant is caught: 50 blocks
in a message and 100 in a view, ``block_id`` unique on its surface and ``action_id`` in its
block, both at most 255 characters, section text 3,000 and header 150, 25 elements in an
actions block and 10 in a context block, button text 75 and value 2,000, option text 75 and
value 150, 100 options in a select and 10 in checkboxes, an input's label 2,000, a
plain-text input's ``max_length`` at most 3,000; a modal's title (required), submit and
close 24 characters, ``callback_id`` 255 and ``private_metadata`` 3,000; a message's
top-level ``text`` present and at most 40,000; a stream call's ``markdown_text`` 12,000.

Slack also refuses a message whose blocks carry too much text in all (``msg_blocks_too_long``;
reported between about 11,300 and 13,200 characters): this fake refuses from
``BLOCK_TEXT_CHARS`` = 11,000, counting every ``text`` string in the blocks, to be
conservative.

``check_message(args)`` / ``check_view(view)`` / ``check_stream_chunk(text)`` answer
``None`` (Slack would take it) or the refusal Slack would send
(``{"ok": False, "error": ..., "errors": [...]}``).
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

SURFACE_BLOCKS = {"message": 50, "modal": 100, "home": 100}
BLOCK_TEXT_CHARS = 11_000
TEXT_CHARS = 40_000
STREAM_CHARS = 12_000
_SDK_ERRORS = (SlackObjectFormationError, TypeError, ValueError, KeyError, AttributeError)


def _text_len(obj: Any) -> int:
    return len(str(obj.get("text") or "")) if isinstance(obj, dict) else 0


def text_chars(value: Any) -> int:
    """Every character of every ``text`` string in ``value``, at any depth."""
    if isinstance(value, list):
        return sum(text_chars(v) for v in value)
    if not isinstance(value, dict):
        return 0
    own = value.get("text")
    return (len(own) if isinstance(own, str) else 0) + sum(
        text_chars(v) for k, v in value.items() if not (k == "text" and isinstance(v, str))
    )


def _element(element: Any, where: str) -> list[str]:
    if not isinstance(element, dict):
        return [f"{where}: not an object"]
    found: list[str] = []
    if len(str(element.get("action_id") or "")) > 255:
        found.append(f"{where}: action_id over 255")
    kind = element.get("type")
    if kind == "button":
        if _text_len(element.get("text")) > 75:
            found.append(f"{where}: button text over 75")
        if len(str(element.get("value") or "")) > 2000:
            found.append(f"{where}: button value over 2000")
    options = element.get("options")
    if isinstance(options, list):
        most = 10 if kind == "checkboxes" else 100
        if len(options) > most:
            found.append(f"{where}: over {most} options")
        chosen = list(element.get("initial_options") or [])
        if "initial_option" in element:
            chosen.append(element["initial_option"])
        for option in options + chosen:
            if not isinstance(option, dict):
                found.append(f"{where}: option not an object")
            elif _text_len(option.get("text")) > 75 or len(str(option.get("value") or "")) > 150:
                found.append(f"{where}: option over its limits")
    if kind == "plain_text_input" and int(element.get("max_length") or 0) > 3000:
        found.append(f"{where}: max_length over 3000")
    if _text_len(element.get("placeholder")) > 150:
        found.append(f"{where}: placeholder over 150")
    return found


def _block(block: dict[str, Any], where: str) -> list[str]:
    found: list[str] = []
    kind = block.get("type")
    if kind == "section" and _text_len(block.get("text")) > 3000:
        found.append(f"{where}: section text over 3000")
    if kind == "header" and _text_len(block.get("text")) > 150:
        found.append(f"{where}: header text over 150")
    elements = block.get("elements") or []
    if kind == "actions":
        if len(elements) > 25:
            found.append(f"{where}: over 25 elements")
        actions = [str(e.get("action_id")) for e in elements if isinstance(e, dict)]
        actions = [a for a in actions if a != "None"]
        if len(actions) != len(set(actions)):
            found.append(f"{where}: action_id repeated")
        for m, element in enumerate(elements):
            found += _element(element, f"{where}.elements[{m}]")
    if kind == "context" and len(elements) > 10:
        found.append(f"{where}: over 10 elements")
    if kind == "section" and isinstance(block.get("accessory"), dict):
        found += _element(block["accessory"], f"{where}.accessory")
    if kind == "input":
        if _text_len(block.get("label")) > 2000:
            found.append(f"{where}: label over 2000")
        found += _element(block.get("element"), f"{where}.element")
    return found


def _sdk(block: dict[str, Any], where: str) -> list[str]:
    """``slack_sdk``'s verdict on one block: parsed, then every validator run."""
    try:
        parsed = Block.parse(dict(block))
        if parsed is None:
            return [f"{where}: unknown block type {block.get('type')!r}"]
        parsed.to_dict()  # validates the block and everything nested in it
    except _SDK_ERRORS as error:
        return [f"{where}: slack_sdk: {error}"]
    return []


def problems(blocks: Any, surface: str = "message") -> list[str]:
    """What Slack would refuse in ``blocks`` on ``surface`` (empty: nothing)."""
    if not isinstance(blocks, list):
        return ["blocks: not a list"]
    found: list[str] = []
    if len(blocks) > SURFACE_BLOCKS[surface]:
        found.append(f"over {SURFACE_BLOCKS[surface]} blocks")
    ids: set[str] = set()
    for n, block in enumerate(blocks):
        where = f"blocks[{n}]"
        if not isinstance(block, dict):
            found.append(f"{where}: not an object")
            continue
        block_id = block.get("block_id")
        if block_id is not None:
            if len(str(block_id)) > 255:
                found.append(f"{where}: block_id over 255")
            if block_id in ids:
                found.append(f"{where}: block_id {block_id!r} repeated")
            ids.add(str(block_id))
        found += _block(block, where) + _sdk(block, where)
    return found


def view_problems(view: Any) -> list[str]:
    """What Slack would refuse in a modal or Home view."""
    if not isinstance(view, dict) or view.get("type") not in ("modal", "home"):
        return ["view: not a modal or home view"]
    found = problems(view.get("blocks"), str(view["type"]))
    if view["type"] == "modal" and not _text_len(view.get("title")):
        found.append("a modal needs a title")
    for key in ("title", "submit", "close"):
        if _text_len(view.get(key)) > 24:
            found.append(f"{key} over 24")
    if len(str(view.get("private_metadata") or "")) > 3000:
        found.append("private_metadata over 3000")
    if len(str(view.get("callback_id") or "")) > 255:
        found.append("callback_id over 255")
    try:
        View(**view).to_dict()
    except _SDK_ERRORS as error:
        found.append(f"view: slack_sdk: {error}")
    return found


def check_message(args: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's refusal of chat.postMessage / chat.update / chat.postEphemeral ``args``."""
    text, blocks = args.get("text"), args.get("blocks")
    if not isinstance(text, str) or not text.strip():
        return {"ok": False, "error": "no_text"}  # socbot always sends the fallback text
    if len(text) > TEXT_CHARS:
        return {"ok": False, "error": "msg_too_long"}
    if blocks is None:
        return None
    if found := problems(blocks):
        return {"ok": False, "error": "invalid_blocks", "errors": found}
    if (chars := text_chars(blocks)) > BLOCK_TEXT_CHARS:
        return {"ok": False, "error": "msg_blocks_too_long", "errors": [f"{chars} characters"]}
    return None


def check_view(view: Any) -> dict[str, Any] | None:
    """Slack's refusal of the ``view`` of views.open / update / push / publish."""
    if found := view_problems(view):
        return {"ok": False, "error": "invalid_arguments", "errors": found}
    return None


def check_stream_chunk(markdown_text: Any) -> dict[str, Any] | None:
    """Slack's refusal of one chat.startStream / appendStream / stopStream ``markdown_text``."""
    if markdown_text is not None and len(str(markdown_text)) > STREAM_CHARS:
        return {"ok": False, "error": "msg_too_long", "errors": ["markdown_text over 12000"]}
    return None

"""Slack's Block Kit limits, as the fake Slack API enforces them (``invalid_blocks``).

From Slack's reference (api.slack.com/reference/block-kit: blocks, block elements,
composition objects, surfaces/modals): 50 blocks in a message and 100 in a modal,
``block_id`` and ``action_id`` at most 255 characters and a ``block_id`` unique on its
surface, section text 3,000 and header text 150 characters, 25 elements in an actions
block and 10 in a context block, button text 75 and value 2,000 characters, option text
75 and value 150 characters, 100 options in a select and 10 in checkboxes, an input's
label 2,000 characters, a plain-text input's ``max_length`` at most 3,000; a modal's
title, submit and close 24 characters, ``callback_id`` 255 and ``private_metadata``
3,000 characters. Only the limits socbot's messages come near are checked.
"""

from __future__ import annotations

from typing import Any

SURFACE_BLOCKS = {"message": 50, "modal": 100}


def _text_len(obj: Any) -> int:
    return len(str(obj.get("text") or "")) if isinstance(obj, dict) else 0


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
        for option in options + (
            [element["initial_option"]] if "initial_option" in element else []
        ):
            if _text_len(option.get("text")) > 75 or len(str(option.get("value") or "")) > 150:
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
        for m, element in enumerate(elements):
            found += _element(element, f"{where}.elements[{m}]")
    if kind == "context" and len(elements) > 10:
        found.append(f"{where}: over 10 elements")
    if kind == "input":
        if _text_len(block.get("label")) > 2000:
            found.append(f"{where}: label over 2000")
        found += _element(block.get("element"), f"{where}.element")
    return found


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
        found += _block(block, where)
    return found


def view_problems(view: dict[str, Any]) -> list[str]:
    """What Slack would refuse in a modal view."""
    found = problems(view.get("blocks"), "modal")
    for key in ("title", "submit", "close"):
        if _text_len(view.get(key)) > 24:
            found.append(f"{key} over 24")
    if len(str(view.get("private_metadata") or "")) > 3000:
        found.append("private_metadata over 3000")
    if len(str(view.get("callback_id") or "")) > 255:
        found.append("callback_id over 255")
    return found

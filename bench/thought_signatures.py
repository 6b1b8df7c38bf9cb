"""Gemini 3's rule on thought signatures, as the fakes enforce it.

Google's "Thought signatures" page (https://ai.google.dev/gemini-api/docs/thought-signatures,
read 2026-11-25): Gemini 3 returns a ``thoughtSignature`` with every function-calling
turn (on the first ``functionCall`` part when the calls are parallel; on each step's
when sequential), and "when using Gemini 3 models, you must pass back thought
signatures during function calling, otherwise you will get a validation error (4xx
status code)". Only the current turn is validated: the model turns after the last user
turn that carries text (a function response does not start a turn). Signatures on text
parts are not required, but should be sent back too.

``signature_problem`` is that check (None: the request passes); the message is the
API's, as clients quote it.
"""

from __future__ import annotations

from typing import Any

from agent.model.thinking import is_gemini3

__all__ = ["current_turn", "is_gemini3", "signature_problem", "unsigned_model_turns"]


def current_turn(contents: list[Any]) -> int:
    """Index where the current turn starts: the last user content with a text part."""
    start = 0
    for index, content in enumerate(contents):
        parts = content.get("parts") or [] if isinstance(content, dict) else []
        if content.get("role") == "user" and any("text" in p for p in parts):
            start = index
    return start


def signature_problem(model: str, body: dict[str, Any], signature: str) -> str | None:
    """Why Gemini 3 refuses ``body`` (a function call of the current turn sent back
    without the signature ``signature`` it was given), or None."""
    if not is_gemini3(model):
        return None
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    for index in range(current_turn(contents), len(contents)):
        content = contents[index]
        calls = [p for p in content.get("parts") or [] if "functionCall" in p]
        if content.get("role") != "model" or not calls:
            continue
        sent = calls[0].get("thoughtSignature")
        name = calls[0]["functionCall"].get("name")
        if sent is None:
            return (
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead "
                f"to degraded model performance. Additional data, function call `{name}` , "
                f"position {index + 1}. Please refer to "
                "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
            )
        if sent != signature:
            return f"Corrupted thought signature (function call `{name}`, position {index + 1})."
    return None


def unsigned_model_turns(body: dict[str, Any], signature: str) -> int:
    """Model turns sent back whose last part lost the signature the fake gave it (text
    turns included: not refused by the API, but a dropped signature all the same)."""
    count = 0
    for content in body.get("contents") or []:
        if not isinstance(content, dict) or content.get("role") != "model":
            continue
        parts = content.get("parts") or []
        signed = [p for p in parts if "functionCall" in p] or parts[-1:]
        if signed and signed[0].get("thoughtSignature") != signature:
            count += 1
    return count

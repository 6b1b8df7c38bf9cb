"""Reading a Gemini reply: the model turn, refusals, and structured (JSON) output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from google.genai import types
from pydantic import BaseModel, ValidationError

from agent.errors import LLMRefused

T = TypeVar("T", bound=BaseModel)

# Finish reasons that mean "will not answer this": policy stops, not format problems.
REFUSAL_REASONS = frozenset(
    "SAFETY PROHIBITED_CONTENT BLOCKLIST SPII RECITATION LANGUAGE IMAGE_SAFETY "
    "IMAGE_PROHIBITED_CONTENT IMAGE_RECITATION MODEL_ARMOR".split()
)
_REPAIR_ERROR_CHARS = 1500


@dataclass
class ModelTurn:
    """One model reply. Append ``content`` to the contents as-is (thought signatures)."""

    content: types.Content
    function_calls: list[types.FunctionCall]
    text: str
    finish_reason: str | None


def turn_from_response(response: types.GenerateContentResponse) -> ModelTurn:
    """The first candidate as a ``ModelTurn`` (thought parts are not part of ``text``)."""
    candidate = response.candidates[0] if response.candidates else None
    content = candidate.content if candidate and candidate.content else None
    if content is None:
        content = types.Content(role="model", parts=[])
    elif content.role is None:
        content = content.model_copy(update={"role": "model"})
    parts = content.parts or []
    text = "".join(p.text for p in parts if p.text is not None and not p.thought)
    calls = [p.function_call for p in parts if p.function_call is not None]
    reason = candidate.finish_reason if candidate else None
    return ModelTurn(
        content=content,
        function_calls=calls,
        text=text,
        finish_reason=reason.value if reason is not None else None,
    )


def raise_if_refused(
    response: types.GenerateContentResponse, turn: ModelTurn, stage: str, *, who: str = "Gemini"
) -> None:
    """Raise ``LLMRefused`` when the model (``who``) blocked the request or stopped for
    policy reasons."""
    if not response.candidates:
        feedback = response.prompt_feedback
        reason = feedback.block_reason.value if feedback and feedback.block_reason else None
        if reason:
            raise LLMRefused(f"{who} blocked the request in stage {stage!r} ({reason}).")
        raise LLMRefused(f"{who} returned no answer in stage {stage!r}.")
    if turn.finish_reason in REFUSAL_REASONS:
        raise LLMRefused(
            f"{who} stopped answering in stage {stage!r} for policy reasons ({turn.finish_reason})."
        )


def parse_structured(schema: type[T], turn: ModelTurn) -> T:
    """Validate the turn's text against ``schema``; ValueError says what is wrong."""
    text = _strip_fence(turn.text)
    if not text:
        if turn.finish_reason == "MAX_TOKENS":
            raise ValueError("the reply was cut off by the output token limit before any JSON")
        raise ValueError("the reply was empty")
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        detail = exc.json(include_url=False, include_input=False)
        if turn.finish_reason == "MAX_TOKENS":
            detail = "the reply was cut off by the output token limit; keep it shorter. " + detail
        raise ValueError(detail[:_REPAIR_ERROR_CHARS]) from exc


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        if text.startswith("json"):
            text = text[4:]
    return text.strip()


def repair_request(problem: str) -> str:
    """The user turn asking the model to fix output that failed validation.

    ``problem`` is the validation error, already fenced as data by the caller.
    """
    return (
        "Your previous reply could not be used: it is not valid JSON for the required "
        f"schema.\nValidation error:\n{problem}\n"
        "Reply again with only the corrected JSON object, no prose and no code fence."
    )

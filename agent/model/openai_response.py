"""A Chat Completions answer read back as a ``types.GenerateContentResponse``.

What the gateway reads of it (``agent.model.replies``) then works unchanged: text parts,
``FunctionCall`` parts (with the call's id, the name socbot declared), reasoning text
as a thought part (never part of the answer: a server's ``reasoning_content`` or
``reasoning`` field, or a ``<think>…</think>`` block leading the content), a refusal
as finish reason ``SAFETY``, usage with OpenAI's reasoning tokens as thinking tokens.

Repaired, never a crash: tool-call arguments that are empty (``{}``) or wrapped in a
code fence. Arguments that still are no JSON object make the turn
``MALFORMED_FUNCTION_CALL``, which the gateway sends once more, then reports. An answer
with no choice but an ``error`` (some servers say so with HTTP 200) is ``ServerError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from google.genai import types

from agent.model.openai_schema import ToolNames

FINISH = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class ServerError(Exception):
    """The endpoint answered without a choice, saying why (an error body)."""


def read_response(completion: Any, names: ToolNames, model: str) -> types.GenerateContentResponse:
    """The Gemini-shaped response of one ``ChatCompletion`` (an SDK object or a dict)."""
    data = completion.model_dump(mode="json") if hasattr(completion, "model_dump") else completion
    if not isinstance(data, dict):
        raise ServerError(f"something that is not a JSON object ({str(data)[:80]!r}); a proxy?")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if error:
            raise ServerError(_error_text(error))
        return types.GenerateContentResponse(
            candidates=[],
            usage_metadata=_usage(data.get("usage")),
            model_version=_served(data, model),
        )
    choice = choices[0] if isinstance(choices[0], dict) else {}
    found = choice.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    parts, malformed = _parts(message, names)
    reason = FINISH.get(str(choice.get("finish_reason") or "stop"), "OTHER")
    if message.get("refusal"):
        reason = "SAFETY"
    if malformed:
        reason = "MALFORMED_FUNCTION_CALL"
    candidate = types.Candidate(
        content=types.Content(role="model", parts=parts),
        finish_reason=types.FinishReason(reason),
        index=0,
    )
    return types.GenerateContentResponse(
        candidates=[candidate],
        usage_metadata=_usage(data.get("usage")),
        model_version=_served(data, model),
        response_id=str(data.get("id") or "") or None,
    )


def _served(data: dict[str, Any], model: str) -> str:
    served = data.get("model")
    return f"openai:{served if isinstance(served, str) and served else model}"


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or json.dumps(error)[:200]
        code = error.get("code")
        return f"{message} ({code})" if code else str(message)
    return str(error)[:200]


def _parts(message: dict[str, Any], names: ToolNames) -> tuple[list[types.Part], bool]:
    parts: list[types.Part] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    think = _THINK.match(text)
    if think:
        reasoning = (reasoning or "") + think.group(1)
        text = text[think.end() :]
    if isinstance(reasoning, str) and reasoning.strip():
        parts.append(types.Part(text=reasoning, thought=True))
    if text:
        parts.append(types.Part(text=text))
    malformed = False
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            malformed = True
            continue
        args = parse_arguments(function.get("arguments"))
        if args is None:
            malformed = True
            continue
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=str(call.get("id") or "") or None,
                    name=names.original(str(function["name"])),
                    args=args,
                )
            )
        )
    return parts, malformed


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """A tool call's arguments as an object, or None when they are not one."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usage(usage: Any) -> types.GenerateContentResponseUsageMetadata:
    """OpenAI usage in Gemini's terms: ``completion_tokens`` includes the reasoning
    tokens (Gemini counts them apart); ``prompt_tokens`` includes the cached ones (as
    Gemini's does)."""
    if not isinstance(usage, dict):
        return types.GenerateContentResponseUsageMetadata()
    prompt = _int(usage.get("prompt_tokens"))
    completion = _int(usage.get("completion_tokens"))
    details = usage.get("completion_tokens_details") or {}
    reasoning = min(
        _int(details.get("reasoning_tokens")) if isinstance(details, dict) else 0, completion
    )
    cached_details = usage.get("prompt_tokens_details") or {}
    cached = _int(cached_details.get("cached_tokens")) if isinstance(cached_details, dict) else 0
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=completion - reasoning,
        thoughts_token_count=reasoning or None,
        cached_content_token_count=min(cached, prompt) or None,
        total_token_count=prompt + completion,
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0

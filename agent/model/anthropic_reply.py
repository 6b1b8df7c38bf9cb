"""An Anthropic ``Message`` as a ``types.GenerateContentResponse`` (pure: no I/O).

Blocks: ``text`` → text parts; ``tool_use`` → function calls (id kept, name mapped back);
``thinking`` → a thought part whose ``thought_signature`` is the block's signature, and
``redacted_thinking`` → a thought part carrying its data in ``part_metadata``, so both go
back unedited when the engine appends the turn to its contents.

Stop reasons: ``end_turn``, ``stop_sequence``, ``tool_use`` → ``STOP`` (what Gemini says
after calls); ``max_tokens`` and ``model_context_window_exceeded`` → ``MAX_TOKENS``;
``refusal`` → ``SAFETY`` (the gateway raises ``LLMRefused``); anything else → ``OTHER``.

Usage: the API's ``input_tokens`` excludes cache reads and writes, so the prompt is
``input + cache_read + cache_creation`` and ``cached_content_token_count`` is the cache
reads (billed at the cached price). ``model_version`` is ``anthropic:<served model>``, the
key of its price in the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.genai import types

from agent.model.anthropic_request import REDACTED

PROVIDER = "anthropic"
STOP_REASONS = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "model_context_window_exceeded": "MAX_TOKENS",
    "refusal": "SAFETY",
}


def to_response(message: Any, names: Mapping[str, str]) -> types.GenerateContentResponse:
    """``message`` (an ``anthropic.types.Message``) as google-genai's response type."""
    parts: list[types.Part] = []
    for block in message.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(types.Part(text=block.text))
        elif kind == "tool_use":
            args = block.input if isinstance(block.input, dict) else {"input": block.input}
            name = names.get(block.name, block.name)
            parts.append(
                types.Part(function_call=types.FunctionCall(id=block.id, name=name, args=args))
            )
        elif kind == "thinking":
            signature = block.signature.encode()
            parts.append(types.Part(text=block.thinking, thought=True, thought_signature=signature))
        elif kind == "redacted_thinking":
            parts.append(types.Part(thought=True, part_metadata={REDACTED: block.data}))
    reason = STOP_REASONS.get(message.stop_reason or "", "OTHER")
    candidate = types.Candidate(
        content=types.Content(role="model", parts=parts),
        finish_reason=types.FinishReason(reason),
        index=0,
    )
    return types.GenerateContentResponse(
        candidates=[candidate],
        usage_metadata=usage_metadata(message.usage),
        model_version=f"{PROVIDER}:{message.model}",
        response_id=message.id,
    )


def usage_metadata(usage: Any) -> types.GenerateContentResponseUsageMetadata:
    """Anthropic's usage in Gemini's terms (cache reads counted in the prompt, as cached)."""
    read = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    prompt = usage.input_tokens + read + written
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        cached_content_token_count=read or None,
        candidates_token_count=usage.output_tokens,
        total_token_count=prompt + usage.output_tokens,
    )

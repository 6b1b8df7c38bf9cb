"""A google-genai request (contents and ``GenerateContentConfig``) as the keyword
arguments of one ``chat.completions.create`` call.

Pure and synchronous: the backend (``agent.model.openai_backend``) sends what this
builds, ``agent.model.openai_response`` reads the answer back. Gemini pairs a call with
its result by name; OpenAI by id: a ``FunctionCall`` without an id (a Gemini turn kept
in history) gets one from its position, and a ``FunctionResponse`` without one takes the
oldest unanswered call of its name. A call left unanswered (OpenAI refuses that
request) is answered with a note that it was not run. Thought parts never leave.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from agent.model.openai_schema import ToolNames, strict_schema, tool_parameters
from config.openai_settings import OpenAISettings

# Gemini thinking levels as reasoning_effort (a budget of 0: the least effort).
_EFFORT = {"MINIMAL": "minimal", "LOW": "low", "MEDIUM": "medium", "HIGH": "high", "XHIGH": "high"}
UNANSWERED = {"error": "not run: the conversation moved on before this call was answered"}
# One encoder for every argument and result (json.dumps with options builds one per call).
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


@dataclass
class ChatRequest:
    """What to send, and what is needed to read the answer back."""

    kwargs: dict[str, Any]
    names: ToolNames = field(default_factory=ToolNames)


def is_reasoning(model: str, settings: OpenAISettings) -> bool:
    """Whether ``model`` takes ``reasoning_effort`` (and refuses a temperature)."""
    name = model.rsplit("/", 1)[-1]
    return any(name.startswith(prefix) for prefix in settings.reasoning_models)


def build_request(
    model: str,
    contents: list[types.Content],
    config: types.GenerateContentConfig,
    settings: OpenAISettings,
    *,
    official: bool,
) -> ChatRequest:
    """The ``chat.completions.create`` arguments for one Gemini-shaped call.

    ``official``: the OpenAI API or Azure (``max_completion_tokens``), else a compatible
    server (``max_tokens``, which every one of them knows).
    """
    names = ToolNames()
    system = _system_text(config)
    schema = (
        config.response_json_schema if config.response_mime_type == "application/json" else None
    )
    kwargs: dict[str, Any] = {"model": model}
    if schema is not None:
        system, kwargs["response_format"] = _structured(system, schema, settings)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.extend(_messages(contents, names))
    kwargs["messages"] = messages
    _tools(kwargs, config, names, settings)
    reasoning = is_reasoning(model, settings)
    effort = _effort(config.thinking_config, model) if reasoning else None
    if effort is not None:
        kwargs["reasoning_effort"] = effort
    if not reasoning and config.temperature is not None:
        kwargs["temperature"] = config.temperature
    limit = config.max_output_tokens or settings.max_output_tokens
    if limit is not None:
        kwargs["max_completion_tokens" if official else "max_tokens"] = limit
    return ChatRequest(kwargs, names)


def _system_text(config: types.GenerateContentConfig) -> str:
    system = config.system_instruction
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    if isinstance(system, types.Content):
        return "".join(p.text or "" for p in system.parts or [])
    raise TypeError(f"unsupported system instruction {type(system).__name__}")


def _structured(
    system: str, schema: Any, settings: OpenAISettings
) -> tuple[str, dict[str, Any] | None]:
    """The system text and ``response_format`` asking for JSON matching ``schema``."""
    schema = dict(schema)
    if settings.structured_output == "json_schema":
        name = str(schema.get("title") or "answer")[:64]
        if settings.strict_schemas:
            body = {"name": name, "schema": strict_schema(schema), "strict": True}
        else:
            body = {"name": name, "schema": schema}
        return system, {"type": "json_schema", "json_schema": body}
    described = (
        f"{system}\n\nAnswer with one JSON object, no prose and no code fence, valid "
        f"against this JSON Schema:\n{json.dumps(schema, separators=(',', ':'))}"
    )
    if settings.structured_output == "json_object":
        return described, {"type": "json_object"}
    return described, None


def _messages(contents: list[types.Content], names: ToolNames) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending: dict[str, list[str]] = {}  # name → ids of calls not yet answered, oldest first
    unanswered: dict[str, int] = {}  # id → index of the assistant message that made it
    serial = 0
    for content in contents:
        parts = content.parts or []
        if content.role == "model":
            text = "".join(p.text for p in parts if p.text and not p.thought)
            calls = []
            for part in parts:
                call = part.function_call
                if call is None:
                    continue
                serial += 1
                call_id = call.id or f"call_{serial}"
                pending.setdefault(call.name or "", []).append(call_id)
                unanswered[call_id] = len(out)
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": names.wire(call.name or ""),
                            "arguments": _encode(call.args or {}),
                        },
                    }
                )
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            if text or calls:
                out.append(message)
            continue
        texts = []
        for part in parts:
            reply = part.function_response
            if reply is not None:
                queue = pending.get(reply.name or "", [])
                answers = reply.id if reply.id in unanswered else (queue[0] if queue else None)
                body = _encode(reply.response or {})
                if answers is None:  # no call of it is open: OpenAI refuses a lone tool message
                    texts.append(f"Result of {reply.name}: {body}\n")
                    continue
                for waiting in pending.values():
                    if answers in waiting:
                        waiting.remove(answers)
                unanswered.pop(answers, None)
                out.append({"role": "tool", "tool_call_id": answers, "content": body})
            elif part.text and not part.thought:
                texts.append(part.text)
        if texts:
            out.append({"role": "user", "content": "".join(texts)})
    _answer_the_unanswered(out, unanswered)
    return out


def _answer_the_unanswered(out: list[dict[str, Any]], unanswered: dict[str, int]) -> None:
    """Insert a 'not run' tool message right after the turn of each unanswered call."""
    for call_id, index in sorted(unanswered.items(), key=lambda kv: -kv[1]):
        at = index + 1
        while at < len(out) and out[at]["role"] == "tool":
            at += 1
        out.insert(at, {"role": "tool", "tool_call_id": call_id, "content": json.dumps(UNANSWERED)})


def _tools(
    kwargs: dict[str, Any],
    config: types.GenerateContentConfig,
    names: ToolNames,
    settings: OpenAISettings,
) -> None:
    decls = [
        d
        for t in config.tools or []
        if isinstance(t, types.Tool)
        for d in t.function_declarations or []
    ]
    if not decls:
        return
    fcc = config.tool_config.function_calling_config if config.tool_config else None
    mode = fcc.mode.value if fcc and fcc.mode else "AUTO"
    if mode == "NONE" and not settings.tool_choice_required:
        return  # a server that takes only "auto" cannot be told not to call: offer nothing
    allowed = set(fcc.allowed_function_names or []) if fcc and mode == "ANY" else set()
    kwargs["tools"] = [
        {
            "type": "function",
            "function": {
                "name": names.wire(d.name or ""),
                "description": d.description or "",
                "parameters": tool_parameters(d),
            },
        }
        for d in decls
        if not allowed or d.name in allowed
    ]
    if settings.tool_choice_required and mode in ("ANY", "NONE"):
        kwargs["tool_choice"] = "required" if mode == "ANY" else "none"
    if settings.parallel_tool_calls and mode != "NONE":
        kwargs["parallel_tool_calls"] = True


def _effort(thinking: types.ThinkingConfig | None, model: str) -> str | None:
    """``reasoning_effort`` for Gemini's thinking config (None: the model's default)."""
    if thinking is None:
        return None
    if thinking.thinking_level is not None:
        effort = _EFFORT.get(thinking.thinking_level.value)
    elif thinking.thinking_budget is not None and thinking.thinking_budget <= 128:
        effort = "minimal"
    else:
        return None
    if effort == "minimal" and not model.rsplit("/", 1)[-1].startswith("gpt-5"):
        return "low"  # only the gpt-5 family knows "minimal"
    return effort

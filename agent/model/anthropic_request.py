"""A google-genai request as the keyword arguments of Anthropic's ``messages.create``.

Pure: no I/O, no SDK import. What the Messages API insists on, and how it is met:

- Roles alternate (``user``/``assistant``): consecutive turns of one role are merged;
  ``tool_result`` blocks come first in the user message after the ``tool_use`` turn, and
  every ``tool_use`` is answered (a call the engine left unanswered gets an error result).
- Calls and results pair by id: ``FunctionCall.id`` / ``FunctionResponse.id`` are kept;
  a call without one gets a stable id from its position (so a prefix stays byte-identical
  and cacheable), and a result without one takes the first unanswered call of its name.
- Tool names match ``^[a-zA-Z0-9_-]{1,64}$``: other names are mapped (``names``) and
  mapped back on the answer.
- Schemas go through ``agent.model.anthropic_schema`` (the gate).
- Extended thinking (``thinking_budgets`` per stage, models in ``thinking_models``) is off
  when a tool is forced (the API refuses ``any``/``tool`` choice while thinking) and
  inside a tool loop whose last call turn carries no signed thinking block; signed blocks
  come back unedited (``Part.thought_signature``), redacted ones from ``part_metadata``.
- No sampling parameters: the Messages API this SDK speaks has no ``temperature``, so
  ``gemini.temperature`` does not apply to Claude.
- ``cache_control`` and user text cut into blocks: ``agent.model.anthropic_cache``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from agent.model.anthropic_cache import TASK, mark_cache, text_blocks
from agent.model.anthropic_schema import anthropic_schema
from config.anthropic_settings import AnthropicSettings

MIN_THINKING = 1024
REDACTED = "anthropic_redacted_thinking"  # part_metadata key of a redacted thinking block
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
Block = dict[str, Any]


@dataclass
class Request:
    """``params`` for ``messages.create``; ``names`` maps sent tool names to the engine's."""

    params: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)


def build_request(
    model: str,
    contents: list[types.Content],
    config: types.GenerateContentConfig,
    settings: AnthropicSettings,
) -> Request:
    """The request for ``model`` (``SchemaRefused`` when a schema cannot be sent)."""
    names: dict[str, str] = {}
    system = _text(config.system_instruction)
    params: dict[str, Any] = {"model": model, "max_tokens": settings.max_tokens}
    tools = _tools(config, names)
    choice = _tool_choice(config, names, tools)
    schema = config.response_json_schema or _schema_of(config.response_schema)
    if schema is not None:
        strict = anthropic_schema(schema, strict=True)
        if settings.structured_outputs == "native":
            params["output_config"] = {"format": {"type": "json_schema", "schema": strict}}
        else:
            system += (
                "\n\nReply with only a JSON object matching this JSON Schema, no prose and "
                f"no code fence:\n{json.dumps(strict, separators=(',', ':'))}"
            )
    messages = _messages(contents, {v: k for k, v in names.items()})
    budget = _budget(model, system, contents, config, settings)
    if budget and (choice.get("type") in ("any", "tool") or not _signed_loop(messages)):
        budget = 0
    if budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = settings.max_tokens + budget
    if system:
        params["system"] = [{"type": "text", "text": system}]
    if tools:
        params["tools"] = tools
        params["tool_choice"] = choice
    if settings.prompt_cache:
        mark_cache(params, messages)
    params["messages"] = messages
    return Request(params, names)


def stage_of(system: str, contents: list[types.Content]) -> str:
    """The stage a request is for, its first word (``step s1`` → ``step``): as
    ``agent.prompts.stage_named`` reads it (the model wing may not import the engine)."""
    first = system.lstrip().split("\n", 1)[0].strip()
    if first.startswith(TASK):
        return first[len(TASK) :].split(" ", 1)[0]
    for content in reversed(contents):  # the last task turn (tool results carry no text)
        for line in reversed(_text(content).splitlines() if content.role != "model" else []):
            if line.startswith(TASK):
                return line[len(TASK) :].strip().split(" ", 1)[0]
    return ""


def _budget(
    model: str,
    system: str,
    contents: list[types.Content],
    config: types.GenerateContentConfig,
    settings: AnthropicSettings,
) -> int:
    if not any(name in model for name in settings.thinking_models):
        return 0
    asked = config.thinking_config.thinking_budget if config.thinking_config else None
    if asked is not None:  # 0: the stage asked for no thinking (the gateway's least)
        return max(MIN_THINKING, asked) if asked > 0 else 0
    budget = settings.thinking_budgets.get(stage_of(system, contents), 0)
    return max(MIN_THINKING, budget) if budget > 0 else 0


def _signed_loop(messages: list[dict[str, Any]]) -> bool:
    """Thinking may be on: no tool loop is open, or its last call turn starts signed."""
    if len(messages) < 2 or not any(b["type"] == "tool_result" for b in messages[-1]["content"]):
        return True
    first = messages[-2]["content"][0]["type"]
    return first in ("thinking", "redacted_thinking")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, types.Part):
        return value.text or ""
    if isinstance(value, types.Content):
        return "".join(p.text or "" for p in value.parts or [] if not p.thought)
    if isinstance(value, list):
        return "".join(_text(v) for v in value)
    raise TypeError(f"unsupported system instruction {type(value).__name__}")


def _schema_of(schema: Any) -> dict[str, Any] | None:
    if schema is None:
        return None
    if isinstance(schema, types.Schema):
        value: dict[str, Any] = schema.json_schema.model_dump(mode="json", exclude_none=True)
        return value
    if isinstance(schema, dict):
        return schema
    raise TypeError(f"unsupported response schema {type(schema).__name__}")


def _tool_name(name: str, names: dict[str, str]) -> str:
    if _NAME.match(name):
        return name
    sent = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:56] + f"_{len(names):03d}"
    names[sent] = name
    return sent


def _tools(config: types.GenerateContentConfig, names: dict[str, str]) -> list[Block]:
    tools: list[Block] = []
    for tool in config.tools or []:
        if not isinstance(tool, types.Tool):
            raise TypeError(f"unsupported tool {type(tool).__name__}")
        for decl in tool.function_declarations or []:
            schema = decl.parameters_json_schema or _schema_of(decl.parameters)
            schema = schema or {"type": "object", "properties": {}}
            tools.append(
                {
                    "name": _tool_name(decl.name or "", names),
                    "description": decl.description or "",
                    "input_schema": anthropic_schema(schema, strict=False),
                }
            )
    return tools


def _tool_choice(
    config: types.GenerateContentConfig, names: dict[str, str], tools: list[Block]
) -> Block:
    calling = config.tool_config.function_calling_config if config.tool_config else None
    mode = calling.mode.value if calling and calling.mode else "AUTO"
    if mode == "NONE":
        return {"type": "none"}
    if mode != "ANY":
        return {"type": "auto"}
    sent = {v: k for k, v in names.items()}
    allowed = [sent.get(n, n) for n in (calling.allowed_function_names or [])] if calling else []
    if allowed:
        tools[:] = [t for t in tools if t["name"] in allowed]
    if len(allowed) == 1 and tools:
        return {"type": "tool", "name": tools[0]["name"]}
    return {"type": "any"}


def _messages(contents: list[types.Content], sent: dict[str, str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (id, name) of the calls still unanswered
    for index, content in enumerate(contents):
        if content.role == "model":
            _append(messages, "user", _answer(pending))  # calls the engine left unanswered
            blocks = _assistant_blocks(content, index, sent)
            pending = [(b["id"], b["name"]) for b in blocks if b["type"] == "tool_use"]
            _append(messages, "assistant", blocks)
        else:
            _append(messages, "user", _user_blocks(content, pending))
    if pending:
        _append(messages, "user", _answer(pending))
    return messages


def _user_blocks(content: types.Content, pending: list[tuple[str, str]]) -> list[Block]:
    results: list[Block] = []
    texts: list[Block] = []
    for part in content.parts or []:
        reply = part.function_response
        if reply is not None:
            match = next((c for c in pending if c[0] == reply.id), None)
            match = match or next(
                (c for c in pending if reply.id is None and c[1] == reply.name), None
            )
            body = json.dumps(reply.response or {}, default=str, ensure_ascii=False)
            if match is None:  # a result of no call of the turn before: plain text
                texts.append({"type": "text", "text": f"Result of {reply.name}: {body}"})
                continue
            pending.remove(match)
            error = set(reply.response or {}) == {"error"}
            results.append({"type": "tool_result", "tool_use_id": match[0], "content": body})
            if error:
                results[-1]["is_error"] = True
        elif part.text and not part.thought:
            texts.extend(text_blocks(part.text))
    return results + texts


def _answer(pending: list[tuple[str, str]]) -> list[Block]:
    text = "No result: the call was not run."
    return [
        {"type": "tool_result", "tool_use_id": i, "content": text, "is_error": True}
        for i, _ in pending
    ]


def _assistant_blocks(content: types.Content, index: int, sent: dict[str, str]) -> list[Block]:
    blocks: list[Block] = []
    for k, part in enumerate(content.parts or []):
        call = part.function_call
        if call is not None:
            name = sent.get(call.name or "", call.name or "")
            ident = call.id or f"call_{index}_{k}"
            blocks.append({"type": "tool_use", "id": ident, "name": name, "input": call.args or {}})
        elif part.thought:
            redacted = (part.part_metadata or {}).get(REDACTED)
            if isinstance(redacted, str):
                blocks.append({"type": "redacted_thinking", "data": redacted})
            elif part.thought_signature:
                signature = part.thought_signature.decode()
                blocks.append(
                    {"type": "thinking", "thinking": part.text or "", "signature": signature}
                )
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    return blocks


def _append(messages: list[dict[str, Any]], role: str, blocks: list[Block]) -> None:
    if not blocks:
        return
    if messages and messages[-1]["role"] == role:
        merged = messages[-1]["content"] + blocks
        if role == "user":  # tool results first, as the API requires
            merged.sort(key=lambda b: b["type"] != "tool_result")
        messages[-1]["content"] = merged
    else:
        messages.append({"role": role, "content": list(blocks)})

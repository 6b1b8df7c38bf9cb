"""What the Anthropic Messages API refuses with ``400 invalid_request_error``: the checks
``tests.fakes.anthropic_api`` runs on every request body before answering.

Written from the API's documented rules (Messages, tool use, extended thinking, prompt
caching, structured outputs), independently of socbot's translation, which it judges:
``problem(body)`` is the API's refusal message, or ``None`` when it would accept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MAX_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Keywords structured outputs accept (anything else, e.g. minimum or pattern, is refused).
SCHEMA_KEYS = frozenset(
    "type description enum const properties required items anyOf allOf $ref $defs format "
    "minItems additionalProperties title default".split()
)
FORMATS = frozenset("date-time time date duration email hostname uri ipv4 ipv6 uuid".split())


def problem(body: dict[str, Any], signed: Callable[[str, str], bool]) -> str | None:
    """Why the API would refuse ``body``; ``signed(thinking, signature)`` checks a block."""
    for check in (_basics, _roles, _tools, _pairs, _breakpoints, _output_format):
        found = check(body)
        if found:
            return found
    return _thinking(body, signed)


def _basics(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    tokens = body.get("max_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        return "max_tokens: Field required"
    if not body.get("messages"):
        return "messages: at least one message is required"
    return None


def _roles(body: dict[str, Any]) -> str | None:
    messages = body["messages"]
    if messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i and message["role"] == messages[i - 1]["role"]:
            return 'messages: roles must alternate between "user" and "assistant"'
        content = message.get("content")
        if not content:
            return f"messages.{i}: all messages must have non-empty content"
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "text" and not block.get("text"):
                    return f"messages.{i}: text content blocks must be non-empty"
                if block.get("type") == "text" and not str(block["text"]).strip():
                    return f"messages.{i}: text content blocks must contain non-whitespace text"
    return None


def _tools(body: dict[str, Any]) -> str | None:
    names = set()
    for i, tool in enumerate(body.get("tools") or []):
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
        names.add(tool["name"])
    choice = body.get("tool_choice")
    if choice is not None and not body.get("tools") and choice.get("type") != "none":
        return "tool_choice may only be specified while providing tools"
    if choice and choice.get("type") == "tool" and choice.get("name") not in names:
        return f"tool_choice: tool {choice.get('name')!r} not found in tools"
    return None


def _pairs(body: dict[str, Any]) -> str | None:
    messages = body["messages"]
    for i, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if results:
            before = messages[i - 1]["content"] if i else []
            called = {b.get("id") for b in before if isinstance(b, dict)}
            stray = [r for r in results if r not in called]
            if stray:
                return (
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {stray[0]}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            kinds = [b.get("type") for b in blocks]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                return f"messages.{i}.content: tool_result blocks must come first"
        if uses:
            after = messages[i + 1]["content"] if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in after if isinstance(b, dict)}
            missing = [u for u in uses if u not in answered]
            if missing:
                return (
                    f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {missing[0]}"
                )
    return None


def blocks_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block of the prompt in cache order: tools, system, then messages."""
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out = list(body.get("tools") or []) + list(system)
    for message in body["messages"]:
        content = message["content"]
        out.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    return out


def _breakpoints(body: dict[str, Any]) -> str | None:
    marked = [b for b in blocks_of(body) if b.get("cache_control")]
    if len(marked) > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marked)}."
        )
    if any(b.get("type") in ("thinking", "redacted_thinking") for b in marked):
        return "cache_control cannot be set on thinking blocks"
    return None


def _output_format(body: dict[str, Any]) -> str | None:
    fmt = (body.get("output_config") or {}).get("format")
    if fmt is None:
        return None
    if fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        return "output_config.format: expected a json_schema format with a schema"
    return _schema_problem(fmt["schema"], "output_config.format.schema")


def _schema_problem(node: Any, at: str) -> str | None:
    if not isinstance(node, dict):
        return f"{at}: a schema must be an object"
    for key in node:
        if key not in SCHEMA_KEYS:
            return f"{at}: keyword {key!r} is not supported in structured outputs"
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return f"{at}: For 'object' type, 'additionalProperties' must be explicitly set to false"
    if "format" in node and node["format"] not in FORMATS:
        return f"{at}: format {node['format']!r} is not supported"
    if node.get("minItems") not in (None, 0, 1):
        return f"{at}: minItems values other than 0 or 1 are not supported"
    ref = node.get("$ref")
    if ref is not None and not str(ref).startswith("#/$defs/"):
        return f"{at}: only local $ref to $defs is supported"
    children: list[tuple[str, Any]] = [
        (f"{at}.properties.{k}", v) for k, v in (node.get("properties") or {}).items()
    ]
    children += [(f"{at}.$defs.{k}", v) for k, v in (node.get("$defs") or {}).items()]
    if "items" in node:
        children.append((f"{at}.items", node["items"]))
    for key in ("anyOf", "allOf"):
        children += [(f"{at}.{key}.{i}", v) for i, v in enumerate(node.get(key) or [])]
    for where, child in children:
        found = _schema_problem(child, where)
        if found:
            return found
    return None


def _thinking(body: dict[str, Any], signed: Callable[[str, str], bool]) -> str | None:
    for i, message in enumerate(body["messages"]):
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "thinking" and not signed(
                block.get("thinking", ""), block.get("signature", "")
            ):
                return f"messages.{i}: Invalid `signature` in `thinking` block"
    thinking = body.get("thinking")
    if not thinking or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens", 0)
    if budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if budget >= body["max_tokens"]:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    messages = body["messages"]
    last = messages[-1]["content"]
    if len(messages) > 1 and any(b.get("type") == "tool_result" for b in last):
        first = messages[-2]["content"][0].get("type")
        if first not in ("thinking", "redacted_thinking"):
            return (
                "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                f"found `{first}`. When `thinking` is enabled, a final `assistant` message "
                "must start with a thinking block."
            )
    return None

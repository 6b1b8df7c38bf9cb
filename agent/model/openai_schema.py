"""JSON Schemas and tool names as an OpenAI-compatible endpoint takes them.

Structured outputs in ``strict`` mode need every object closed
(``additionalProperties: false``) and every property required: the official SDK's
own transform (``openai.lib._pydantic``) does that, optional fields becoming
required-but-nullable (pydantic reads ``null`` back as the field's ``None``). The
``default`` keyword, which strict mode refuses, is dropped (every field is required).
A server without strict mode gets the schema as pydantic wrote it.

Tool names must match ``^[a-zA-Z0-9_-]{1,64}$``: an MCP tool named with dots or
colons is sent under a mapped name and read back through ``ToolNames``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from google.genai import types
from openai.lib._pydantic import _ensure_strict_json_schema

_NAME_OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_-]")


_strict: dict[str, dict[str, Any]] = {}


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` as OpenAI's strict mode accepts it; made once per schema per process
    (the result is shared: read it, never change it)."""
    key = json.dumps(schema, sort_keys=True)
    strict = _strict.get(key)
    if strict is None:
        root = copy.deepcopy(schema)
        strict = _ensure_strict_json_schema(root, path=(), root=root)
        _drop_defaults(strict)
        _strict[key] = strict
    return strict


def _drop_defaults(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("default", None)
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for sub in value.values():
                    _drop_defaults(sub)
            elif key != "enum":
                _drop_defaults(value)
    elif isinstance(node, list):
        for item in node:
            _drop_defaults(item)


def tool_parameters(decl: types.FunctionDeclaration) -> dict[str, Any]:
    """A declaration's parameters as JSON Schema (from either way Gemini takes them)."""
    if decl.parameters_json_schema is not None:
        value = decl.parameters_json_schema
        return dict(value) if isinstance(value, dict) else {"type": "object"}
    if decl.parameters is not None:
        dumped: dict[str, Any] = decl.parameters.json_schema.model_dump(
            mode="json", exclude_none=True, by_alias=True
        )
        return dumped
    return {"type": "object", "properties": {}}


class ToolNames:
    """The reversible mapping between socbot's tool names and the wire's."""

    def __init__(self) -> None:
        self.to_wire: dict[str, str] = {}
        self.from_wire: dict[str, str] = {}

    def wire(self, name: str) -> str:
        """The name sent for ``name`` (itself when the endpoint accepts it)."""
        known = self.to_wire.get(name)
        if known is not None:
            return known
        candidate = name if _NAME_OK.match(name) else _NAME_BAD.sub("_", name)[:64] or "tool"
        base, n = candidate, 1
        while candidate in self.from_wire:
            n += 1
            suffix = f"_{n}"
            candidate = base[: 64 - len(suffix)] + suffix
        self.to_wire[name] = candidate
        self.from_wire[candidate] = name
        return candidate

    def original(self, wire: str) -> str:
        """socbot's name for a name the model called (unknown names are kept: the
        registry refuses them)."""
        return self.from_wire.get(wire, wire)

"""An MCP tool's input JSON Schema, converted to the subset Gemini's declarations accept.

Kept: ``type`` (one name, or a list with ``"null"``), ``description``, ``enum`` of
strings or numbers (``const`` becomes a one-value ``enum``), ``format``, ``properties``,
``required``, ``items``, ``anyOf`` (``oneOf`` is read as ``anyOf``), ``minimum``,
``maximum``, ``minItems``, ``maxItems``, ``minLength``, ``maxLength``. Local ``$ref``
(``#/$defs/...``, ``#/definitions/...``) is inlined and a one-part ``allOf`` merged.
Constraints Gemini has no words for (``pattern``, ``not``, ``additionalProperties``...)
are dropped: the server validates its own arguments. A schema that cannot be
expressed — recursive or remote ``$ref``, a multi-part ``allOf``, tuple ``items``, an
unknown type, a root that is not an object, or more than ``MAX_SCHEMA_CHARS`` once
converted — raises ``SchemaUnsupported`` and the tool is left out.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 12
MAX_SCHEMA_CHARS = 16_000
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_SCALARS = (
    "description",
    "format",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
)


class SchemaUnsupported(ValueError):
    """The schema has a construct Gemini's declarations cannot express."""


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The converted schema of a tool's parameters (an object), or ``SchemaUnsupported``."""
    converted = _Converter(schema).node(schema, depth=0, refs=())
    if converted.get("type") != "object":
        raise SchemaUnsupported("the parameters are not an object")
    converted.setdefault("properties", {})
    if len(json.dumps(converted)) > MAX_SCHEMA_CHARS:
        raise SchemaUnsupported(f"the schema is larger than {MAX_SCHEMA_CHARS} characters")
    return converted


class _Converter:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def node(self, value: Any, *, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            raise SchemaUnsupported(f"nested deeper than {MAX_DEPTH} levels")
        if value is True or value == {}:
            return {}
        if not isinstance(value, dict):
            raise SchemaUnsupported(f"a schema node is {type(value).__name__}, not an object")
        if "$ref" in value:
            value, ref = self._resolved(value, refs)
            refs = (*refs, ref)
        value = _merged_all_of(value)
        out: dict[str, Any] = {k: value[k] for k in _SCALARS if k in value}
        if "type" in value:
            out["type"] = _type(value["type"])
        enum = _enum(value)
        if enum is not None:
            out["enum"] = enum
        if "properties" in value:
            out["properties"] = {
                str(k): self.node(v, depth=depth + 1, refs=refs)
                for k, v in dict(value["properties"]).items()
            }
            out.setdefault("type", "object")
        if "required" in value:
            out["required"] = [str(r) for r in value["required"]]
        if "items" in value:
            if isinstance(value["items"], list):
                raise SchemaUnsupported("tuple items (a list of schemas) are not supported")
            out["items"] = self.node(value["items"], depth=depth + 1, refs=refs)
        if "prefixItems" in value:
            raise SchemaUnsupported("prefixItems (tuples) are not supported")
        choices = value.get("anyOf", value.get("oneOf"))
        if choices is not None:
            out["anyOf"] = [self.node(c, depth=depth + 1, refs=refs) for c in choices]
        return out

    def _resolved(self, value: dict[str, Any], refs: tuple[str, ...]) -> tuple[dict[str, Any], str]:
        ref = value["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise SchemaUnsupported(f"a $ref that is not local ({ref!r})")
        if ref in refs:
            raise SchemaUnsupported(f"a recursive $ref ({ref})")
        target: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                raise SchemaUnsupported(f"a $ref to nothing ({ref})")
            target = target[part]
        if not isinstance(target, dict):
            raise SchemaUnsupported(f"a $ref to a non-schema ({ref})")
        return {**target, **{k: v for k, v in value.items() if k != "$ref"}}, ref


def _merged_all_of(value: dict[str, Any]) -> dict[str, Any]:
    parts = value.get("allOf")
    if parts is None:
        return value
    if len(parts) != 1 or not isinstance(parts[0], dict) or "$ref" in parts[0]:
        raise SchemaUnsupported("allOf with more than one part (or a $ref) is not supported")
    rest = {k: v for k, v in value.items() if k != "allOf"}
    return {**parts[0], **rest}


def _type(value: Any) -> str | list[str]:
    names = value if isinstance(value, list) else [value]
    unknown = [n for n in names if n not in TYPES]
    if unknown or not names:
        raise SchemaUnsupported(f"unknown type {value!r}")
    solid = [n for n in names if n != "null"]
    if len(solid) > 1:
        raise SchemaUnsupported(f"a union of types {value!r} (use anyOf)")
    if len(names) == 1:
        return str(names[0])
    return [*solid, "null"]


def _enum(value: dict[str, Any]) -> list[Any] | None:
    options = [value["const"]] if "const" in value else value.get("enum")
    if options is None:
        return None
    kept = [o for o in options if isinstance(o, str | int | float) and not isinstance(o, bool)]
    return kept or None

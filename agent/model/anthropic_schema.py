"""JSON Schema in the subset Anthropic accepts: the gate in front of every schema sent.

``strict`` (structured outputs' ``output_config.format``): what constrained decoding
supports and nothing else. Kept: ``type`` (a list of types becomes ``anyOf``),
``description``, ``enum`` and ``const`` of scalars, ``properties``, ``required``,
``items``, ``anyOf`` (``oneOf`` is read as ``anyOf``), ``format`` of the listed string
formats and ``minItems`` of 0 or 1. Every object gets ``additionalProperties: false``.
Constraints the API does not enforce (``minimum``, ``maxLength``, ``pattern``...) are
moved into the description, as the SDK's own ``transform_schema`` does: the caller's
pydantic model enforces them on the answer (the gateway's repair turn fixes a miss).
Annotations (``title``, ``default``, ``examples``...) are dropped. Local ``$ref`` is
inlined and a one-part ``allOf`` merged. Anything else — a recursive, remote or dangling
``$ref``, a multi-part ``allOf``, tuple ``items``, a free-form value (``{}``), a map
(``additionalProperties`` with a schema), an unknown type or keyword, a non-scalar
``enum``, a root that is not an object — raises ``SchemaRefused``: fail closed.

Not ``strict`` (a tool's ``input_schema``): the same, except that free-form values and
maps pass and unknown keywords are dropped, as the API accepts any JSON Schema there.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 12
MAX_SCHEMA_CHARS = 32_000
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
STRING_FORMATS = frozenset("date-time time date duration email hostname uri ipv4 ipv6 uuid".split())
# Constraints the API accepts only as words: moved into the description.
CONSTRAINTS = frozenset(
    "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength "
    "pattern maxItems uniqueItems minProperties maxProperties".split()
)
# Annotations with no meaning for the answer's shape: dropped.
ANNOTATIONS = frozenset(
    "title default examples $schema $id $comment deprecated readOnly writeOnly".split()
)
_STRUCTURE = frozenset(
    "type description enum const properties required items anyOf oneOf format minItems "
    "additionalProperties $ref $defs definitions allOf".split()
)


class SchemaRefused(ValueError):
    """The schema has a construct the Anthropic API refuses (or would not enforce)."""


def anthropic_schema(schema: Any, *, strict: bool) -> dict[str, Any]:
    """The converted schema (an object at its root), or ``SchemaRefused``."""
    if not isinstance(schema, dict):
        raise SchemaRefused("the schema is not a JSON object")
    converted = _Converter(schema, strict).node(schema, depth=0, refs=())
    if converted.get("type") != "object":
        raise SchemaRefused("the root of the schema is not an object")
    if len(json.dumps(converted)) > MAX_SCHEMA_CHARS:
        raise SchemaRefused(f"the schema is larger than {MAX_SCHEMA_CHARS} characters")
    return converted


class _Converter:
    def __init__(self, root: dict[str, Any], strict: bool) -> None:
        self.root = root
        self.strict = strict

    def node(self, value: Any, *, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            raise SchemaRefused(f"nested deeper than {MAX_DEPTH} levels")
        if value is True or value == {}:
            if self.strict:
                raise SchemaRefused("a free-form value (an empty schema) is not supported")
            return {}
        if not isinstance(value, dict):
            raise SchemaRefused(f"a schema node is {type(value).__name__}, not an object")
        if "$ref" in value:
            value, ref = self._resolved(value, refs)
            refs = (*refs, ref)
        value = _merged_all_of(value)
        out: dict[str, Any] = {}
        words = self._words(value)
        kinds = _types(value["type"]) if "type" in value else []
        choices = value.get("anyOf", value.get("oneOf"))
        if choices is not None:
            if not isinstance(choices, list) or not choices:
                raise SchemaRefused("anyOf/oneOf is not a non-empty list")
            out["anyOf"] = [self.node(c, depth=depth + 1, refs=refs) for c in choices]
        enum = _enum(value)
        if enum is not None:
            out["enum"] = enum
        elif len(kinds) == 1:
            out["type"] = kinds[0]
        elif kinds:
            if "anyOf" in out:
                raise SchemaRefused("a list of types beside anyOf")
            out["anyOf"] = [self._typed(value, k, depth, refs) for k in kinds]
            kinds = []
        self._shape(value, out, kinds, words, depth, refs)
        if "type" not in out and "anyOf" not in out and "enum" not in out and self.strict:
            raise SchemaRefused("a schema node with no type, anyOf or enum")
        description = value.get("description")
        if words:
            said = ", ".join(f"{k}: {json.dumps(v)}" for k, v in words.items())
            description = f"{description}\n\n{{{said}}}" if description else f"{{{said}}}"
        if description:
            out["description"] = str(description)
        return out

    def _words(self, value: dict[str, Any]) -> dict[str, Any]:
        """The constraints to say in words; an unknown keyword is refused when strict."""
        words: dict[str, Any] = {}
        for key, item in value.items():
            if key in CONSTRAINTS:
                words[key] = item
            elif key not in _STRUCTURE and key not in ANNOTATIONS and self.strict:
                raise SchemaRefused(f"the keyword {key!r} is not supported")
        return words

    def _shape(
        self,
        value: dict[str, Any],
        out: dict[str, Any],
        kinds: list[str],
        words: dict[str, Any],
        depth: int,
        refs: tuple[str, ...],
    ) -> None:
        """What the node's one type adds: properties, items, a string format."""
        if kinds == ["object"] or ("properties" in value and not kinds and "anyOf" not in out):
            self._object(value, out, depth, refs)
        elif kinds == ["array"]:
            self._array(value, out, words, depth, refs)
        elif kinds == ["string"] and "format" in value:
            if value["format"] in STRING_FORMATS:
                out["format"] = value["format"]
            else:
                words["format"] = value["format"]

    def _typed(self, value: dict[str, Any], kind: str, depth: int, refs: tuple[str, ...]) -> Any:
        return self.node({**value, "type": kind, "description": None}, depth=depth + 1, refs=refs)

    def _object(
        self, value: dict[str, Any], out: dict[str, Any], depth: int, refs: tuple[str, ...]
    ) -> None:
        out["type"] = "object"
        properties = value.get("properties", {})
        if not isinstance(properties, dict):
            raise SchemaRefused("properties is not an object")
        out["properties"] = {
            str(k): self.node(v, depth=depth + 1, refs=refs) for k, v in properties.items()
        }
        required = value.get("required", [])
        if not isinstance(required, list) or any(r not in properties for r in required):
            raise SchemaRefused("required names a property that is not declared")
        if required:
            out["required"] = [str(r) for r in required]
        extra = value.get("additionalProperties", False if self.strict else None)
        if isinstance(extra, dict) or extra is True:
            if self.strict:
                raise SchemaRefused("an object with free keys (a map) is not supported")
            out["additionalProperties"] = self.node(extra, depth=depth + 1, refs=refs)
        elif extra is False:
            out["additionalProperties"] = False

    def _array(
        self,
        value: dict[str, Any],
        out: dict[str, Any],
        words: dict[str, Any],
        depth: int,
        refs: tuple[str, ...],
    ) -> None:
        if "prefixItems" in value or isinstance(value.get("items"), list):
            raise SchemaRefused("tuple items (a list of schemas) are not supported")
        if "items" in value:
            out["items"] = self.node(value["items"], depth=depth + 1, refs=refs)
        elif self.strict:
            raise SchemaRefused("an array without items is not supported")
        least = value.get("minItems")
        if least in (0, 1) and not isinstance(least, bool):
            out["minItems"] = least
        elif least is not None:
            words["minItems"] = least

    def _resolved(self, value: dict[str, Any], refs: tuple[str, ...]) -> tuple[dict[str, Any], str]:
        ref = value["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise SchemaRefused(f"a $ref that is not local ({ref!r})")
        if ref in refs:
            raise SchemaRefused(f"a recursive $ref ({ref})")
        target: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or part not in target:
                raise SchemaRefused(f"a $ref to nothing ({ref})")
            target = target[part]
        if not isinstance(target, dict):
            raise SchemaRefused(f"a $ref to a non-schema ({ref})")
        return {**target, **{k: v for k, v in value.items() if k != "$ref"}}, ref


def _merged_all_of(value: dict[str, Any]) -> dict[str, Any]:
    parts = value.get("allOf")
    if parts is None:
        return value
    if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
        raise SchemaRefused("allOf with other than one part is not supported")
    if "$ref" in parts[0]:
        raise SchemaRefused("allOf with a $ref is not supported")
    rest = {k: v for k, v in value.items() if k != "allOf"}
    return {**parts[0], **rest}


def _types(value: Any) -> list[str]:
    names = value if isinstance(value, list) else [value]
    if not names or any(not isinstance(n, str) or n not in TYPES for n in names):
        raise SchemaRefused(f"unknown type {value!r}")
    return list(dict.fromkeys(names))


def _enum(value: dict[str, Any]) -> list[Any] | None:
    options = [value["const"]] if "const" in value else value.get("enum")
    if options is None:
        return None
    if not isinstance(options, list) or not options:
        raise SchemaRefused("enum is not a non-empty list")
    if any(o is not None and not isinstance(o, str | int | float | bool) for o in options):
        raise SchemaRefused("enum holds a value that is not a string, number, boolean or null")
    return list(options)

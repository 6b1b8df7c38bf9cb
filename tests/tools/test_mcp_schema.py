"""MCP input schemas converted to the subset Gemini's declarations accept (or refused)."""

from __future__ import annotations

from typing import Any

import pytest

from tools.mcp.schema import SchemaUnsupported, gemini_schema

OBJ = {"type": "object"}

CONVERTED: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "titles, $schema and additionalProperties dropped",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "args",
            "type": "object",
            "additionalProperties": False,
            "properties": {"q": {"type": "string", "title": "Q", "pattern": "^a"}},
            "required": ["q"],
        },
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    ),
    (
        "local $ref inlined",
        {
            **OBJ,
            "$defs": {"Range": {"type": "object", "properties": {"from": {"type": "string"}}}},
            "properties": {"window": {"$ref": "#/$defs/Range", "description": "when"}},
        },
        {
            **OBJ,
            "properties": {
                "window": {
                    "type": "object",
                    "description": "when",
                    "properties": {"from": {"type": "string"}},
                }
            },
        },
    ),
    (
        "nullable union, const, oneOf and one-part allOf",
        {
            **OBJ,
            "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1},
                "mode": {"const": "fast"},
                "v": {"oneOf": [{"type": "string"}, {"type": "number"}]},
                "w": {"allOf": [{"type": "string", "enum": ["a", "b", True]}]},
            },
        },
        {
            **OBJ,
            "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1},
                "mode": {"enum": ["fast"]},
                "v": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "w": {"type": "string", "enum": ["a", "b"]},
            },
        },
    ),
    ("no parameters", {"type": "object"}, {"type": "object", "properties": {}}),
]

REFUSED: list[tuple[dict[str, Any], str]] = [
    (
        {
            **OBJ,
            "$defs": {"N": {"type": "object", "properties": {"kids": {"$ref": "#/$defs/N"}}}},
            "properties": {"root": {"$ref": "#/$defs/N"}},
        },
        "recursive $ref",
    ),
    ({**OBJ, "properties": {"x": {"$ref": "https://example.com/s.json"}}}, "not local"),
    ({**OBJ, "properties": {"x": {"$ref": "#/$defs/Missing"}}}, "to nothing"),
    ({**OBJ, "properties": {"x": {"allOf": [{"type": "string"}, {"minLength": 2}]}}}, "allOf"),
    ({**OBJ, "properties": {"x": {"type": "array", "items": [{"type": "string"}]}}}, "tuple"),
    ({**OBJ, "properties": {"x": {"type": "bigint"}}}, "unknown type"),
    ({**OBJ, "properties": {"x": {"type": ["string", "integer"]}}}, "union of types"),
    ({"type": "string"}, "not an object"),
    ({**OBJ, "properties": {f"p{i}": {"description": "d" * 200} for i in range(100)}}, "larger"),
]


@pytest.mark.parametrize(("case", "schema", "expected"), CONVERTED, ids=[c[0] for c in CONVERTED])
def test_converted(case: str, schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert gemini_schema(schema) == expected


@pytest.mark.parametrize(("schema", "reason"), REFUSED, ids=[r for _, r in REFUSED])
def test_refused(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaUnsupported, match=reason.replace("$", r"\$")):
        gemini_schema(schema)

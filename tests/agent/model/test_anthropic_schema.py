"""The schema gate: what Anthropic accepts passes (converted), what it refuses is refused.

Every strict conversion is also judged by the fake API's own, independently written rules
(``tests.fakes.anthropic_rules``): the gate's output is what the API would accept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.concluder import Conclusion
from agent.model.anthropic_schema import (
    MAX_DEPTH,
    MAX_SCHEMA_CHARS,
    SchemaRefused,
    anthropic_schema,
)
from agent.planner import PlanDraft
from agent.reflector import Reflection
from agent.review.critic import Critique
from tests.fakes.anthropic_rules import _schema_problem


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    out = anthropic_schema(schema, strict=True)
    assert _schema_problem(out, "schema") is None
    return out


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize("model", [Conclusion, Critique, Reflection, PlanDraft])
def test_the_engines_output_schemas_pass_and_keep_their_fields(model: Any) -> None:
    source = model.model_json_schema()
    out = strict(source)
    assert set(out["properties"]) == set(source["properties"])
    assert out.get("required", []) == source.get("required", [])


def test_critic_ranges_are_said_in_words_and_refs_inlined() -> None:
    out = strict(Critique.model_json_schema())
    score = out["properties"]["score"]
    assert score == {
        "type": "number",
        "description": "overall, 0.0-1.0\n\n{maximum: 1, minimum: 0}",
    }
    criteria = out["properties"]["criteria"]
    assert criteria["type"] == "object" and criteria["additionalProperties"] is False
    assert criteria["properties"]["grounded"] == {
        "type": "number",
        "description": "{maximum: 1, minimum: 0}",
    }
    assert out["additionalProperties"] is False and "$defs" not in out


def test_a_plain_object_is_closed_and_annotations_dropped() -> None:
    out = strict(
        {
            "title": "T",
            "type": "object",
            "properties": {"a": {"type": "string", "title": "A", "default": "x"}},
            "required": ["a"],
        }
    )
    assert out == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }


def test_types_enums_formats_and_items() -> None:
    out = strict(
        obj(
            kind={"type": "string", "enum": ["a", "b"]},
            one={"const": 3},
            maybe={"type": ["string", "null"], "description": "d"},
            when={"type": "string", "format": "date-time"},
            odd={"type": "string", "format": "ipv5", "maxLength": 9},
            few={"type": "array", "items": {"type": "integer"}, "minItems": 1},
            many={"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 5},
            either={"oneOf": [{"type": "string"}, {"type": "null"}]},
            merged={"allOf": [{"type": "boolean"}], "description": "m"},
        )
    )
    p = out["properties"]
    assert p["kind"] == {"enum": ["a", "b"]}
    assert p["one"] == {"enum": [3]}
    assert p["maybe"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["odd"] == {"type": "string", "description": '{maxLength: 9, format: "ipv5"}'}
    assert p["few"] == {"type": "array", "items": {"type": "integer"}, "minItems": 1}
    assert p["many"] == {
        "type": "array",
        "items": {"type": "integer"},
        "description": "{maxItems: 5, minItems: 2}",
    }
    assert p["either"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert p["merged"] == {"type": "boolean", "description": "m"}


def test_min_items_zero_is_kept_and_a_boolean_is_not_a_count() -> None:
    p = strict(
        obj(
            zero={"type": "array", "items": {"type": "string"}, "minItems": 0},
            flag={"type": "array", "items": {"type": "string"}, "minItems": True},
        )
    )["properties"]
    assert p["zero"]["minItems"] == 0
    assert "minItems" not in p["flag"] and p["flag"]["description"] == "{minItems: true}"


def test_properties_without_type_make_an_object() -> None:
    out = strict({"properties": {"a": {"type": "integer"}}})
    assert out["type"] == "object" and out["additionalProperties"] is False


def test_a_ref_with_siblings_keeps_them() -> None:
    schema = {
        "$defs": {"S": {"type": "string"}},
        **obj(a={"$ref": "#/$defs/S", "description": "why"}),
    }
    assert strict(schema)["properties"]["a"] == {"type": "string", "description": "why"}


def test_json_pointer_escapes_in_refs() -> None:
    schema = {"$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "boolean"}}}
    schema.update(obj(x={"$ref": "#/$defs/a~1b"}, y={"$ref": "#/$defs/c~0d"}))
    p = strict(schema)["properties"]
    assert p["x"] == {"type": "integer"} and p["y"] == {"type": "boolean"}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ([], "the schema is not a JSON object"),
        ({"type": "string"}, "the root of the schema is not an object"),
        (obj(a={}), "a free-form value (an empty schema) is not supported"),
        (obj(a=True), "a free-form value"),
        (obj(a=3), "a schema node is int, not an object"),
        (
            obj(a={"type": "object", "additionalProperties": {"type": "string"}}),
            "an object with free keys",
        ),
        (obj(a={"type": "object", "additionalProperties": True}), "an object with free keys"),
        (obj(a={"type": "string", "not": {"const": "x"}}), "the keyword 'not' is not supported"),
        (obj(a={"type": "object", "patternProperties": {}}), "the keyword 'patternProperties'"),
        (obj(a={"type": "strng"}), "unknown type 'strng'"),
        (obj(a={"type": []}), "unknown type"),
        (obj(a={"type": [1]}), "unknown type"),
        (
            obj(a={"enum": [{"x": 1}]}),
            "enum holds a value that is not a string, number, boolean or null",
        ),
        (obj(a={"enum": []}), "enum is not a non-empty list"),
        (obj(a={"enum": "ab"}), "enum is not a non-empty list"),
        (obj(a={"anyOf": []}), "anyOf/oneOf is not a non-empty list"),
        (obj(a={"anyOf": {"type": "string"}}), "anyOf/oneOf is not a non-empty list"),
        (
            obj(a={"type": ["string", "null"], "anyOf": [{"type": "string"}]}),
            "a list of types beside anyOf",
        ),
        (obj(a={"type": "array"}), "an array without items is not supported"),
        (
            obj(a={"type": "array", "items": [{"type": "string"}]}),
            "tuple items (a list of schemas) are not supported",
        ),
        (
            obj(a={"type": "array", "prefixItems": [], "items": {"type": "string"}}),
            "the keyword 'prefixItems'",
        ),
        (obj(a={"description": "what"}), "a schema node with no type, anyOf or enum"),
        (
            obj(a={"allOf": [{"type": "string"}, {"type": "null"}]}),
            "allOf with other than one part is not supported",
        ),
        (obj(a={"allOf": "x"}), "allOf with other than one part is not supported"),
        (obj(a={"allOf": [1]}), "allOf with other than one part is not supported"),
        (obj(a={"allOf": [{"$ref": "#/$defs/X"}]}), "allOf with a $ref is not supported"),
        (obj(a={"$ref": "https://example.com/s.json"}), "a $ref that is not local"),
        (obj(a={"$ref": 5}), "a $ref that is not local"),
        (obj(a={"$ref": "#/$defs/Missing"}), "a $ref to nothing"),
        ({"$defs": {"X": 3}, **obj(a={"$ref": "#/$defs/X"})}, "a $ref to a non-schema"),
        ({"$defs": "X", **obj(a={"$ref": "#/$defs/X"})}, "a $ref to nothing"),
        (
            {"$defs": {"N": obj(next={"$ref": "#/$defs/N"})}, **obj(a={"$ref": "#/$defs/N"})},
            "a recursive $ref (#/$defs/N)",
        ),
        (
            {**obj(a={"type": "string"}), "required": ["b"]},
            "required names a property that is not declared",
        ),
        (
            {**obj(a={"type": "string"}), "required": "a"},
            "required names a property that is not declared",
        ),
        ({"type": "object", "properties": []}, "properties is not an object"),
    ],
)
def test_what_the_api_refuses_is_refused(schema: Any, problem: str) -> None:
    with pytest.raises(SchemaRefused) as caught:
        anthropic_schema(schema, strict=True)
    assert str(caught.value).startswith(problem)


def test_too_deep_and_too_large_are_refused() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH + 1):
        deep = obj(a=deep)
    with pytest.raises(SchemaRefused, match="deeper"):
        anthropic_schema(deep, strict=True)
    at_limit: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH):
        at_limit = obj(a=at_limit)
    strict(at_limit)
    big = obj(**{f"f{i}": {"type": "string", "description": "x" * 100} for i in range(400)})
    with pytest.raises(SchemaRefused, match="larger"):
        anthropic_schema(big, strict=True)


def test_tool_input_schemas_keep_what_the_api_accepts_there() -> None:
    schema = obj(
        filters={"type": "object", "additionalProperties": {"type": "string"}},
        anything={},
        extra={"type": "string", "pattern": "^a", "x-vendor": 1},
    )
    out = anthropic_schema(schema, strict=False)
    p = out["properties"]
    assert p["filters"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": {"type": "string"},
    }
    assert p["anything"] == {}
    assert p["extra"] == {"type": "string", "description": '{pattern: "^a"}'}
    assert "additionalProperties" not in out  # open, as declared
    closed = anthropic_schema(
        {**obj(a={"type": "string"}), "additionalProperties": False}, strict=False
    )
    assert closed["additionalProperties"] is False
    assert anthropic_schema({"type": "object"}, strict=False) == {
        "type": "object",
        "properties": {},
    }
    assert anthropic_schema(obj(a={"description": "d"}), strict=False)["properties"]["a"] == {
        "description": "d"
    }


def nest(leaf: dict[str, Any], wrap: Any, times: int) -> dict[str, Any]:
    for _ in range(times):
        leaf = wrap(leaf)
    return obj(a=leaf)


@pytest.mark.parametrize(
    ("wrap", "is_strict", "levels"),
    [
        (lambda s: {"type": "array", "items": s}, True, 1),
        (lambda s: {"anyOf": [s, {"type": "null"}]}, True, 1),
        (lambda s: {"type": ["object", "null"], "properties": {"a": s}}, True, 2),
        (lambda s: {"type": "object", "additionalProperties": s}, False, 1),
    ],
)
def test_depth_is_counted_through_every_kind_of_child(
    wrap: Any, is_strict: bool, levels: int
) -> None:
    leaf = {"type": "string"}
    most = (MAX_DEPTH - 1) // levels  # the leaf sits at 1 + levels x wraps
    anthropic_schema(nest(leaf, wrap, most), strict=is_strict)
    with pytest.raises(SchemaRefused, match="deeper"):
        anthropic_schema(nest(leaf, wrap, most + 1), strict=is_strict)


@pytest.mark.parametrize(
    "node",
    [
        {"type": ["object", "null"], "properties": {"n": {"$ref": "#/$defs/N"}}},
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/N"}},
    ],
)
def test_recursion_is_found_through_type_lists_and_maps(node: dict[str, Any]) -> None:
    schema = {"$defs": {"N": node}, **obj(a={"$ref": "#/$defs/N"})}
    with pytest.raises(SchemaRefused, match="recursive"):
        anthropic_schema(schema, strict=False)


def test_any_of_with_properties_is_not_made_an_object() -> None:
    node = {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "properties": {"x": {"type": "string"}},
    }
    assert strict(obj(a=node))["properties"]["a"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}]
    }


def test_the_size_limit_is_inclusive() -> None:
    def sized(n: int) -> dict[str, Any]:
        return obj(a={"type": "string", "description": "x" * n})

    base = len(json.dumps(anthropic_schema(sized(1), strict=True)))
    exact = sized(1 + MAX_SCHEMA_CHARS - base)
    assert len(json.dumps(anthropic_schema(exact, strict=True))) == MAX_SCHEMA_CHARS
    with pytest.raises(SchemaRefused, match="larger"):
        anthropic_schema(sized(2 + MAX_SCHEMA_CHARS - base), strict=True)


def test_tuples_are_refused_for_tools_too() -> None:
    tuple_ = obj(
        a={"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "string"}}
    )
    with pytest.raises(SchemaRefused, match="tuple items"):
        anthropic_schema(tuple_, strict=False)

"""``SOCBOT_*`` variables checked one by one before the settings are built.

pydantic-settings reports a list or dict variable that is not JSON as a traceback that
names neither the variable nor the fix, and silently ignores a misspelled section
(``SOCBOT_LIMTS__MAX_STEPS``). ``check_environment`` instead raises ``EnvError`` with one
line naming the variable, what it expected and an example::

    SOCBOT_SLACK__ALERT_CHANNELS must be a JSON list, e.g. '["C0ALERTS01"]'
"""

from __future__ import annotations

import difflib
import json
import os
import types
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

PREFIX = "SOCBOT_"
NESTED = "__"
# SOCBOT_ variables that are not a setting's path (read elsewhere).
OTHER_VARIABLES = frozenset({"SOCBOT_CONFIG", "SOCBOT_BENCH_RESULTS"})
_GENERIC_EXAMPLES: dict[type, Any] = {list: ["value"], dict: {"key": "value"}}


class EnvError(ValueError):
    """A ``SOCBOT_*`` variable that cannot be a setting; the message is one line."""


def check_environment(
    root: type[BaseModel],
    environ: Mapping[str, str] | None = None,
    also_known: Iterable[str] = (),
) -> None:
    """Raise ``EnvError`` for the first ``SOCBOT_*`` variable of ``environ`` (default: the
    process's) that names no setting of ``root`` or holds a value the setting refuses."""
    environ = os.environ if environ is None else environ
    known = OTHER_VARIABLES | {name.upper() for name in also_known}
    for name in sorted(environ):
        upper = name.upper()
        if upper.startswith(PREFIX) and upper not in known:
            _check_variable(root, upper, environ[name])


def _check_variable(root: type[BaseModel], name: str, value: str) -> None:
    model: type[BaseModel] = root
    path = name[len(PREFIX) :].lower().split(NESTED)
    for depth, part in enumerate(path):
        field = model.model_fields.get(part)
        if field is None:
            raise EnvError(_unknown(name, path, depth, list(model.model_fields)))
        inner = _model_of(field.annotation)
        if depth == len(path) - 1:
            _check_value(name, field, value)
        elif inner is None:
            if _shape(field.annotation) is dict:  # SOCBOT_A__B__KEY: a key of a dict setting
                return
            raise EnvError(f"{name}: {'.'.join(path[: depth + 1])} has no parts to set")
        else:
            model = inner


def _unknown(name: str, path: list[str], depth: int, known: list[str]) -> str:
    """``... names no setting``, with the variable it likely meant (the closest name)."""
    where = "section" if depth == 0 and len(path) > 1 else "setting"
    text = f"{name} names no setting: {'.'.join(path[: depth + 1])} is not a known {where}"
    close = difflib.get_close_matches(path[depth], known, n=1, cutoff=0.6)
    if close:
        meant = NESTED.join([*path[:depth], close[0], *path[depth + 1 :]]).upper()
        text += f"; did you mean {PREFIX}{meant}?"
    return text


def _check_value(name: str, field: FieldInfo, value: str) -> None:
    shape = _shape(field.annotation)
    if shape is not None:  # lists, dicts, sections: JSON, as pydantic-settings reads them
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, shape):
            raise EnvError(f"{name} must be a JSON {_noun(shape)}, e.g. {_example(field, shape)}")
        value_to_check: Any = parsed
    else:
        value_to_check = value
    try:
        annotation: Any = field.annotation
        if field.metadata:  # the field's constraints (ge=1, gt=0, ...)
            annotation = Annotated[annotation, *field.metadata]
        TypeAdapter(annotation).validate_python(value_to_check)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        message = str(error["msg"]).removeprefix("Value error, ")
        inside = ".".join(str(part) for part in error["loc"])
        name = f"{name} ({inside})" if inside else name
        reason = (
            "must be " + message.removeprefix("Input should be ")
            if message.startswith("Input should be ")
            else f"is not valid: {message}"
        )
        raise EnvError(f"{name} {reason}, e.g. {_example(field, shape)}") from None


def _shape(annotation: Any) -> type | None:
    """``list``, ``dict`` or ``dict`` (a section) when the setting is read as JSON."""
    for arm in _arms(annotation):
        origin = get_origin(arm) or arm
        if origin in (list, tuple, set, frozenset):
            return list
        if origin is dict or _model_of(arm) is not None:
            return dict
    return None


def _model_of(annotation: Any) -> type[BaseModel] | None:
    for arm in _arms(annotation):
        if isinstance(arm, type) and issubclass(arm, BaseModel):
            return arm
    return None


def _arms(annotation: Any) -> list[Any]:
    if get_origin(annotation) in (Union, types.UnionType):
        return [arm for arm in get_args(annotation) if arm is not type(None)]
    return [annotation]


def _noun(shape: type) -> str:
    return "list" if shape is list else "object"


def _example(field: FieldInfo, shape: type | None) -> str:
    """The field's first example, else its default when it shows the form, else a value
    of its shape; as one would type it in a shell (single-quoted JSON)."""
    default = field.get_default(call_default_factory=True)
    if field.examples:
        example = field.examples[0]
    elif default not in (None, [], {}) and not isinstance(default, SecretStr | BaseModel):
        example = default
    else:
        example = _made_up(field.annotation, shape)
    example = to_jsonable_python(example)
    if isinstance(example, dict) and len(example) > 1:
        example = dict(list(example.items())[:1])  # one entry shows the form
    if shape is not None:
        return f"'{json.dumps(example, ensure_ascii=False)}'"
    if isinstance(example, bool):
        return str(example).lower()
    return str(example) if example != "" else "''"


def _made_up(annotation: Any, shape: type | None) -> Any:
    """A section's first setting with its default; a list of sections' required fields."""
    model = _model_of(annotation)
    if model is not None:
        name, field = next(iter(model.model_fields.items()))
        return {name: field.get_default(call_default_factory=True)}
    if shape is list:
        items = [a for arm in _arms(annotation) for a in get_args(arm)]
        item_model = _model_of(items[0]) if items else None
        if item_model is not None:
            required = [n for n, f in item_model.model_fields.items() if f.is_required()]
            return [dict.fromkeys(required, "…")]
    return _GENERIC_EXAMPLES[shape] if shape is not None else "…"
